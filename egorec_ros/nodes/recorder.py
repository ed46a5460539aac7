"""``ros2 run egorec_ros recorder --ros-args -p rig:=appendix_b``: the recorder node over rclpy.

Subscribes every topic of the rig (raw CDR, best effort by default so it matches reliable and
best-effort publishers), serves ``~/start``, ``~/stop``, ``~/abort``, publishes ``~/status``
and ``/diagnostics``; Ctrl-C or SIGTERM commits the running episode. The logic is
``egorec_ros.live.node.RecorderNode``, shared with ``egorec recorder`` over plain DDS.
"""
from __future__ import annotations

from rclpy.node import Node

from egorec_ros.nodes.params import RECORDER_DEFAULTS, declare, recorder_config, rig_param
from egorec_ros.nodes.spin import init, spin_until_stopped, user_errors_end_the_node
from egorec_ros.nodes.transport import RclpyTransport
from egorec_ros.live.node import RecorderNode


def main(args: list[str] | None = None) -> None:
    stop = init(args)
    with user_errors_end_the_node("egorec_ros recorder"):
        node = Node("egorec_recorder")
        params = declare(node, RECORDER_DEFAULTS)
        rig = rig_param(params["rig"], params["size"])
        config = recorder_config(node, params, rig)
        transport = RclpyTransport(node)
        recorder = RecorderNode(rig, transport, config, log=node.get_logger().info)
        node.get_logger().info(f"rig {rig.name}: {len(recorder.live.topics)} topics; episodes go to "
                               f"{config.out / recorder.task}; call {config.name}/start")

        def on_stop() -> None:
            try:
                recorder.close()
            finally:
                transport.close()

        spin_until_stopped(node, stop, on_stop)


if __name__ == "__main__":
    main()
