"""Which QoS each topic of a rig is subscribed with: the recorder profile keeps 50 samples of
images and force matrices, 200 of the small windowed streams (IMU, SLAM); a profile the user
chose is kept as is."""
from __future__ import annotations

from egorec_ros.live.input import LiveInput
from egorec_ros.rig.load import load_rig
from egorec_ros.transport.base import DEFAULT, RECORDER, RECORDER_SMALL


class _Subscriptions:
    """A transport that only records what was subscribed."""

    def __init__(self):
        self.qos = {}

    def subscribe(self, topic, msgtype, qos, callback):
        self.qos[topic] = qos
        return self


def test_windowed_streams_get_the_deeper_history():
    rig = load_rig("appendix_b")
    subs = _Subscriptions()
    LiveInput(rig, subs, recorder=None)
    assert subs.qos["/ego/imu"] == subs.qos["/ego/slam"] == subs.qos["/gripper_1/slam"] == RECORDER_SMALL
    assert subs.qos["/ego/left/image_raw"] == subs.qos["/gripper_1/left_force_matrix"] == RECORDER
    assert subs.qos["/left_glove/frame"] == RECORDER
    chosen = _Subscriptions()
    LiveInput(rig, chosen, recorder=None, qos=DEFAULT)
    assert set(chosen.qos.values()) == {DEFAULT}
