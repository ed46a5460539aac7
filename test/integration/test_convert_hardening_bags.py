"""Issue 10 items 3, 4 and 6: bags other projects write — Crystal/Dashing-era type names
without definitions, topics without their leading slash, definitions that do not parse,
invalid raw images — are read, paired and suggested correctly."""
from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
import yaml

from egorec_ros.bags.bagfile import open_bag
from egorec_ros.messages.payloads.camera_info import CAMERA_INFO
from egorec_ros.messages.payloads.images import IMAGE, image_message
from egorec_ros.messages.payloads.imu import IMU
from egorec_ros.messages.payloads.stamps import header_message
from egorec_ros.converter.suggest import suggest_rig
from egorec_ros.rig.compile import compile_rig
from egorec_ros.validate.validate import validate_task
from helpers.bags import BAGS
from helpers.cli import egorec
from helpers.convert import START_NS, data_table
from helpers.message_bags import SIZE, STORE, camera_messages, frame, imu_message, write_messages

def crystal_era(folder: Path) -> Path:
    """Make a rosbag2 sqlite3 folder look like ROS 2 Crystal/Dashing wrote it: type names without
    ``/msg/`` in the topics table and metadata.yaml, no definitions, no schema table, topics
    without QoS or type hash columns (rosbag2 schema 1)."""
    db3 = next(folder.glob("*.db3"))
    with sqlite3.connect(db3) as db:
        db.executescript("""
            DROP TABLE IF EXISTS message_definitions; DROP TABLE IF EXISTS schema;
            CREATE TABLE old_topics (id INTEGER PRIMARY KEY, name TEXT NOT NULL, type TEXT NOT NULL,
                                     serialization_format TEXT NOT NULL);
            INSERT INTO old_topics SELECT id, name, replace(type, '/msg/', '/'), serialization_format FROM topics;
            DROP TABLE topics; ALTER TABLE old_topics RENAME TO topics;""")
        assert db.execute("SELECT type FROM topics ORDER BY id").fetchall()[0][0].count("/") == 1
    meta = folder / "metadata.yaml"
    doc = yaml.safe_load(meta.read_text())
    for topic in doc["rosbag2_bagfile_information"]["topics_with_message_count"]:
        md = topic["topic_metadata"]
        md["type"] = md["type"].replace("/msg/", "/")
        md.pop("type_description_hash", None)
        md["offered_qos_profiles"] = ""
    meta.write_text(yaml.safe_dump(doc))
    return folder


# ---- item 3: Crystal/Dashing type names ------------------------------------------------------

def test_a_crystal_era_db3_is_read_with_ros2_type_names(tmp_path):
    folder = crystal_era(write_messages(tmp_path / "crystal", [
        *camera_messages("/cam/image_raw", "/cam/camera_info"),
        *[("/imu", IMU, START_NS + i * 5_000_000, imu_message(START_NS + i * 5_000_000)) for i in range(150)]]))
    for path in (folder, next(folder.glob("*.db3"))):
        with open_bag(path) as bag:
            assert {t: (i.msgtype, i.decodable) for t, i in bag.topics.items()} == {
                "/cam/image_raw": (IMAGE, True), "/cam/camera_info": (CAMERA_INFO, True), "/imu": (IMU, True)}
            assert bag.decode(bag.first("/cam/image_raw")).width == SIZE[0]
            suggestion = suggest_rig(bag)
        assert suggestion.compiles, suggestion.todo
        assert "unknown message type" not in suggestion.text
        ego = yaml.safe_load(suggestion.text)["devices"]["ego"]
        assert ego["streams"]["left"] == {"topic": "/cam/image_raw", "width": SIZE[0], "height": SIZE[1]}
        assert ego["streams"]["imu"] == {"topic": "/imu"}
    rig = tmp_path / "rig.yaml"
    rig.write_text(suggestion.text)
    done = egorec("convert", folder, "--rig", rig, "--task", "conv", "--out", tmp_path / "out")
    assert done.returncode == 0, done.stderr
    assert validate_task(tmp_path / "out" / "conv") == []
    assert data_table(tmp_path / "out" / "conv").num_rows >= 28


# ---- item 4: topics without a leading slash -------------------------------------------------

