"""The converter reads bags on a reader thread (converter/reader_thread.py): the samples,
counts and converted files are those of reading in line; the thread is gone before the
bag closes; progress is reported on the consuming thread."""
from __future__ import annotations

import functools
import threading
from pathlib import Path

import numpy as np
import pytest

from egorec_ros.assembly.sample import Sample
from egorec_ros.bags.bagfile import open_bag
from egorec_ros.codecs.lazy_frame import is_lazy_frame
from egorec_ros.converter import episode_job
from egorec_ros.converter.convert_run import convert_bags
from egorec_ros.converter.episode_job import ConvertSettings
from egorec_ros.converter.plan import plan_topics
from egorec_ros.converter.report import ReadReport
from egorec_ros.converter.samples import iter_samples
from helpers.convert import assert_same_videos, sim_bag, small_rig, task_files


@pytest.fixture(scope="module")
def bag(tmp_path_factory) -> Path:
    return sim_bag(tmp_path_factory.mktemp("read_ahead") / "sim", 2.0, seed=3, compression="storage")


def _payload(p: object) -> object:
    if is_lazy_frame(p):
        return p.array()
    if isinstance(p, dict):
        return {k: _payload(v) for k, v in p.items()}
    return p


def _same(a: Sample, b: Sample) -> bool:
    if (a.stream, a.stamp_ns, a.arrival_ns, a.raw_stamp_ns) != (b.stream, b.stamp_ns, b.arrival_ns, b.raw_stamp_ns):
        return False
    x, y = _payload(a.payload), _payload(b.payload)
    if isinstance(x, dict) and isinstance(y, dict):
        return x.keys() == y.keys() and all(np.array_equal(x[k], y[k]) for k in x)
    return bool(np.array_equal(x, y))          # type: ignore[arg-type]


def test_read_ahead_gives_the_samples_and_counts_of_reading_in_line(bag):
    rig = small_rig()
    calls: dict[bool, list[tuple[int, str]]] = {True: [], False: []}
    reports = {}
    samples = {}
    with open_bag(bag) as b:
        plan = plan_topics(b, rig.streams.values())
        for ahead in (False, True):
            reports[ahead] = ReadReport(str(b.path))
            progress = functools.partial(lambda ahead, n, _: calls[ahead].append(
                (n, threading.current_thread().name)), ahead)
            samples[ahead] = list(iter_samples(b, plan, report=reports[ahead], progress=progress, read_ahead=ahead))
    assert len(samples[True]) == len(samples[False]) > 100
    assert all(_same(a, b) for a, b in zip(samples[True], samples[False]))
    assert reports[True].lines() == reports[False].lines()
    assert calls[True] == calls[False] and {t for _, t in calls[True]} == {threading.current_thread().name}


def test_closing_the_samples_early_stops_the_reader_before_the_bag_closes(bag):
    rig = small_rig()
    with open_bag(bag) as b:
        samples = iter_samples(b, plan_topics(b, rig.streams.values()))
        before = set(threading.enumerate())
        next(samples)
        readers = [t for t in set(threading.enumerate()) - before if t.name == "egorec-reader"]
        assert len(readers) == 1
        samples.close()
        assert not readers[0].is_alive()
        assert b.first(rig.streams[next(iter(rig.streams))].topic) is not None   # the bag is still usable here


def test_converted_files_are_those_of_reading_in_line(bag, tmp_path, monkeypatch):
    settings = ConvertSettings(small_rig(), "conv")
    threaded = convert_bags([bag], settings, out=tmp_path / "threaded", progress=False)
    monkeypatch.setattr(episode_job, "iter_samples", functools.partial(iter_samples, read_ahead=False))
    in_line = convert_bags([bag], settings, out=tmp_path / "in_line", progress=False)
    assert not threaded.failures and not in_line.failures
    a, b = tmp_path / "threaded" / "conv", tmp_path / "in_line" / "conv"
    assert task_files(a) == task_files(b)
    assert_same_videos(a, b)
