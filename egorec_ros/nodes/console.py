"""``ros2 run egorec_ros console --ros-args -p out:=/data -p recorder:=egorec_recorder``: the operator's
web console over rclpy (``egorec console`` is the same over plain DDS). The node is spun on a thread
of its own; the web server runs in the main thread until Ctrl-C or SIGTERM (``ros2 launch``), which
end it quietly with status 0, as ``egorec console``."""
from __future__ import annotations

import signal
import threading
from pathlib import Path

import rclpy
from rclpy.executors import MultiThreadedExecutor
from rclpy.node import Node
from rclpy.signals import SignalHandlerOptions

from egorec_ros.console.server import serve
from egorec_ros.nodes.spin import shutdown_executor, user_errors_end_the_node
from egorec_ros.nodes.transport import RclpyTransport


def main(args: list[str] | None = None) -> None:
    # The web server owns the signals: it stops on SIGINT/SIGTERM, then raises the signal again for the
    # handler it found. rclpy's would shut the context down under the running link; Python's SIGTERM
    # default would end the process before the clean-up below. Both end as a KeyboardInterrupt instead.
    rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    with user_errors_end_the_node("egorec_ros console"):
        node = Node("egorec_console")
        name = str(node.declare_parameter("recorder", "egorec_recorder").value)
        out = Path(str(node.declare_parameter("out", "egorec_data").value))
        host = str(node.declare_parameter("host", "127.0.0.1").value)
        port = int(node.declare_parameter("port", 8765).value)
        transport = RclpyTransport(node)
        executor = MultiThreadedExecutor(num_threads=2)
        executor.add_node(node)
        spinner = threading.Thread(target=executor.spin, name="egorec-console-spin", daemon=True)
        spinner.start()
        try:
            serve(transport, name, out, host, port)
        except KeyboardInterrupt:
            pass
        finally:
            transport.close()
            shutdown_executor(executor, timeout_s=30.0)
            node.destroy_node()
            rclpy.try_shutdown()


if __name__ == "__main__":
    main()
