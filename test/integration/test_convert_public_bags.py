"""`egorec convert` on the real bags of shared/bags (see its README): they convert and
validate, or fail with the clear error their content deserves, leaving nothing behind."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow.compute as pc
import pytest

from egorec_ros.codecs.probe import decode_frames
from egorec_ros.bags.bagfile import open_bag
from egorec_ros.converter.calibration import with_bag_calibration
from egorec_ros.converter.split import whole_bag
from egorec_ros.messages.payloads.images import compressed_frame
from egorec_ros.messages.context import MessageContext
from egorec_ros.rig.compile import compile_rig
from egorec_ros.rig.load import load_rig
from egorec_ros.validate.validate import validate_task
from helpers.bags import BAGS, DATA, requires_public_bags
from helpers.cli import egorec
from helpers.convert import convert, data_table

pytestmark = requires_public_bags

TINY_SVO = [BAGS / "tiny_svo.bag", BAGS / "tiny_svo_rosbag2_sqlite3", BAGS / "tiny_svo_rosbag2_mcap"]
SVO_RIG = ["--rig", DATA / "tiny_svo_rig.yaml"]
ARUCO = BAGS / "aruco_images.bag"
ARUCO_RIG = ["--rig", DATA / "aruco_images_rig.yaml"]
YEAR_S = 365.25 * 86400


def rig_file(tmp_path: Path, streams: str, kind: str = "uvc") -> list:
    path = tmp_path / "rig.yaml"
    path.write_text(f"name: t\ndevices:\n  cam: {{kind: {kind}, streams: {{{streams}}}}}\n")
    return ["--rig", path]


def assert_nothing_left(out: Path, task: str = "conv") -> None:
    """No task dir (nothing was committed) and no work folder of the run."""
    assert not (out / task).exists()
    assert not out.exists() or sorted(p.name for p in out.iterdir()) == []


def test_tiny_svo_in_all_three_containers_converts_validates_and_gets_its_calibration(tmp_path):
    done = convert(TINY_SVO, tmp_path, rig_args=SVO_RIG)
    task = tmp_path / "conv"
    assert validate_task(task) == []
    tables = [data_table(task, n) for n in (1, 2, 3)]
    assert [t.num_rows for t in tables] == [10, 10, 10]        # one row per camera frame
    for n, table in enumerate(tables[1:], start=2):            # same payloads, new containers: same rows
        assert pc.all(pc.equal(table.column("episode_index"), n)).as_py()
        assert table.drop_columns("episode_index").equals(tables[0].drop_columns("episode_index"))
    # 2013 header stamps against 2023 bag time: rows on the stamp clock, wall_time on bag time
    first = tables[0].slice(0, 1).to_pylist()[0]
    assert 2013 < 1970 + first["hardware_ns"] / 1e9 / YEAR_S < 2014
    assert 2023 < 1970 + first["wall_time"] / YEAR_S < 2024
    assert sum(len(v) for v in tables[0].column("imu_ts_ns").to_pylist() if v) >= 30     # IMU not all late
    calibration = json.loads((task / "meta/info.json").read_text())["calibration"]["head_stereo"]
    assert calibration["resolution"] == [752, 480] and calibration["name"] == "svo_camera"
    assert calibration["left_camera"]["intrinsic"] == pytest.approx([414.536, 414.284, 348.805, 240.076], abs=1e-3)
    assert "calibration from /camera/camera_info" in done.stdout
    assert "arrivals shifted onto the stamp clock" in done.stdout
    assert "not mapped /camera/camera_info" not in done.stdout and "not mapped /imu/magnetometer" in done.stdout


def test_tiny_svo_with_a_stream_on_another_clock_is_refused_unless_allowed(tmp_path):
    rig = tmp_path / "mixed.yaml"
    text = (DATA / "tiny_svo_rig.yaml").read_text()
    rig.write_text(text.replace("slam: {topic: /Rig,", "slam: {topic: /Rig, stamp: receive,"))
    done = convert([TINY_SVO[0]], tmp_path / "refused", rig_args=["--rig", rig], expect=1)
    assert "tiny_svo.bag: the streams of this episode are stamped by different clocks" in done.stderr
    assert "cam.slam: bag receive time" in done.stderr and "or pass --allow-mixed-clocks to convert" in done.stderr
    assert "allow_mixed_clocks=True" not in done.stderr      # the Python keyword is no use on the command line
    assert not (tmp_path / "refused" / "conv").exists()
    allowed = convert([TINY_SVO[0]], tmp_path / "allowed", "--allow-mixed-clocks", rig_args=["--rig", rig])
    assert "streams stamped by different clocks (allowed by allow_mixed_clocks)" in allowed.stdout
    assert validate_task(tmp_path / "allowed" / "conv") == []


def test_suggested_rig_for_tiny_svo_converts_it(tmp_path):
    rig = tmp_path / "suggested.yaml"
    done = egorec("convert", "--suggest-rig", TINY_SVO[0], "-o", rig)
    assert done.returncode == 0, done.stderr
    assert "/imu/magnetometer" in rig.read_text()                   # listed as not mapped
    assert {s.topic for s in load_rig(rig).streams.values()} == {"/camera/image_raw", "/imu/data", "/Rig"}
    convert([TINY_SVO[1]], tmp_path / "out", rig_args=["--rig", rig])
    assert validate_task(tmp_path / "out" / "conv") == []
    again = egorec("convert", "--suggest-rig", TINY_SVO[0], "-o", rig)
    assert again.returncode == 2 and "exists" in again.stderr


def test_aruco_single_late_jpeg_is_refused_with_the_latency_it_needs(tmp_path):
    done = convert([ARUCO], tmp_path, rig_args=ARUCO_RIG, expect=1)
    assert "aruco_images.bag /raspicam_node/image/compressed" in done.stderr
    assert "arrive 1.237 s after their stamps" in done.stderr and "--latency-ms 1337" in done.stderr
    assert_nothing_left(tmp_path)


def test_aruco_single_jpeg_with_a_larger_latency_budget_is_one_row(tmp_path):
    convert([ARUCO], tmp_path, "--latency-ms", "1500", rig_args=ARUCO_RIG)
    task = tmp_path / "conv"
    assert validate_task(task) == []
    assert data_table(task).num_rows == 1
    calibration = json.loads((task / "meta/info.json").read_text())["calibration"]["head_stereo"]
    assert calibration["resolution"] == [1280, 960]
    assert calibration["left_camera"]["intrinsic"][0] == pytest.approx(1014.343, abs=1e-3)
    with open_bag(ARUCO) as bag:
        raw = bag.first("/raspicam_node/image/compressed")
        jpeg = compressed_frame(bag.decode(raw), MessageContext(str(ARUCO), raw.topic, raw.log_ns), depth=False).array()
    video = task / "videos/chunk-000/head_left_rgb/episode-000.mp4"
    (frame,) = [f.to_ndarray(format="rgb24") for f in decode_frames(video)]
    assert np.abs(frame.astype(int) - jpeg).mean() < 4          # the bag's picture, through H.264


@pytest.mark.parametrize("topic, reason", [
    ("/test/sensor_msgs/image", "Image 640x480 'rgb8': data has 30 bytes"),
    ("/test/sensor_msgs/compressed_image", "CompressedImage (format 'jpeg', 10 bytes)"),
])
def test_rosbags_rs_invalid_image_payloads_fail_naming_bag_topic_and_time(tmp_path, topic, reason):
    out = tmp_path / "out"
    done = convert([BAGS / "rosbags_rs_test_bag_mcap"], out,
                   rig_args=rig_file(tmp_path, f"rgb: {{topic: {topic}, width: 640, height: 480}}"), expect=1)
    failure = done.stderr.split("failure(s):")[1]
    assert f"rosbags_rs_test_bag_mcap: {topic} at bag time" in failure and reason in failure
    assert "--bad-frames" in failure
    assert_nothing_left(out)


def test_bags_without_anything_to_convert_say_so(tmp_path):
    done = convert([BAGS / "file_compression", BAGS / "wbag_sqlite3_5files"], tmp_path, "--keep-going",
                   rig_args=SVO_RIG, expect=3)
    assert done.stderr.count("nothing to convert: none of the rig's topics is in this bag") == 2
    assert "/topic (std_msgs/msg/String)" in done.stderr and "AAA (std_msgs/msg/String)" in done.stderr
    assert "--suggest-rig" in done.stderr
    assert_nothing_left(tmp_path)


def test_bag_without_the_rigs_camera_is_refused(tmp_path):
    """rosbag2parquet's array_msgs: the teleop JointState maps, but there is no image at all."""
    rig = tmp_path / "rig.yaml"
    rig.write_text("name: arm\ndevices:\n"
                   "  cam: {kind: uvc, streams: {rgb: {topic: /camera/image_raw, width: 640, height: 480}}}\n"
                   "  arm: {kind: joint_state, streams: {action: {topic: /one_shot/joint_state, dim: 3}}}\n")
    done = convert([BAGS / "rosbag2parquet_array_msgs"], tmp_path / "out", rig_args=["--rig", rig], expect=1)
    assert "no topic for the rig's video stream(s) cam.rgb (topic /camera/image_raw)" in done.stderr
    assert "the bag's image topics: none" in done.stderr
    assert_nothing_left(tmp_path / "out")


def test_a_rig_can_name_the_camera_info_topic(tmp_path):
    """CameraInfo is found by the image_transport convention, or where the rig says; a rig
    pointing at a topic the bag lacks gets no calibration (and a note, not an error)."""
    with open_bag(BAGS / "tiny_svo.bag") as bag:
        window = whole_bag(bag)[0]
        for info_topic, calibrated in (("/camera/camera_info", True), ("/elsewhere/camera_info", False)):
            rig = compile_rig({"name": "t", "devices": {"cam": {"kind": "uvc", "streams": {"rgb": {
                "topic": "/camera/image_raw", "width": 752, "height": 480, "camera_info": info_topic}}}}})
            notes: list[str] = []
            cam = with_bag_calibration(rig, bag, window, notes).devices[0]
            assert (cam.calibration is not None) == calibrated, notes
            assert any(info_topic in n for n in notes), notes
            if calibrated:
                assert cam.calibration["resolution"] == [752, 480]
