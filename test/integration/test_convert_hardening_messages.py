"""Issue 10 item 7: what `egorec convert` says about a bag it cannot use is what is actually
wrong with it (exact text), and a failed run leaves no output folder behind."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from egorec_ros.assembly.sample import Sample
from egorec_ros.bags.bagfile import open_bag
from egorec_ros.bags.bagwrite import write_bag
from egorec_ros.bags.errors import BagError
from egorec_ros.converter.errors import ClockPolicyError
from egorec_ros.converter.plan import plan_topics
from egorec_ros.converter.samples import iter_samples
from egorec_ros.rig.kinds import StreamKind
from egorec_ros.rig.model import StreamSpec
from helpers.cli import egorec
from helpers.convert import RIG_ARGS, START_NS, sim_bag

YEAR_NS = int(365.25 * 86400 * 1e9)
DAMAGED_SQLITE = ("the sqlite3 file is damaged (truncated or corrupt); `ros2 bag reindex` only rebuilds metadata.yaml "
                  "and cannot repair it: salvage the readable rows with `sqlite3 BROKEN.db3 .recover | sqlite3 "
                  "FIXED.db3` and convert FIXED.db3")


def imu(sid: str, topic: str) -> StreamSpec:
    device, role = sid.split(".")
    return StreamSpec(id=sid, device=device, role=role, kind=StreamKind.IMU, topic=topic)


def imu_bag(path: Path, storage: str = "rosbag2/sqlite3", offsets_ns=(0,), n: int = 20) -> Path:
    """IMU streams a.imu, b.imu ... each header-stamped at receive time + its offset."""
    streams = [imu(f"{chr(97 + i)}.imu", f"/imu_{i}") for i in range(len(offsets_ns))]
    samples = [Sample(s.id, START_NS + k * 10_000_000 + off, START_NS + k * 10_000_000, np.zeros(6, np.float32))
               for k in range(n) for s, off in zip(streams, offsets_ns)]
    return write_bag(path, samples, streams, storage=storage)


def storage_file(folder: Path, suffix: str) -> Path:
    return next(folder.glob(f"*{suffix}"))


def test_mixed_clocks_years_off_name_the_seconds_between_the_streams(tmp_path):
    off = -int(4.9 * YEAR_NS)
    bag = imu_bag(tmp_path / "mixed", offsets_ns=(off, off + 43_012_000_000))
    with open_bag(bag) as opened, pytest.raises(ClockPolicyError) as err:
        iter_samples(opened, plan_topics(opened, [imu("a.imu", "/imu_0"), imu("b.imu", "/imu_1")]))
    assert str(err.value).splitlines()[:3] == [
        f"{bag}: the streams of this episode are stamped by different clocks, 43.012 s apart (tolerance 2 s):",
        "  a.imu: header stamps 4.9 years before bag time",
        "  b.imu: header stamps 4.9 years before bag time, 43.012 s after a.imu's"]


def ros1_profile(mcap: Path) -> None:
    data = bytearray(mcap.read_bytes())
    at = data.index(b"ros2")
    data[at:at + 4] = b"ros1"
    mcap.write_bytes(bytes(data))


def test_a_ros1_mcap_is_named_as_such_not_as_an_interrupted_recording(tmp_path):
    folder = imu_bag(tmp_path / "ros1", storage="rosbag2/mcap")
    mcap = storage_file(folder, ".mcap")
    ros1_profile(mcap)
    for path in (folder, mcap):
        with pytest.raises(BagError) as err:
            open_bag(path)
        assert str(err.value) == (
            f"{mcap}: a ROS 1 MCAP file (profile 'ros1': ROS 1 messages in MCAP), not a rosbag2 MCAP (profile "
            "'ros2'); egorec reads ROS 1 recordings only as .bag files: convert the ROS 1 .bag this file was made from")


def test_metadata_naming_the_wrong_storage_says_so(tmp_path):
    folder = imu_bag(tmp_path / "wrong_id")
    meta = folder / "metadata.yaml"
    meta.write_text(meta.read_text().replace("storage_identifier: sqlite3", "storage_identifier: mcap"))
    db3 = storage_file(folder, ".db3")
    with pytest.raises(BagError) as err:
        open_bag(folder)
    assert str(err.value) == (f"{meta} says storage_identifier 'mcap' but {db3.name} is a rosbag2/sqlite3 file; set "
                              f"`storage_identifier: sqlite3` in metadata.yaml, or convert {db3} alone")


def test_a_truncated_db3_is_called_damaged_and_reindex_is_not_offered(tmp_path):
    folder = sim_bag(tmp_path / "cut", 2.0, storage="rosbag2/sqlite3")
    db3 = storage_file(folder, ".db3")
    db3.write_bytes(db3.read_bytes()[: db3.stat().st_size // 2])
    with pytest.raises(BagError) as err:
        with open_bag(folder) as bag:
            list(bag.messages())
    text = str(err.value)
    assert text.startswith(f"{folder}: ") and text.endswith(DAMAGED_SQLITE)
    assert "try `ros2 bag reindex`" not in text


@pytest.mark.parametrize("content, what", [("", "is empty"), ("foo: 1\n", "has no rosbag2_bagfile_information")])
def test_an_empty_metadata_yaml_says_what_is_wrong_with_it(tmp_path, content, what):
    folder = imu_bag(tmp_path / "meta")
    (folder / "metadata.yaml").write_text(content)
    with pytest.raises(BagError) as err:
        open_bag(folder)
    assert str(err.value) == (
        f"{folder / 'metadata.yaml'} {what}: it is not a rosbag2 metadata file; rebuild it with "
        f"`ros2 bag reindex {folder}`, or delete it and convert the folder's one storage file (egorec reads a lone "
        ".db3/.mcap)")


def test_a_failed_run_says_no_episode_and_leaves_no_output_root(tmp_path):
    folder = imu_bag(tmp_path / "meta")
    (folder / "metadata.yaml").write_text("")
    out = tmp_path / "new_root" / "sub"
    done = egorec("convert", folder, "--rig", "d435_single", "--task", "t", "--out", out)
    assert done.returncode == 1
    assert "episode(s) written" not in done.stdout
    assert done.stdout.rstrip().endswith(f"no episode written; {out / 't'} was not created")
    assert not (tmp_path / "new_root").exists()


def test_the_same_bag_given_twice_is_refused_before_anything_is_written(tmp_path, monkeypatch):
    """Item 8, a choice (README): refused, whatever spelling names the bag twice."""
    folder = imu_bag(tmp_path / "a")
    (tmp_path / "link").symlink_to(folder)
    db3 = storage_file(folder, ".db3")
    monkeypatch.chdir(tmp_path)
    for first, second in (("./a", "a/"), ("a", "link"), ("a", f"a/{db3.name}")):
        done = egorec("convert", first, second, "--rig", "d435_single", "--task", "t", "--out", "out")
        assert done.returncode == 2
        assert done.stderr == (f"egorec convert: the same bag is given twice: {first} and {second} (both are {db3}); "
                               "remove one of them: converting a bag twice would make two identical episodes\n")
        assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(("flags", "message"), [
    (["--crf", "99"], "h264 crf must be in 0..51, got 99"),
    (["--jobs", "0"], "--jobs must be at least 1, got 0"),
])
def test_an_option_that_cannot_work_is_one_line_and_writes_nothing(tmp_path, flags, message):
    """Bad options are user errors (exit status 2, `egorec convert: ...`); anything else
    that goes wrong inside the converter is a bug and keeps its traceback."""
    folder = sim_bag(tmp_path / "bag", 1.0, storage="rosbag2/sqlite3")
    done = egorec("convert", folder, *RIG_ARGS, "--task", "t", "--out", tmp_path / "out", *flags)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("egorec convert: ") and message in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "out").exists()


def test_a_codec_option_that_cannot_work_is_one_line_for_the_recorder_too(tmp_path):
    """`egorec record --crf 99` printed a traceback (VideoCodec's ValueError); now the CLI's one line."""
    done = egorec("record", "--rig", "appendix_b", "--sim", "--crf", "99", "--out", tmp_path / "out")
    assert done.returncode == 1, done.stderr
    assert "egorec: h264 crf must be in 0..51, got 99" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "out").exists()
