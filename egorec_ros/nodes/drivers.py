"""``ros2 run egorec_ros drivers --ros-args -p rig:=RIG -p devices:="['left_glove=/dev/ttyACM0']"``: the
device drivers of a rig over rclpy.

Publishes each driver's messages on the rig's topics and their health on ``/diagnostics``;
Ctrl-C or SIGTERM stops the drivers (and the SDK / SLAM processes they started). The logic is
``egorec_ros.live.drivers_node.DriversNode``, shared with ``egorec drivers`` over plain DDS.
"""
from __future__ import annotations

import rclpy
from rclpy.node import Node

from egorec_ros.live import driver_plan
from egorec_ros.live.drivers_node import DriversNode
from egorec_ros.nodes.params import DRIVERS_DEFAULTS, declare, rig_param
from egorec_ros.nodes.spin import init, spin_until_stopped
from egorec_ros.nodes.transport import RclpyTransport


def main(args: list[str] | None = None) -> None:
    stop = init(args)
    node = Node("egorec_drivers")
    params = declare(node, DRIVERS_DEFAULTS)
    rig = rig_param(params["rig"])
    found = driver_plan.plugged() if params["discover"] else []
    plan = driver_plan.plan(rig, driver_plan.parse_places(params["devices"]), found,
                            ble_adapter=driver_plan.ble_adapter_present())
    if not plan.starts and not plan.missing:
        node.get_logger().info(f"rig {rig.name} has no device egorec drives"
                               + "".join(f"; {dev} is driven by {who}" for dev, who in plan.upstream))
        node.destroy_node()
        rclpy.try_shutdown()
        return
    drivers = DriversNode(rig, RclpyTransport(node), plan, name=node.get_name(), log=node.get_logger().info)
    drivers.start()
    spin_until_stopped(node, stop, drivers.close)


if __name__ == "__main__":
    main()
