"""`egorec devices` without hardware: each probe fed with what the machine would give
(pyserial's ListPortInfo, a /dev tree with v4l/by-id links, bleak-like scan results,
rs-enumerate-devices output); the suggested rig compiles and names what was found;
RealSense topic names and depth units."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
import yaml
from serial.tools.list_ports_common import ListPortInfo

from helpers.cli import egorec
from egorec_ros.drivers import discovery, realsense
from egorec_ros.drivers.suggest_rig import suggest
from egorec_ros.rig.compile import compile_rig
from egorec_ros.rig.load import load_rig

ENUMERATE = """Device Name                   Serial Number       Firmware Version
Intel RealSense D435          213622075531        05.13.00.50
Intel RealSense D405          128422270582        05.12.14.100
"""


def port(device: str, vid: int, pid: int, serial: str, product: str = "") -> ListPortInfo:
    p = ListPortInfo(device, skip_link_detection=True)
    p.vid, p.pid, p.serial_number, p.product = vid, pid, serial, product
    return p


def found_machine(tmp_path):
    by_id = tmp_path / "v4l" / "by-id"
    by_id.mkdir(parents=True)
    for n, name in enumerate(["usb-DECXIN_Camera_01-video-index0", "usb-DECXIN_Camera_01-video-index1",
                              "usb-Intel_R__RealSense_TM__Depth_Camera_435-video-index0"]):
        (tmp_path / f"video{n}").touch()
        (by_id / name).symlink_to(tmp_path / f"video{n}")
    ports = [port("/dev/ttyACM0", 0x0483, 0x5740, "364933593535", "STM32 Virtual ComPort"),
             port("/dev/ttyACM1", 0x0483, 0x5740, "364133593535"),
             port("/dev/ttyACM2", 0x303A, 0x1001, "CC:BA:97:25:B4:44", "USB JTAG/serial debug unit"),
             port("/dev/ttyUSB0", 0x1A86, 0x7523, "")]
    scan = [SimpleNamespace(name="Matrix_R", address="D4:22:CD:00:12:35"), SimpleNamespace(name=None, address="x"),
            SimpleNamespace(name="Mi Band", address="y")]
    return (discovery.serial_devices(ports) + discovery.v4l2_devices(tmp_path) + discovery.ble_gloves(scan)
            + discovery.realsense_devices(ENUMERATE))


def test_probes_find_and_key_the_devices(tmp_path):
    found = {f.key: f for f in found_machine(tmp_path)}
    assert sorted(found) == sorted([
        "usbglove:364933593535", "usbglove:364133593535", "gripper:CC:BA:97:25:B4:44",
        "uvc:usb-DECXIN_Camera_01-video-index0", "ble:D4:22:CD:00:12:35", "d435:213622075531", "d435:128422270582"])
    assert found["ble:D4:22:CD:00:12:35"].hand == "right"
    assert found["d435:128422270582"].name == "D405"
    assert found["usbglove:364933593535"].where == "/dev/ttyACM0"


def test_video_nodes_without_by_id_names(tmp_path):
    for n in (0, 2, 10):
        (tmp_path / f"video{n}").touch()
    assert [f.key for f in discovery.v4l2_devices(tmp_path)] == ["uvc:video0", "uvc:video2", "uvc:video10"]


def test_suggested_rig_compiles_and_leaves_a_third_glove_out(tmp_path):
    devices = found_machine(tmp_path)
    text, notes = suggest(devices)
    doc = yaml.safe_load(text)
    rig = compile_rig(doc)
    gloves = {d.sensor: d.key for d in rig.devices if d.sensor}
    assert gloves == {"left_glove": "usbglove:364933593535", "right_glove": "ble:D4:22:CD:00:12:35"}, \
        "the BLE glove named R takes the right seat"
    assert any("usbglove:364133593535" in n and "only two glove columns" in n for n in notes)
    assert sorted(d.kind for d in rig.devices) == ["ble_glove", "d435", "d435", "gripper", "usb_glove", "uvc"]
    assert doc["devices"]["camera"]["streams"]["depth"]["topic"] == "/camera/camera/depth/image_rect_raw"
    assert "# TODO" in text


def test_nothing_plugged_in_is_a_clear_error():
    with pytest.raises(ValueError, match="no known device"):
        suggest([])


def test_realsense_topics_match_the_shipped_rig_and_depth_units():
    rig = load_rig("d435_single")
    assert {s.role: s.topic for s in rig.streams.values()} == realsense.topics()
    assert realsense.topics(aligned=True)["depth"] == "/camera/camera/aligned_depth_to_color/image_raw"
    z16 = np.array([[0, 1, 4, 5, 6, 65535]], np.uint16)
    assert realsense.sdk_depth_to_mm(z16, "D405").tolist() == [[0, 0, 0, 0, 1, 6554]]
    assert realsense.sdk_depth_to_mm(z16, "d435").tolist() == z16.tolist()
    assert realsense.launch_arguments(rig, rig.devices[0])["serial_no"] == "'213622075531'"


def test_the_command_runs_on_this_machine(tmp_path):
    out = egorec("devices", "--no-ble", "--json")
    assert out.returncode == 0, out.stderr
    assert '"skipped"' in out.stdout
    missing = egorec("devices", "--no-ble", "--rig", "gripper_single")
    assert missing.returncode in (0, 1)
    assert missing.returncode == 0 or "is not plugged in" in missing.stderr
