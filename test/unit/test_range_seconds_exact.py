"""`--range` epoch seconds are exact to the nanosecond: `egorec record --bag` prints the live
episode's window that way, and a float (~16 digits) would move its end by ~100 ns, off the
last tick, so the converted bag lost the episode's last row."""
from __future__ import annotations

import argparse
from types import SimpleNamespace

import pytest

from egorec_ros.cli.options import seconds
from egorec_ros.converter.split import EPOCH, split_by_ranges

START, END = 1_796_142_812_918_240_238, 1_796_142_815_884_906_905


def test_epoch_ranges_keep_every_nanosecond():
    bag = SimpleNamespace(start_ns=START - 10**9, end_ns=END + 10**9, path="session")
    text = [f"{ns // 10**9}.{ns % 10**9:09d}" for ns in (START, END)]
    (window,) = split_by_ranges(bag, [[seconds(t) for t in text]], origin=EPOCH)
    assert (window.start_ns, window.end_ns) == (START, END)
    assert float(text[1]) * 1e9 != END     # what the float parse gave


def test_a_range_that_is_no_number_is_a_usage_error():
    with pytest.raises(argparse.ArgumentTypeError, match="looks like 12.5"):
        seconds("soon")
