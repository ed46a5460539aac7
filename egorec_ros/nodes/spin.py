"""Start rclpy and spin a node until Ctrl-C or SIGTERM (what ``ros2 launch`` sends), then run a
clean-up while the node can still publish.

rclpy's own SIGINT handler shuts the context down at once: the recorder's final commit could
then not publish its status, and the simulated devices' threads died on "publisher's context is
invalid". So rclpy is started without signal handlers and SIGINT/SIGTERM only ask the loop to stop.
"""
from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Callable

import rclpy
from rclpy.executors import Executor, ExternalShutdownException, MultiThreadedExecutor
from rclpy.node import Node
from rclpy.signals import SignalHandlerOptions

from egorec_ros.errors import UserError


def init(args: list[str] | None) -> threading.Event:
    """``rclpy.init`` without rclpy's signal handlers; the event is set by SIGINT or SIGTERM."""
    rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    return stop


@contextmanager
def user_errors_end_the_node(program: str) -> Iterator[None]:
    """A mistake the user can fix (an unknown rig, a bad size or device place, a full disk)
    ends the node with its message and exit status 1, as the egorec CLI does: no traceback."""
    try:
        yield
    except UserError as exc:
        print(f"{program}: {exc}", file=sys.stderr, flush=True)
        rclpy.try_shutdown()
        raise SystemExit(1) from None


def shutdown_executor(executor: Executor, timeout_s: float = 120.0) -> None:
    """Stop ``executor`` and wait for the callbacks it is running (a service reply still being sent),
    so the node can be destroyed without losing it. Humble's ``Executor.shutdown`` waits for them;
    Jazzy's rclpy 7.1.x returns at once (it tests the shutdown flag it has just set), and a stop
    committing when Ctrl-C came lost its reply (found on Jazzy: the caller waited out its timeout).
    So wait on the executor's own work tracker as Humble's shutdown does (a private attribute: a
    version without it is left to its own shutdown)."""
    executor.shutdown(timeout_sec=timeout_s)
    tracker = getattr(executor, "_work_tracker", None)
    wait = getattr(tracker, "wait", None)
    if callable(wait):
        wait(timeout_s)


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
            shutdown_executor(executor)
            node.destroy_node()
            rclpy.try_shutdown()
