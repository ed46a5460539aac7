"""Spin a node until Ctrl-C or SIGTERM (what ``ros2 launch`` sends), then run a clean-up."""
from __future__ import annotations

import signal
import threading
from typing import Callable

import rclpy
from rclpy.executors import ExternalShutdownException, MultiThreadedExecutor
from rclpy.node import Node


def spin_until_stopped(node: Node, on_stop: Callable[[], None], threads: int = 4) -> None:
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    executor = MultiThreadedExecutor(num_threads=threads)
    executor.add_node(node)
    try:
        while rclpy.ok() and not stop.is_set():
            executor.spin_once(timeout_sec=0.1)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        on_stop()
        executor.shutdown()
        node.destroy_node()
        rclpy.try_shutdown()
