"""Bag farms without Ray: bag lists and globs, bag identities, and the episode row's ``source``."""
from __future__ import annotations

import shutil

import pytest

from egorec_ros.converter.bag_list import BagListError, expand_bags
from egorec_ros.converter.provenance import CHUNK, bag_identity, source_key, source_of
from egorec_ros.converter.split import EpisodeWindow
from egorec_ros.schema.episode_row import read_episode_row, write_episode_row


def test_a_list_file_with_comments_and_relative_paths_and_a_glob(tmp_path):
    for name in ("a.mcap", "b.mcap", "c.bag", "d.bag"):
        (tmp_path / "bags" / name).parent.mkdir(exist_ok=True)
        (tmp_path / "bags" / name).write_bytes(b"x")
    listing = tmp_path / "bags" / "farm.txt"
    listing.write_text("# farm\n\na.mcap\n  b.mcap  \n# c.bag is elsewhere\n")
    assert expand_bags([str(tmp_path / "bags" / "*.bag")], [str(listing)]) == \
        [str(tmp_path / "bags" / n) for n in ("c.bag", "d.bag", "a.mcap", "b.mcap")]


def test_a_pattern_matching_nothing_and_an_unreadable_list_are_one_line_errors(tmp_path):
    with pytest.raises(BagListError, match=r"argument: the pattern .*nope\*.mcap matches no file"):
        expand_bags([str(tmp_path / "nope*.mcap")])
    with pytest.raises(BagListError, match=r"--from-list .*missing.txt: cannot be read"):
        expand_bags([], [str(tmp_path / "missing.txt")])


def test_a_bag_is_known_by_its_content_not_its_path(tmp_path):
    bag = tmp_path / "a.mcap"
    bag.write_bytes(bytes(range(256)) * (3 * CHUNK // 256))
    shutil.copy(bag, tmp_path / "moved.mcap")
    assert bag_identity(bag) == bag_identity(tmp_path / "moved.mcap")
    tail = bytearray(bag.read_bytes())
    tail[-1] ^= 1                               # the last chunk differs
    (tmp_path / "edited.mcap").write_bytes(bytes(tail))
    assert bag_identity(tmp_path / "edited.mcap") != bag_identity(bag)
    folder = tmp_path / "rosbag2"
    folder.mkdir()
    shutil.copy(bag, folder / "rosbag2_0.mcap")
    assert bag_identity(folder)[0] == 3 * CHUNK


def test_the_source_round_trips_through_the_episode_row(tmp_path):
    window = EpisodeWindow(10, 20, "gap 1")
    source = source_of("/bags/a.mcap", (123, "ab" * 16), window)
    row = tmp_path / "episode.parquet"
    write_episode_row(row, {"episode_index": 4, "source": source})
    back = read_episode_row(row)
    assert back["source"] == source and source_key(back["source"]) == (123, "blake2b-128:" + "ab" * 16, 10, 20)
    write_episode_row(row, {"episode_index": 4})        # rows without a source keep their columns
    assert "source" not in read_episode_row(row)


def test_farm_progress_credits_each_node_with_what_it_converted():
    import io

    from egorec_ros.converter.farm_progress import FarmProgress

    farm = FarmProgress(4, 0, stream=io.StringIO(), enabled=False)
    farm.episode("a", "n1", 10)          # bag a: all on n1
    farm.episode("a", "n1", 10)
    farm.bag("a", failed=False)
    farm.episode("b", "n1", 5)           # bag b: first episode on n1, the last on n2
    farm.episode("b", "n2", 7)
    farm.bag("b", failed=False)
    farm.episode("c", "n2", 3)           # bag c: one episode on n2, then one failed
    farm.bag("c", failed=True)
    line = farm.line()
    assert line.startswith("farm: 2 bags done, 1 failed, 1 left; 35 rows;"), line
    assert "; 1 of the bags done split over nodes" in line
    assert line.endswith("; nodes: n1 1 bags +1 split 3 episodes 25 rows, n2 0 bags +1 split 2 episodes 10 rows"), line
