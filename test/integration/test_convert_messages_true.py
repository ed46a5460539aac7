"""Converter messages say what is actually wrong (issue 24 item 8), on copies of the public bags:
a metadata.yaml naming another file is not a damaged .db3, a folder without a bag is not a rosbag2
folder, rosbags' tuple-formatted reasons are sentences, and a rig suggested from a bag without a
camera says so when it is used. (The clock refusal naming the CLI flag: test_convert_public_bags.)"""
from __future__ import annotations

import shutil
import struct
from pathlib import Path

import pytest

from egorec_ros.bags.bagfile import open_bag
from egorec_ros.bags.errors import BagError
from egorec_ros.converter.suggest import suggest_rig
from helpers.bags import BAGS, requires_public_bags
from helpers.cli import egorec

pytestmark = requires_public_bags


def _copy(name: str, tmp_path: Path) -> Path:
    target = tmp_path / name
    shutil.copytree(BAGS / name, target) if (BAGS / name).is_dir() else shutil.copyfile(BAGS / name, target)
    for p in [target, *target.rglob("*")]:
        p.chmod(0o755 if p.is_dir() else 0o644)        # the shared copies are read-only
    return target


def test_metadata_naming_another_file_is_not_called_a_damaged_db3(tmp_path):
    folder = _copy("tiny_svo_rosbag2_sqlite3", tmp_path)
    (folder / "tiny_svo_rosbag2_sqlite3.db3").rename(folder / "svo.db3")
    with pytest.raises(BagError) as err:
        open_bag(folder)
    text = str(err.value)
    assert text == (f"{folder / 'metadata.yaml'} lists tiny_svo_rosbag2_sqlite3.db3, but the folder holds svo.db3 "
                    "instead: the metadata names other files (the storage files themselves are not damaged). Rename "
                    "svo.db3 to tiny_svo_rosbag2_sqlite3.db3 (or edit relative_file_paths in metadata.yaml), or "
                    f"convert {folder / 'svo.db3'} alone")
    assert "damaged" not in text.replace("not damaged", "") and ".recover" not in text
    with open_bag(folder / "svo.db3") as bag:                 # ... and so it is: the file alone opens whole
        assert bag.message_count == 133


def test_a_listed_file_that_is_gone_is_named_as_missing(tmp_path):
    folder = _copy("wbag_sqlite3_5files", tmp_path)
    (folder / "wbag_3.db3").unlink()
    with pytest.raises(BagError, match=r"lists wbag_3\.db3, which the folder does not hold: a storage file of the "
                                       r"bag is missing; copy it next to metadata\.yaml"):
        open_bag(folder)


@pytest.mark.parametrize("content, held", [({}, "it is empty"), ({"README.md": "notes"}, "it holds 1 other entry: "
                                                                                       "README.md")])
def test_a_folder_without_a_bag_is_called_what_it_is(tmp_path, content, held):
    folder = tmp_path / "not_a_bag"
    folder.mkdir()
    for name, text in content.items():
        (folder / name).write_text(text)
    with pytest.raises(BagError) as err:
        open_bag(folder)
    assert str(err.value) == (f"{folder}: not a bag: no metadata.yaml and no .mcap, .db3 or .bag file ({held}); "
                              "pass a rosbag2 folder (with metadata.yaml), a .mcap/.db3 file or a ROS 1 .bag file")


def test_a_damaged_ros1_index_is_a_sentence_not_a_python_tuple(tmp_path):
    bag = _copy("aruco_images.bag", tmp_path)
    data = bytearray(bag.read_bytes())
    header_len = struct.unpack_from("<I", data, 13)[0]          # after the 13-byte magic: the bag header record
    header, fields, i = bytes(data[17:17 + header_len]), {}, 0
    while i < len(header):
        size = struct.unpack_from("<I", header, i)[0]
        key, value = header[i + 4:i + 4 + size].split(b"=", 1)
        fields[key], i = value, i + 4 + size
    index_pos = struct.unpack("<Q", fields[b"index_pos"])[0]
    data[index_pos:index_pos + 8] = b"\xff" * 8                 # the first connection record's header length
    bag.write_bytes(bytes(data))
    with pytest.raises(BagError) as err:
        open_bag(bag)
    assert str(err.value) == (f"{bag}: cannot open this ros1 bag: Bag index looks damaged: Header could not be read "
                              "from file; if the recording was interrupted, run `rosbag reindex` on a copy")


def test_converting_with_a_rig_suggested_from_a_bag_without_camera_names_the_bag_and_why(tmp_path):
    bag = BAGS / "rosbag2parquet_array_msgs"
    with open_bag(bag) as opened:
        rig = tmp_path / "suggested.yaml"
        rig.write_text(suggest_rig(opened).text)
    done = egorec("convert", bag, "--rig", rig, "--task", "t", "--out", tmp_path / "out", timeout=120)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr == (
        f"egorec convert: {rig} has no devices: it was suggested from {bag} by `egorec convert --suggest-rig`, which "
        f"said: no camera topic found in {bag}: none of its 2 topics is an image (sensor_msgs/msg/Image or "
        "sensor_msgs/msg/CompressedImage); it has sensor_msgs/msg/Imu, sensor_msgs/msg/JointState. A rig needs at "
        "least one camera (rows are built on its frames): fill in `devices` by hand, or suggest a rig from a bag that "
        "recorded the cameras\n")
    assert not (tmp_path / "out").exists()
