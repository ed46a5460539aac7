"""stats.json blocks (issue 10 item 1): ``count`` a plain integer, for every feature and the
``action`` placeholder; an older stats.json (or episode row) with ``[N]`` still merges;
`egorec validate` checks the block shape."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers.store import Tiny
from egorec_ros.schema.episode_row import read_episode_row, write_episode_row
from egorec_ros.store import TaskWriter
from egorec_ros.validate.validate import validate_task

STATE = "observation.gripper_state"
STATS = "meta/stats.json"
ROW_1 = "meta/episodes/chunk-000/episode-000.parquet"


def stats_of(task: Path) -> dict:
    return json.loads((task / STATS).read_text())


def as_old_writer(block: dict) -> dict:
    """What egorec wrote before: ``count`` as a one-element list."""
    return {**block, "count": [block["count"]]}


@pytest.fixture
def task(tmp_path: Path, tiny_no_video: Tiny) -> Path:
    root = tmp_path / "task"
    with TaskWriter(root) as writer:
        tiny_no_video.write(writer, 4)
    return root


def test_count_is_a_plain_integer_and_action_is_the_placeholder(task: Path) -> None:
    stats = stats_of(task)
    assert stats["action"] == {"count": 0, "mean": [0.0], "std": [1.0], "min": [0.0], "max": [0.0]}
    assert type(stats[STATE]["count"]) is int and stats[STATE]["count"] == 4
    row_stats = read_episode_row(task / ROW_1)["stats"]    # the per-episode copy too
    assert type(row_stats[STATE]["count"]) is int and row_stats[STATE]["count"] == 4
    assert validate_task(task, decode=False) == []


def test_an_older_stats_json_with_list_counts_still_merges(task: Path, tiny_no_video: Tiny) -> None:
    old = {name: as_old_writer(block) for name, block in stats_of(task).items()}
    (task / STATS).write_text(json.dumps(old))
    with TaskWriter(task) as writer:
        tiny_no_video.write(writer, 5)
    stats = stats_of(task)
    assert stats[STATE]["count"] == 9 and stats["action"]["count"] == 0   # read tolerant, written strict


def test_an_older_episode_row_with_list_counts_still_rebuilds(task: Path, tiny_no_video: Tiny) -> None:
    row = read_episode_row(task / ROW_1)
    row["stats"] = {name: as_old_writer(block) for name, block in row["stats"].items()}
    write_episode_row(task / ROW_1, {k: v for k, v in row.items()})
    with TaskWriter(task) as writer:
        tiny_no_video.write(writer, 5)
        writer.delete(2)          # stats.json rebuilt from the episode rows
    assert stats_of(task)[STATE]["count"] == 4


BROKEN_BLOCKS = {   # case: (change to the STATE block, where the finding points)
    "count as a list (older writer)": (lambda b: b.update(count=[b["count"]]), f"{STATE}.count"),
    "negative count": (lambda b: b.update(count=-1), f"{STATE}.count"),
    "count a float": (lambda b: b.update(count=4.0), f"{STATE}.count"),
    "lists of unequal lengths": (lambda b: b.update(std=b["std"][:2]), STATE),
    "mean not a list of numbers": (lambda b: b.update(mean="0"), f"{STATE}.mean"),
    "width differs from the feature": (lambda b: b.update({k: b[k] + [0.0] for k in ("mean", "std", "min", "max")}),
                                       STATE),
    "block without a key": (lambda b: b.pop("max"), STATE),
}


@pytest.mark.parametrize("case", list(BROKEN_BLOCKS))
def test_validate_checks_the_block_shape(task: Path, case: str) -> None:
    change, where = BROKEN_BLOCKS[case]
    stats = stats_of(task)
    change(stats[STATE])
    (task / STATS).write_text(json.dumps(stats))
    found = [(f.file, f.where, f.rule) for f in validate_task(task, decode=False)]
    assert found == [(STATS, where, "DESIGN:stats")], found


def test_validate_names_a_block_of_an_undeclared_feature(task: Path) -> None:
    stats = stats_of(task)
    stats["observation.left_glove"] = stats[STATE]
    (task / STATS).write_text(json.dumps(stats))
    found = [(f.file, f.where, f.rule) for f in validate_task(task, decode=False)]
    assert found == [(STATS, "observation.left_glove", "DESIGN:stats")], found
