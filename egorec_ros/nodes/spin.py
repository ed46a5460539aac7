"""Start rclpy and spin a node until Ctrl-C or SIGTERM (what ``ros2 launch`` sends), then run a
clean-up while the node can still publish.

rclpy's own SIGINT handler shuts the context down at once: the recorder's final commit could
then not publish its status, and the simulated devices' threads died on "publisher's context is
invalid". So rclpy is started without signal handlers and SIGINT/SIGTERM only ask the loop to stop.
"""
from __future__ import annotations

import signal
import threading
from typing import Callable

import rclpy
from rclpy.executors import ExternalShutdownException, MultiThreadedExecutor
from rclpy.node import Node
from rclpy.signals import SignalHandlerOptions


def init(args: list[str] | None) -> threading.Event:
    """``rclpy.init`` without rclpy's signal handlers; the event is set by SIGINT or SIGTERM."""
    rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    return stop


def spin_until_stopped(node: Node, stop: threading.Event, on_stop: Callable[[], None], threads: int = 4) -> None:
    executor = MultiThreadedExecutor(num_threads=threads)
    executor.add_node(node)
    try:
        while rclpy.ok() and not stop.is_set():
            executor.spin_once(timeout_sec=0.1)
    except ExternalShutdownException:
        pass
    finally:
        try:
            on_stop()
        finally:
            executor.shutdown()
            node.destroy_node()
            rclpy.try_shutdown()
