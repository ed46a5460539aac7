"""Stamp clocks per stream: detection of odd stamps and the mixed-clock refusal."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from egorec_ros.assembly.sample import Sample
from egorec_ros.bags.bagfile import open_bag
from egorec_ros.bags.bagwrite import write_bag
from egorec_ros.converter.clocks import DEFAULT_POLICY, ClockPolicy
from egorec_ros.messages.errors import StreamMappingError
from egorec_ros.converter.errors import ClockPolicyError
from egorec_ros.converter.plan import plan_topics
from egorec_ros.converter.report import ReadReport
from egorec_ros.converter.samples import iter_samples
from egorec_ros.rig.compile import compile_rig
from egorec_ros.rig.kinds import StreamKind
from egorec_ros.rig.model import StreamSpec
from helpers.bags import BAGS, requires_public_bags

TINY_SVO = BAGS / "tiny_svo.bag"
RIG = compile_rig({"devices": {"cam": {"kind": "s80m", "role": "ego", "streams": {
    "left": {"topic": "/camera/image_raw", "width": 752, "height": 480},
    "imu": {"topic": "/imu/data"}, "slam": {"topic": "/Rig"}}}}})
YEARS_2013_TO_2023 = "10.6 years before bag time"


def with_option(streams, option: dict, only: str | None = None) -> list[StreamSpec]:
    return [dataclasses.replace(s, source={**s.source, **option}) if only in (None, s.id) else s for s in streams]


def convert(path: Path, streams, policy: ClockPolicy = DEFAULT_POLICY) -> tuple[list[Sample], ReadReport]:
    report = ReadReport(str(path))
    with open_bag(path) as bag:
        samples = list(iter_samples(bag, plan_topics(bag, streams), policy=policy, report=report))
    return samples, report


@requires_public_bags
def test_tiny_svo_2013_header_stamps_against_2023_bag_time_are_reported():
    samples, report = convert(TINY_SVO, RIG.streams.values())
    assert {c.source for c in report.clocks.values()} == {"header"}
    assert {s: c.far.count for s, c in report.clocks.items()} == {"cam.left": 10, "cam.imu": 35, "cam.slam": 42}
    first = report.clocks["cam.imu"].far
    assert "/imu/data" in first.first and YEARS_2013_TO_2023 in first.first and "1363639135.403216" in first.first
    assert any("all streams use header stamps " + YEARS_2013_TO_2023 in n for n in report.notes)
    assert any(YEARS_2013_TO_2023 in line for line in report.lines())
    # one clock: the samples are kept on it
    assert all(s.stamp_ns < 1_400_000_000 * 10**9 < s.arrival_ns for s in samples)


@requires_public_bags
def test_mixing_header_and_receive_clocks_is_refused_with_the_option_to_use():
    mixed = with_option(RIG.streams.values(), {"stamp": "receive"}, only="cam.slam")
    with open_bag(TINY_SVO) as bag, pytest.raises(ClockPolicyError) as err:
        iter_samples(bag, plan_topics(bag, mixed))        # refused at the call, before any sample
    text = str(err.value)
    assert "cam.slam: bag receive time" in text and f"cam.imu: header stamps {YEARS_2013_TO_2023}" in text
    assert "`stamp: receive`" in text and "or pass allow_mixed_clocks=True to convert anyway" in text


@requires_public_bags
def test_mixed_clocks_allowed_explicitly_are_converted_and_reported():
    mixed = with_option(RIG.streams.values(), {"stamp": "receive"}, only="cam.slam")
    samples, report = convert(TINY_SVO, mixed, ClockPolicy(allow_mixed=True))
    slam = [s for s in samples if s.stream == "cam.slam"]
    assert len(slam) == 42 and all(s.stamp_ns == s.arrival_ns for s in slam)
    assert all(s.raw_stamp_ns < 1_400_000_000 * 10**9 for s in slam)     # the device stamp is kept
    assert all(s.stamp_ns != s.arrival_ns for s in samples if s.stream != "cam.slam")
    assert any("different clocks" in n and "cam.slam: bag receive time" in n for n in report.notes)


@requires_public_bags
def test_every_stream_on_receive_time_is_one_clock():
    samples, report = convert(TINY_SVO, with_option(RIG.streams.values(), {"stamp": "receive"}))
    assert len(samples) == 87 and all(s.stamp_ns == s.arrival_ns for s in samples)
    assert not any(c.far for c in report.clocks.values())


def imu_stream(**source) -> StreamSpec:
    return StreamSpec(id="s.imu", device="s", role="imu", kind=StreamKind.IMU, topic="/imu", source=source)


def test_zero_and_non_monotonic_stamps_are_counted(tmp_path):
    t0 = 1_700_000_000 * 10**9
    stamps = [t0 + 10, t0 + 30, t0 + 20, 0, t0 + 40]            # one step back, one zero stamp
    samples = [Sample("s.imu", st, t0 + i * 1_000_000, np.full(6, i, np.float32)) for i, st in enumerate(stamps)]
    bag = write_bag(tmp_path / "odd", samples, [imu_stream()])
    back, report = convert(bag, [imu_stream()])
    clock = report.clocks["s.imu"]
    assert [s.stamp_ns for s in back] == [t0 + 10, t0 + 30, t0 + 20, t0 + 40]
    assert clock.zero.count == 1 and clock.zero.first_ns == t0 + 3_000_000 and "+0.003 s" in clock.zero.first
    assert clock.not_increasing.count == 1 and clock.not_increasing.first_ns == t0 + 2_000_000
    assert "not after the previous" in clock.not_increasing.first


def test_all_zero_header_stamps_use_receive_time_unless_header_is_asked_for(tmp_path):
    t0 = 1_700_000_000 * 10**9
    samples = [Sample("s.imu", 0, t0 + i * 5_000_000, np.zeros(6, np.float32)) for i in range(4)]
    bag = write_bag(tmp_path / "zeros.mcap", samples, [imu_stream()], storage="rosbag2/mcap")
    auto, report = convert(bag, [imu_stream()])
    assert [s.stamp_ns for s in auto] == [s.arrival_ns for s in samples]
    assert any("header stamps are zero" in n for n in report.notes)
    strict, report = convert(bag, [imu_stream(stamp="header")])
    assert strict == [] and report.clocks["s.imu"].zero.count == 4


def test_a_bad_stamp_option_is_refused(tmp_path):
    t0 = 1_700_000_000 * 10**9
    bag = write_bag(tmp_path / "b", [Sample("s.imu", t0, t0, np.zeros(6, np.float32))], [imu_stream()])
    with open_bag(bag) as opened, pytest.raises(StreamMappingError, match="must be `header` or `receive`"):
        plan_topics(opened, [imu_stream(stamp="gps")])
