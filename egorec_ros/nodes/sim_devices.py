"""``ros2 run egorec_ros sim_devices --ros-args -p rig:=appendix_b``: every stream of a rig from
simulated devices, published with host-clock stamps and the message types real drivers use.
``-p size:=auto``: at the size ``egorec demo`` would choose (the recorder must be given the same)."""
from __future__ import annotations

from rclpy.node import Node

from egorec_ros.cli import sim_size
from egorec_ros.cli.sim_devices_cmd import behind_line
from egorec_ros.nodes.params import declare, rig_param
from egorec_ros.nodes.spin import init, spin_until_stopped, user_errors_end_the_node
from egorec_ros.nodes.transport import RclpyTransport
from egorec_ros.sim.flaws import CLEAN, DEFAULT
from egorec_ros.live.sim_publish import SimPublisher
from egorec_ros.transport.base import qos_from


def main(args: list[str] | None = None) -> None:
    stop = init(args)
    with user_errors_end_the_node("egorec_ros sim_devices"):
        node = Node("egorec_sim_devices")
        params = declare(node, {"rig": "", "size": "", "seed": 0, "clean": False, "qos": "sensor_data"})
        size = str(params["size"])
        if size == sim_size.AUTO:   # as `egorec demo`: the largest size this machine simulates and encodes
            size, why = sim_size.choose(params["rig"])
            for line in why:
                node.get_logger().warning(line)
        rig = rig_param(params["rig"], size)
        publisher = SimPublisher(rig, RclpyTransport(node), qos=qos_from(params["qos"]), seed=int(params["seed"]),
                                 flaws=CLEAN if params["clean"] else DEFAULT)
        publisher.start()
        reported: dict[str, int] = {}

        def report_behind() -> None:   # while it runs, not only at the end
            behind = publisher.behind
            if behind != reported:
                reported.clear()
                reported.update(behind)
                node.get_logger().warning(behind_line(behind))
        node.create_timer(5.0, report_behind)
        node.get_logger().info(f"publishing {len(rig.streams)} streams of rig {rig.name}")
        spin_until_stopped(node, stop, publisher.stop)
        if publisher.behind:
            print(behind_line(publisher.behind), flush=True)


if __name__ == "__main__":
    main()
