"""Which driver serves which rig device, where it is plugged, and what is reported instead."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from egorec_ros.drivers.discovery import serial_devices, v4l2_devices
from egorec_ros.drivers.glove_seats import GloveSeats
from egorec_ros.drivers.suggest_rig import suggest
from egorec_ros.live.driver_plan import PlaceError, Start, parse_places, plan
from egorec_ros.live.driver_start import build
from egorec_ros.rig.compile import RigError
from egorec_ros.rig.load import load_rig
from helpers.drivers import DATA


def port(device: str, vid: int, pid: int, serial: str) -> SimpleNamespace:
    """A pyserial list_ports entry (what discovery reads)."""
    return SimpleNamespace(device=device, vid=vid, pid=pid, serial_number=serial, product="")


def test_serial_devices_found_by_key_others_reported():
    rig = load_rig("appendix_b")
    found = serial_devices([port("/dev/ttyACM0", 0x0483, 0x5740, "364933593535"),     # left glove of the rig
                            port("/dev/ttyACM3", 0x0483, 0x5740, "999999999999"),     # a glove the rig does not name
                            port("/dev/ttyACM1", 0x303A, 0x1001, "68:EE:8F:C6:0D:BC")])  # gripper_b's board
    p = plan(rig, parse_places(["ego=cmd:/opt/s80/s80_pipe --fps 50", "ego.slam=/opt/slam/run 'a b'",
                                "gripper_b.rgb=ipc:/run/cam_b.sock"]), found)
    assert Start("left_glove", "usb_glove", "/dev/ttyACM0") in p.starts
    assert Start("gripper_b", "gripper", "/dev/ttyACM1") in p.starts
    assert Start("gripper_b", "camera_ipc", "/run/cam_b.sock") in p.starts
    assert Start("ego", "s80", ("/opt/s80/s80_pipe", "--fps", "50")) in p.starts
    assert Start("ego", "slam", ("/opt/slam/run", "a b")) in p.starts
    missing = dict(p.missing)
    assert "not plugged in" in missing["right_glove"] and "right_glove=/dev/ttyACM0" in missing["right_glove"]
    assert "gripper_a.rgb=ipc:" in missing["gripper_a.rgb"] and "gripper_a.slam=" in missing["gripper_a.slam"]
    assert "tactile" in missing["gripper_b.tactile"] and "hand_pose" in " ".join(missing)
    assert [f.key for f in p.unused] == ["usbglove:999999999999"]


def test_a_place_wins_over_discovery_and_cameras_by_kind():
    rig = load_rig("uvc_pair")
    p = plan(rig, parse_places(["cam0=ipc:/run/cam0.sock", "cam1=/tmp/clip.mp4"]), [])
    assert p.starts == [Start("cam0", "camera_ipc", "/run/cam0.sock"), Start("cam1", "uvc", "/tmp/clip.mp4")]
    assert [s.name for s in p.starts] == ["cam0.rgb", "cam1.rgb"]


def test_ble_glove_by_the_address_in_its_key_unless_no_adapter():
    rig = load_rig(DATA / "drivers_ble_glove_rig.yaml")
    assert Start("left_glove", "ble_glove", "D4:22:CD:00:12:34") in plan(rig, {}, []).starts
    assert "no Bluetooth adapter" in dict(plan(rig, {}, [], ble_adapter=False).missing)["left_glove"]


@pytest.mark.parametrize("entry, message", [
    ("nowhere", "expected ID=WHERE"),
    ("ghost=/dev/ttyACM0", "has no device 'ghost'"),
    ("left_glove.rgb=ipc:/x", "has no 'rgb' stream"),
])
def test_bad_places_are_refused_clearly(entry, message):
    with pytest.raises(PlaceError, match=message):
        plan(load_rig("appendix_b"), parse_places([entry]), [])


def test_a_camera_stream_must_be_subscribed_as_compressed_images():
    """Without `msg_type: sensor_msgs/msg/CompressedImage` the recorder would subscribe Image and
    never see the JPEG frames: the driver is refused with what to write in the rig."""
    rig = load_rig(DATA / "drivers_camera_rig.yaml")
    with pytest.raises(RigError, match="msg_type: sensor_msgs/msg/CompressedImage"):
        build(rig, Start("cam", "camera_ipc", "/run/x.sock"), lambda *_: None, GloveSeats(), lambda *_: None)
    ok = load_rig(DATA / "drivers_node_rig.yaml")
    driver = build(ok, Start("ego", "camera_ipc", "/run/x.sock"), lambda *_: None, GloveSeats(), lambda *_: None)
    assert driver.config.topic == "/ego/image_raw"


def test_uvc_cameras_found_by_their_by_id_names(tmp_path):
    """discovery lists /dev/v4l/by-id capture nodes as uvc:<name>: a rig camera with that key uses it."""
    rig = load_rig("uvc_pair")
    by_id = tmp_path / "v4l" / "by-id"
    by_id.mkdir(parents=True)
    for name in ("usb-DECXIN_Camera_01-video-index0", "usb-Other_Cam-video-index0"):
        (by_id / name).symlink_to(tmp_path / "video0")
    p = plan(rig, {}, v4l2_devices(tmp_path))
    cam0 = next(d for d in rig.devices if d.key == "uvc:usb-DECXIN_Camera_01-video-index0")
    assert Start(cam0.id, "uvc", str(by_id / "usb-DECXIN_Camera_01-video-index0")) in p.starts
    assert [f.key for f in p.unused] == ["uvc:usb-Other_Cam-video-index0"]
    assert "is not plugged in" in dict(p.missing)[next(d.id for d in rig.devices if d is not cam0) + ".rgb"]


def test_a_video_file_stands_in_for_a_uvc_camera(tmp_path):
    rig = load_rig(DATA / "drivers_node_rig.yaml")
    clip = tmp_path / "clip.mkv"
    clip.write_bytes(b"")
    camera = build(rig, Start("ego", "uvc", "/dev/video7"), lambda *_: None, GloveSeats(), lambda *_: None)
    assert (camera.config.input_format, camera.config.options["input_format"], camera.config.pace) == \
        ("video4linux2", "mjpeg", False)
    recording = build(rig, Start("ego", "uvc", str(clip)), lambda *_: None, GloveSeats(), lambda *_: None)
    assert (recording.config.input_format, dict(recording.config.options), recording.config.pace) == (None, {}, True)


def test_a_suggested_rig_is_one_the_drivers_node_can_run(tmp_path):
    """`egorec devices --suggest-rig` marks its UVC / gripper cameras as CompressedImage, so the
    drivers node starts their cameras and the recorder subscribes the type they publish."""
    by_id = tmp_path / "v4l" / "by-id"
    by_id.mkdir(parents=True)
    (by_id / "usb-Cam_A-video-index0").symlink_to(tmp_path / "video0")
    found = v4l2_devices(tmp_path) + serial_devices([port("/dev/ttyACM1", 0x303A, 0x1001, "68:EE:8F:C6:0D:BC")])
    text, _ = suggest(found)
    rig_file = tmp_path / "suggested.yaml"
    rig_file.write_text(text)
    rig = load_rig(rig_file)
    p = plan(rig, parse_places(["gripper_1.rgb=ipc:/run/g.sock"]), found)
    assert {(s.device, s.what) for s in p.starts} == {("cam0", "uvc"), ("gripper_1", "gripper"),
                                                       ("gripper_1", "camera_ipc")}
    for start in p.starts:
        build(rig, start, lambda *_: None, GloveSeats(), lambda *_: None)
