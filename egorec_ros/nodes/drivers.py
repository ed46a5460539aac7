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
from egorec_ros.nodes.spin import init, spin_until_stopped, user_errors_end_the_node
from egorec_ros.nodes.transport import RclpyTransport


def main(args: list[str] | None = None) -> None:
    stop = init(args)
    with user_errors_end_the_node("egorec_ros drivers"):
        node = Node("egorec_drivers")
        params = declare(node, DRIVERS_DEFAULTS)
        rig = rig_param(params["rig"])
        plan = driver_plan.plan_here(rig, params["devices"], discover=params["discover"])
        idle = driver_plan.nothing_to_drive(rig, plan)
        if idle:
            node.get_logger().info(idle)
            node.destroy_node()
            rclpy.try_shutdown()
            return
        drivers = DriversNode(rig, RclpyTransport(node), plan, name=node.get_name(), log=node.get_logger().info)
        drivers.start()
        spin_until_stopped(node, stop, drivers.close)


if __name__ == "__main__":
    main()
