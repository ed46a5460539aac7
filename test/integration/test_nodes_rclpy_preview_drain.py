"""RclpyTransport in-process (skipped without a sourced ROS 2), the parts the console and the recorder
lean on that test_nodes_rclpy_transport.py does not cover:

* the preview topics over rclpy: nothing encoded or sent while nobody subscribes (the publisher's
  ``get_subscription_count``), a JPEG with the frame's own stamp to an ordinary rclpy subscriber,
  and nothing again once it leaves;
* the drain (``handle.take_message``; its limit per callback is tested in test_nodes_rclpy_transport.py):
  a callback that runs after its subscription was destroyed (the executor takes, then calls outside
  its hold on the handle) takes nothing instead of raising into the executor."""
from __future__ import annotations

import io
import threading
import time

import numpy as np
import pytest

from egorec_ros.transport.base import QoS
from helpers import ros2
from helpers.dds_domains import domain_for
from helpers.polling import until

rclpy = pytest.importorskip("rclpy", reason="rclpy is not importable: source /opt/ros/<distro>/setup.bash")


@pytest.fixture(autouse=True)
def loopback(monkeypatch):
    for key, value in ros2.rmw_env(domain_for(__name__)).items():
        monkeypatch.setenv(key, value)
    monkeypatch.setattr("egorec_ros.nodes.transport.STALE_NS", 600_000_000_000)   # a loaded machine is slow


@pytest.fixture
def node():
    from rclpy.executors import MultiThreadedExecutor
    from rclpy.node import Node

    from egorec_ros.nodes.spin import shutdown_executor

    context = rclpy.context.Context()
    rclpy.init(context=context)
    n = Node("t9_node", context=context)
    executor = MultiThreadedExecutor(num_threads=2, context=context)
    executor.add_node(n)
    threading.Thread(target=executor.spin, daemon=True).start()
    yield n
    shutdown_executor(executor, timeout_s=30.0)
    n.destroy_node()
    rclpy.shutdown(context=context)


def test_previews_over_rclpy_only_while_subscribed(node):
    from PIL import Image
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from sensor_msgs.msg import CompressedImage

    from egorec_ros.assembly.sample import Sample
    from egorec_ros.live.preview import Previews, preview_topic
    from egorec_ros.nodes.transport import RclpyTransport
    from egorec_ros.rig.load import load_rig

    transport = RclpyTransport(node)
    previews = Previews(load_rig("uvc_pair"), transport, "/t9_rec", hz=20.0)
    try:
        assert set(previews.topics) == {"cam0.rgb", "cam1.rgb"}
        frame = np.zeros((480, 640, 3), np.uint8)
        frame[:, :320] = (30, 200, 30)
        previews.offer(Sample("cam0.rgb", 1_700_000_000_123_456_789, 1_700_000_000_200_000_000, frame))
        time.sleep(0.5)
        assert previews.published == 0, "nothing may be encoded or sent while nobody subscribes"

        got: list = []
        sub = node.create_subscription(CompressedImage, preview_topic("/t9_rec", "cam0.rgb"), got.append,
                                       QoSProfile(depth=1, reliability=ReliabilityPolicy.BEST_EFFORT))
        assert until(lambda: got), "no preview reached an rclpy subscriber"
        msg = got[0]
        assert msg.format == "jpeg" and msg.header.frame_id == "cam0.rgb"
        assert msg.header.stamp.sec * 10**9 + msg.header.stamp.nanosec == 1_700_000_000_123_456_789
        img = np.asarray(Image.open(io.BytesIO(bytes(msg.data))).convert("RGB"))
        assert img.shape == (240, 320, 3)
        assert abs(int(img[10, 10, 1]) - 200) < 20 and img[10, -10].max() < 20
        assert previews.published == 1, "an unchanged frame is not sent again"

        node.destroy_subscription(sub)
        assert until(lambda: previews._pubs["cam0.rgb"].subscription_count() == 0)
        sent = previews.published
        previews.offer(Sample("cam0.rgb", 1_700_000_001_000_000_000, 1_700_000_001_000_000_000, frame))
        time.sleep(0.5)
        assert previews.published == sent, "the subscriber left: nothing is encoded any more"
    finally:
        previews.close()
        transport.close()


def test_a_callback_after_its_subscription_was_destroyed_takes_nothing(node):
    from rclpy.serialization import serialize_message
    from std_msgs.msg import String

    from egorec_ros.nodes.transport import RclpyTransport, _drain
    from egorec_ros.transport.callback_queue import CallbackQueue, Target

    got: list[bytes] = []
    tr = RclpyTransport(node)
    handle = tr.subscribe("/t9/gone", "std_msgs/msg/String", QoS("reliable", 10, "volatile"),
                          lambda cdr, _arrival: got.append(cdr))
    sub = handle._entity
    pub = tr.publisher("/t9/gone", "std_msgs/msg/String", QoS("reliable", 10, "volatile"))
    assert until(lambda: pub._pub.get_subscription_count() == 1)
    pub.publish(serialize_message(String(data="a")))
    assert until(lambda: len(got) == 1)
    handle.close()                                   # node.destroy_subscription
    queue = CallbackQueue(name="t9-queue")
    try:
        _drain(sub, Target("/t9/gone", got.append), queue)     # as the executor would call it now
        assert queue.pending() == 0
    finally:
        queue.close()
        tr.close()
