"""RclpyTransport in-process (skipped without a sourced ROS 2): a slow callback does not cost
samples, because the executor only queues them (keep-last histories are not overwritten); a
service call being answered when the service is closed (Ctrl-C during a stop) still gets its reply."""
from __future__ import annotations

import threading
import time

import pytest

from egorec_ros.transport.base import DEFAULT, QoS
from helpers import ros2
from helpers.dds_domains import domain_for
from helpers.polling import until

rclpy = pytest.importorskip("rclpy", reason="rclpy is not importable: source /opt/ros/<distro>/setup.bash")


@pytest.fixture(autouse=True)
def loopback(monkeypatch):
    for key, value in ros2.rmw_env(domain_for(__name__)).items():
        monkeypatch.setenv(key, value)


def _spun_node(name: str):
    from rclpy.executors import MultiThreadedExecutor
    from rclpy.node import Node

    context = rclpy.context.Context()
    rclpy.init(context=context)
    node = Node(name, context=context)
    executor = MultiThreadedExecutor(num_threads=2, context=context)
    executor.add_node(node)
    threading.Thread(target=executor.spin, daemon=True).start()
    return context, node, executor


def _stop(context, node, executor):
    """As the nodes end (egorec_ros.nodes.spin): the executor stopped, its running callbacks waited for."""
    from egorec_ros.nodes.spin import shutdown_executor
    shutdown_executor(executor, timeout_s=30.0)
    node.destroy_node()
    rclpy.shutdown(context=context)


def test_a_reply_in_progress_survives_closing_the_service():
    """As RecorderNode.close() on Ctrl-C: the service is closed while its handler runs (a stop
    committing); then the executor shuts down. The caller still gets the reply."""
    from rclpy.serialization import serialize_message
    from std_srvs.srv import Trigger

    from egorec_ros.nodes.transport import RclpyTransport

    entered, release = threading.Event(), threading.Event()

    def handler(_request: bytes) -> bytes:
        entered.set()
        release.wait(30)
        time.sleep(0.5)       # the commit's last steps, after the node was told to stop
        return serialize_message(Trigger.Response(success=True, message="committed"))

    server, client = _spun_node("t8_server"), _spun_node("t8_client")
    try:
        handle = RclpyTransport(server[1]).serve("/t8/stop", "std_srvs/srv/Trigger", handler)
        cli = client[1].create_client(Trigger, "/t8/stop")
        assert cli.wait_for_service(timeout_sec=10)
        future = cli.call_async(Trigger.Request())
        assert entered.wait(10)
        handle.close()
        release.set()
        _stop(*server)
        assert until(future.done), "the reply was lost"
        assert future.result().message == "committed"
    finally:
        release.set()
        _stop(*client)


def test_a_slow_callback_does_not_cost_samples(monkeypatch):
    # however long a loaded machine takes for this, no sample goes stale (tested in the unit test)
    monkeypatch.setattr("egorec_ros.nodes.transport.STALE_NS", 600_000_000_000)
    from rclpy.executors import MultiThreadedExecutor
    from rclpy.node import Node
    from std_msgs.msg import String
    from rclpy.serialization import deserialize_message, serialize_message

    from egorec_ros.nodes.transport import RclpyTransport

    release, got = threading.Event(), []

    def slow(cdr, _arrival):
        release.wait(30)
        got.append(deserialize_message(cdr, String).data)

    context = rclpy.context.Context()
    rclpy.init(context=context)
    node = Node("t8_slow", context=context)
    executor = MultiThreadedExecutor(num_threads=2, context=context)
    executor.add_node(node)
    spin = threading.Thread(target=executor.spin, daemon=True)
    spin.start()
    tr = RclpyTransport(node)
    try:
        tr.subscribe("/t8/slow", "std_msgs/msg/String", QoS("reliable", 3, "volatile"), slow)
        pub = tr.publisher("/t8/slow", "std_msgs/msg/String", DEFAULT)
        assert until(lambda: pub._pub.get_subscription_count() == 1)
        for i in range(0, 30, 2):
            for j in (i, i + 1):
                pub.publish(serialize_message(String(data=str(j))))
            # the first sample sits in the blocked callback, the rest wait in the queue
            assert until(lambda i=i: tr.pending() == i + 1), (i, tr.pending())
        release.set()
        assert until(lambda: len(got) == 30)
    finally:
        release.set()
        tr.close()
        executor.shutdown()
        node.destroy_node()
        rclpy.shutdown(context=context)
    assert got == [str(i) for i in range(30)]


def _drained(name: str, messages: int, counts: list[int]) -> list[list[str]]:
    """Publish ``messages`` reliable Strings to a subscription of a node spun by hand, then run one
    executor wait cycle per entry of ``counts``: what the callbacks had delivered once the count
    delivered so far reached that entry (or after 10 s, when it did not)."""
    from rclpy.duration import Duration
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.node import Node
    from rclpy.serialization import deserialize_message, serialize_message
    from std_msgs.msg import String

    from egorec_ros.nodes.transport import RclpyTransport

    got: list[str] = []
    context = rclpy.context.Context()
    rclpy.init(context=context)
    node = Node(name, context=context)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    tr = RclpyTransport(node)
    qos = QoS("reliable", messages, "volatile")
    try:
        tr.subscribe(f"/{name}", "std_msgs/msg/String", qos,
                     lambda cdr, _arrival: got.append(deserialize_message(cdr, String).data))
        pub = tr.publisher(f"/{name}", "std_msgs/msg/String", qos)
        assert until(lambda: pub._pub.get_subscription_count() == 1)
        for i in range(messages):
            pub.publish(serialize_message(String(data=str(i))))
        assert pub._pub.wait_for_all_acked(Duration(seconds=10)), f"the reader did not get the {messages} messages"
        after = []
        for count in counts:
            executor.spin_once(timeout_sec=5)            # one wait cycle, one subscription callback
            until(lambda count=count: len(got) == count)     # (the callback queue hands them on in its thread)
            after.append(list(got))
        return after
    finally:
        tr.close()
        executor.shutdown()
        node.destroy_node()
        rclpy.shutdown(context=context)


def test_one_callback_takes_everything_waiting(monkeypatch):
    """rclpy's executor takes one message per subscription per wait cycle: a topic faster than
    the cycle rate (an IMU beside many cameras) overflowed its keep-last history. The transport's
    callback takes the rest of what waits, in order."""
    monkeypatch.setattr("egorec_ros.nodes.transport.STALE_NS", 600_000_000_000)
    (after_one,) = _drained("t8_drain", 50, [50])
    assert after_one == [str(i) for i in range(50)], f"one callback took {len(after_one)} of the 50 waiting"


def test_one_callback_takes_at_most_the_drain_limit_and_the_rest_follow_in_order(monkeypatch):
    """A callback takes at most ``_DRAIN_MAX`` more (the executor's other work goes on); the rest
    come with the next callbacks, in order."""
    monkeypatch.setattr("egorec_ros.nodes.transport.STALE_NS", 600_000_000_000)
    monkeypatch.setattr("egorec_ros.nodes.transport._DRAIN_MAX", 40)
    after = _drained("t8_limit", 100, [41, 82, 100])
    assert [len(a) for a in after] == [41, 82, 100], "each callback: the executor's message + at most 40 drained"
    assert after[-1] == [str(i) for i in range(100)]
