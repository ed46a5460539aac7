"""The live decode entry point (raw CDR bytes -> Samples) gives what the bag converter
gives for the same messages: one rule table for bags and live topics."""
from __future__ import annotations

import numpy as np
import pytest

from egorec_ros.bags.bagfile import open_bag
from egorec_ros.codecs.lazy_frame import frame_array
from egorec_ros.converter.plan import plan_topics
from egorec_ros.converter.samples import iter_samples
from egorec_ros.messages.context import MessageContext
from egorec_ros.messages.decode import TopicDecoder
from egorec_ros.messages.errors import StreamMappingError
from egorec_ros.messages.payloads import imu
from egorec_ros.messages.payloads.stamps import header_message
from egorec_ros.messages.typestores import ros2_typestore
from egorec_ros.rig.kinds import StreamKind
from egorec_ros.rig.model import StreamSpec
from helpers.convert import sim_bag, small_rig


def _same(a, b) -> bool:
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)
    return np.array_equal(frame_array(a) if not isinstance(a, np.ndarray) else a,
                          frame_array(b) if not isinstance(b, np.ndarray) else b)


def test_cdr_bytes_of_every_topic_decode_to_the_samples_the_bag_reader_makes(tmp_path):
    rig = small_rig()
    path = sim_bag(tmp_path / "sim.mcap", 0.5, seed=4)
    with open_bag(path) as bag:
        plan = plan_topics(bag, rig.streams.values())
        expected = list(iter_samples(bag, plan))
        decoders = {t: TopicDecoder.for_streams(t, bag.topics[t].msgtype, [r.stream for r in routes])
                    for t, routes in plan.routes.items()}
        live = []
        for raw in bag.messages(plan.topics):
            decoded = decoders[raw.topic].decode(bytes(raw.data), raw.log_ns)
            assert decoded.drops == []
            live += decoded.samples
    assert len(live) == len(expected) > 100
    assert {s.stream for s in live} == set(rig.streams)
    for got, want in zip(live, expected):
        assert (got.stream, got.stamp_ns, got.arrival_ns) == (want.stream, want.stamp_ns, want.arrival_ns)
        assert _same(got.payload, want.payload), got.stream


def test_a_zero_header_stamp_is_a_drop_and_receive_stamp_uses_the_arrival():
    store = ros2_typestore()
    spec = StreamSpec(id="cam.imu", device="cam", role="imu", kind=StreamKind.IMU, topic="/imu", columns={}, source={})
    payload = np.arange(6, dtype=np.float32)
    cdr = store.serialize_cdr(imu.imu_message(store, payload, header_message(store, 0)), imu.IMU)
    decoded = TopicDecoder.for_streams("/imu", imu.IMU, [spec]).decode(cdr, 5_000)
    assert decoded.samples == [] and decoded.drops == [("cam.imu", "live: /imu at receive time 0.000005 s "
                                                         "(+0.000 s): header stamp is zero")]
    receive = StreamSpec(id="cam.imu", device="cam", role="imu", kind=StreamKind.IMU, topic="/imu", columns={},
                         source={"stamp": "receive"})
    ctx = MessageContext("dds", "/imu", 5_000, clock="receive time")
    (sample,) = TopicDecoder.for_streams("/imu", imu.IMU, [receive]).decode(cdr, 5_000, ctx).samples
    assert (sample.stamp_ns, sample.arrival_ns) == (5_000, 5_000)
    np.testing.assert_array_equal(sample.payload, payload)


def test_a_type_that_cannot_feed_the_stream_is_refused_before_any_message():
    spec = StreamSpec(id="cam.imu", device="cam", role="imu", kind=StreamKind.IMU, topic="/imu", columns={}, source={})
    with pytest.raises(StreamMappingError, match="cannot feed stream 'cam.imu'"):
        TopicDecoder.for_streams("/imu", "sensor_msgs/msg/Image", [spec])
