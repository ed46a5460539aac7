"""Every test file that starts DDS participants has a domain range of its own."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from helpers.dds_domains import RANGES, domain_for

TESTS = Path(__file__).resolve().parents[1]
STARTS_DDS = re.compile(r"loopback_env\(|sourced_env\(|dds_env_for\(")


def test_ranges_are_valid_ros_domains_and_disjoint() -> None:
    taken: dict[int, str] = {}
    for name, ids in RANGES.items():
        assert ids and ids.start >= 0 and ids.stop <= 233, f"{name}: {ids} is outside 0..232"
        for i in ids:
            assert i not in taken, f"domain {i} is in the ranges of {taken[i]} and {name}"
            taken[i] = name


def test_every_test_file_starting_dds_has_a_range_and_uses_it() -> None:
    users = [p for p in TESTS.rglob("test_*.py") if STARTS_DDS.search(p.read_text())]
    assert users, "no test file starts DDS: the pattern no longer matches"
    for path in users:
        text = path.read_text()
        assert path.stem in RANGES, f"{path.name} starts DDS but has no range in helpers/dds_domains.RANGES"
        assert "(__name__)" in text, f"{path.name} picks a domain by hand: use domain_for(__name__)"


def test_a_file_without_a_range_is_told_where_to_add_one() -> None:
    assert domain_for("integration.test_live_preview") in RANGES["test_live_preview"]
    with pytest.raises(LookupError, match="test_new_thing has no DDS domain range"):
        domain_for("test_new_thing")