def test_camera_info_pairs_with_an_image_topic_written_without_leading_slash(tmp_path):
    folder = write_messages(tmp_path / "raspicam", camera_messages(
        "raspicam_node/camera/image/compressed", "/raspicam_node/camera/camera_info", compressed=True))
    rig = tmp_path / "rig.yaml"           # the rig names both topics the other way round
    rig.write_text("name: r\ndevices:\n  cam: {kind: uvc, streams: {rgb: "
                   f"{{topic: /raspicam_node/camera/image/compressed, width: {SIZE[0]}, height: {SIZE[1]}}}}}}}\n")
    done = egorec("convert", folder, "--rig", rig, "--task", "conv", "--out", tmp_path / "out")
    assert done.returncode == 0, done.stderr
    calibration = json.loads((tmp_path / "out/conv/meta/info.json").read_text())["calibration"]
    (entry,) = calibration.values()
    assert entry["resolution"] == list(SIZE) and entry["left_camera"]["intrinsic"] == [50.0, 50.0, 32.0, 24.0]
    assert "not mapped" not in done.stdout
    with open_bag(folder) as bag:
        suggestion = suggest_rig(bag)
    (cam,) = yaml.safe_load(suggestion.text)["devices"].values()
    assert cam["calibration"]["resolution"] == list(SIZE)
    assert "/raspicam_node/camera/camera_info" not in suggestion.text.split("# Topics not mapped:")[-1]


# ---- item 6: suggestions always load; fps from the stream; raw images decode -----------------

def test_a_definition_that_does_not_parse_leaves_the_suggestion_loadable(tmp_path):
    folder = write_messages(tmp_path / "bad_def", [
        *camera_messages("/cam/image_raw", "/cam/camera_info"),
        ("/odd", "foo_msgs/msg/Bad", START_NS, b"\x00\x01\x00\x00\x01\x00\x00\x00")],
        mcap=True, definitions={"foo_msgs/msg/Bad": "int32 x\n@@@ bad\nint32 y\n"})
    with open_bag(folder) as bag:
        assert "\n" in bag.topics["/odd"].problem               # the parser's error text spans lines
        suggestion = suggest_rig(bag)
    doc = yaml.safe_load(suggestion.text)
    compile_rig(doc)
    assert "#   /odd (foo_msgs/msg/Bad, 1 messages): its definition stored in the bag cannot be used" \
        in suggestion.text


def test_calibration_fps_is_the_camera_rate_not_count_over_bag_duration(tmp_path):
    imu = [("/imu", IMU, START_NS + i * 10_000_000, imu_message(START_NS + i * 10_000_000)) for i in range(300)]
    folder = write_messages(tmp_path / "long_imu", [*camera_messages("/cam/image_raw", "/cam/camera_info"), *imu])
    with open_bag(folder) as bag:                  # 30 frames in 1 s, IMU for 3 s
        doc = yaml.safe_load(suggest_rig(bag).text)
    assert doc["devices"]["ego"]["calibration"]["fps"] == 30.0


def test_a_raw_image_that_does_not_decode_is_not_proposed(tmp_path):
    bad = image_message(STORE, frame(0), header_message(STORE, START_NS, "cam"))
    bad.data = bad.data[:30]                      # 64x48 rgb8 needs 9216 bytes
    folder = write_messages(tmp_path / "bad_image", [
        *camera_messages("/good/image_raw", None), ("/bad/image_raw", IMAGE, START_NS, bad)])
    with open_bag(folder) as bag:
        suggestion = suggest_rig(bag)
    (cam,) = yaml.safe_load(suggestion.text)["devices"].values()
    assert cam["streams"]["rgb"]["topic"] == "/good/image_raw"
    assert any(n.startswith("image topic /bad/image_raw left out: its first frame cannot be decoded") and
               "data has 30 bytes" in n for n in suggestion.notes)


PUBLIC = sorted(p for p in BAGS.iterdir() if p.name != "README.md") if BAGS.is_dir() else []


@pytest.mark.skipif(not PUBLIC, reason=f"public test bags not found at {BAGS} (see /work/shared/bags/README.md)")
@pytest.mark.parametrize("bag", PUBLIC, ids=lambda p: p.name)
def test_every_public_bag_suggestion_loads_and_compiles_where_it_names_streams(bag):
    with open_bag(bag) as opened:
        suggestion = suggest_rig(opened)
    doc = yaml.safe_load(suggestion.text)
    assert isinstance(doc, dict)
    if doc.get("devices"):
        compile_rig(doc)
        assert suggestion.compiles, suggestion.todo
