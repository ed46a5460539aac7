"""One parser for the episode lists the commands take ("1,3-5"): `egorec delete`, `egorec
upload --episodes` and `egorec export egosmith --episodes` read them alike and name the bad part."""
from __future__ import annotations

import argparse

import pytest

from egorec_ros.export.egosmith.cli import episodes_arg
from egorec_ros.layout.numbering import MAX_RANGE, parse_episode_list
from egorec_ros.upload.errors import UploadError
from egorec_ros.upload.selection import parse_episodes


def test_episode_lists_ranges_spaces_duplicates_and_bad_parts() -> None:
    assert parse_episode_list("7") == [7]
    assert parse_episode_list("1,3-5") == [1, 3, 4, 5]
    assert parse_episode_list(" 5 , 1 - 2,2, 4-4 ") == [1, 2, 4, 5]           # spaces; sorted, each once
    assert parse_episode_list("3-5,4,1000-1001,") == [3, 4, 5, 1000, 1001]      # overlap; a stray comma
    assert parse_episode_list(f"1-{MAX_RANGE}")[-1] == MAX_RANGE
    for bad, part, why in (("1,two,3", "two", "not an episode number"), ("0", "0", "start at 1"),
                           ("2,5-3", "5-3", "a range goes up"), ("1-", "1-", "not an episode number"),
                           ("-3", "-3", "not an episode number"), ("1;2", "1;2", "not an episode number"),
                           ("+3", "+3", "not an episode number"), ("3_0", "3_0", "not an episode number"),
                           ("1.5", "1.5", "not an episode number"), ("٣", "٣", "not an episode number"),
                           (f"1-{MAX_RANGE + 1}", f"1-{MAX_RANGE + 1}", "a range of more than")):
        with pytest.raises(ValueError, match=why) as caught:
            parse_episode_list(bad)
        named = repr(part) if part == bad else f"{part!r} in {bad!r}"           # the part, and where it is
        assert str(caught.value).startswith(named) and "\n" not in str(caught.value)
    for empty in ("", " ", ",", " , "):
        with pytest.raises(ValueError, match="names no episode"):
            parse_episode_list(empty)
    # the commands' own wrappers: the same numbers, the same reason in their own words
    assert parse_episodes("1, 3-5") == episodes_arg("1, 3-5") == [1, 3, 4, 5]
    with pytest.raises(UploadError, match=r"^--episodes: '5-3' in '2,5-3': a range goes up"):
        parse_episodes("2,5-3")
    with pytest.raises(argparse.ArgumentTypeError, match=r"^'x' in '1,x' is not an episode number"):
        episodes_arg("1,x")
