"""`egorec export lerobot --jobs N`: episodes made by worker processes through part files
(the path `--ray` takes on a cluster, test_convert_ray_farm.py) give the serial export's
files byte for byte; a stopped parallel export keeps its finished episodes and the same
command goes on from them, remaking what no longer matches."""
from __future__ import annotations

from pathlib import Path

import pytest

from helpers.cli import egorec
from helpers.export_files import dataset_files
from egorec_ros.dataset import open_task
from egorec_ros.export.lerobot import parts
from egorec_ros.export.lerobot.export import export_lerobot, partial_dir

OPTIONS = {"video": "copy", "extras": "flatten"}


@pytest.fixture(scope="module")
def serial(appendix_b_task: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    out = tmp_path_factory.mktemp("serial") / "ds"
    export_lerobot(appendix_b_task, out, **OPTIONS)
    return dataset_files(out)


def test_workers_write_the_serial_exports_bytes(appendix_b_task: Path, tmp_path: Path, serial) -> None:
    out = tmp_path / "ds"
    summary = export_lerobot(appendix_b_task, out, jobs=2, **OPTIONS)
    assert summary.episodes == 2 and summary.reused == 0 and summary.nodes == {}
    got = dataset_files(out)
    assert list(got) == list(serial) and any(n.startswith("videos/") for n in got)
    assert [n for n in got if got[n] != serial[n]] == []
    assert not partial_dir(out).exists() and not any(n.startswith(parts.PARTS) for n in got)


class Stop(Exception):
    pass


def _stop_after_first(done: int, total: int) -> None:
    if done == 1:
        raise Stop


def test_a_stopped_export_goes_on_from_its_parts(appendix_b_task: Path, tmp_path: Path, serial) -> None:
    out = tmp_path / "ds"
    with pytest.raises(Stop):
        export_lerobot(appendix_b_task, out, jobs=2, progress=_stop_after_first, **OPTIONS)
    kept = parts.finished(partial_dir(out))
    assert not out.exists() and kept >= 1          # episode 0 was assembled, so its part was complete
    summary = export_lerobot(appendix_b_task, out, jobs=2, **OPTIONS)
    assert summary.reused == kept
    assert dataset_files(out) == serial and not partial_dir(out).exists()


def test_parts_of_other_options_are_remade(appendix_b_task: Path, tmp_path: Path) -> None:
    out = tmp_path / "ds"
    with pytest.raises(Stop):
        export_lerobot(appendix_b_task, out, jobs=2, progress=_stop_after_first, **OPTIONS)
    assert parts.finished(partial_dir(out)) >= 1
    summary = export_lerobot(appendix_b_task, out, jobs=2, cameras=["gripper_rgb"], **OPTIONS)
    assert summary.reused == 0
    reference = tmp_path / "reference"
    export_lerobot(appendix_b_task, reference, cameras=["gripper_rgb"], **OPTIONS)
    assert dataset_files(out) == dataset_files(reference)      # no video of the first run's other cameras


def test_a_workers_error_is_one_line_and_finished_parts_stay(appendix_b_copy: Path, tmp_path: Path) -> None:
    out = tmp_path / "ds"
    second = open_task(appendix_b_copy).episodes[1].video_path("gripper_rgb")
    assert second is not None
    second.unlink()
    done = egorec("export", "lerobot", appendix_b_copy, "--out", out, "--jobs", "2", timeout=300)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 2 and "episode 2 has no video 'gripper_rgb'" in lines[0], done.stderr
    assert lines[1] == (f"egorec export lerobot: 1 finished episode(s) kept in {partial_dir(out)}; the same "
                        "command goes on from them")
    assert not out.exists() and parts.finished(partial_dir(out)) == 1     # episode 1's part
