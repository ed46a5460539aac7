"""USB glove driver end to end through a pty: a simulated glove writes the exact bytes
of the protocol (split frames, CRC errors, junk, wrong lengths, old firmware, 13-bit
ADC values), is unplugged and plugged back; pyserial on our side; decoded values are
checked bit-exactly and the output is recorded into a task that validates."""
from __future__ import annotations

import os
import time

import numpy as np
import pytest
import serial

from helpers.drivers import Published, PtyDevice, record, rig_with_camera, wait_for
from helpers.usb_glove_wire import adc_payload, crc_bitwise, frame, imu_payload
from egorec_ros.drivers.glove_seats import GloveRefused, GloveSeats
from egorec_ros.drivers.health import DISCONNECTED, OK
from egorec_ros.drivers.usb_glove import UsbGlove, UsbGloveConfig
from egorec_ros.drivers.usb_glove_protocol import crc16_ccitt_false

LEFT = "usbglove:364933593535"
RIGHT = "usbglove:364133593535"
TOPIC = "/left_glove/frame"


def test_crc_is_ccitt_false():
    assert crc16_ccitt_false(b"123456789") == 0x29B1 == crc_bitwise(b"123456789")
    data = np.random.default_rng(0).integers(0, 256, 700, dtype=np.uint8).tobytes()
    assert crc16_ccitt_false(data) == crc_bitwise(data)


@pytest.fixture
def glove(tmp_path):
    device = PtyDevice(tmp_path / "usb-STMicro_glove-if00")
    published = Published()
    statuses = []
    driver = UsbGlove(UsbGloveConfig(str(device.link), LEFT, TOPIC), published, GloveSeats({LEFT: "left_glove"}),
                      on_status=lambda s, d: statuses.append(s))
    driver.start()
    wait_for(lambda: driver.health.status == OK, "the glove port to open")
    yield device, driver, published, statuses
    driver.stop()
    device.close()


def quaternions(rng) -> tuple[np.ndarray, int, np.ndarray]:
    """16 Q14 quaternions (w, x, y, z ints) covering the validity rule, the present mask
    and the validity each must get."""
    q = rng.integers(-9000, 9000, (16, 4))
    q[:, 0] = 16384                                        # |q|² in (1, 2.25): valid
    q[3] = (0, 0, 0, 0)                                    # |q|² = 0: not valid
    q[4] = (8192, 0, 0, 0)                                 # |q|² = 0.25 exactly: not valid (strict)
    q[5] = (8193, 0, 0, 0)                                 # just above 0.25: valid
    q[6] = (24576, 0, 0, 0)                                # |q|² = 2.25 exactly: not valid
    q[7] = (-32768, 0, 0, 0)                               # |q|² = 4: not valid
    present = 0xFFFF & ~(1 << 9)                           # sensor 9 absent
    valid = np.ones(16, np.float32)
    valid[[3, 4, 6, 7, 9]] = 0
    return q, present, valid


def test_frames_decode_bit_exactly_through_split_and_corrupt_bytes(glove):
    device, driver, published, _ = glove
    rng = np.random.default_rng(1)
    q, present, valid = quaternions(rng)
    counts = rng.integers(0, 4096, 256)
    counts[0], counts[255] = 0, 4095
    good_imu = frame(2, 100, 1_000_000, imu_payload(q), flags=present)
    good_adc = frame(3, 200, 1_016_000, adc_payload(counts))
    stream = (b"\x00\x13junk" + good_imu
              + frame(3, 201, 1_010_000, adc_payload(counts), crc_xor=0x0100)      # CRC error
              + frame(1, 5, 1_011_000, b"fw 1.2.2 ok")                            # status text
              + frame(3, 202, 1_012_000, adc_payload(counts), fw=(1, 2, 1))        # firmware too old
              + frame(3, 203, 1_013_000, adc_payload(counts)[:-2])                 # short ADC payload
              + frame(9, 204, 1_014_000, b"")                                      # unknown type
              + frame(3, 205, 1_015_000, adc_payload(np.full(256, 4096)))          # 13-bit value
              + good_adc)
    for piece in np.array_split(np.frombuffer(stream, np.uint8), 37):                # split frames
        device.write(piece.tobytes())
    wait_for(lambda: published.count(TOPIC) >= 1 and driver.health.bad.get("adc_range"), "the frames")
    wait_for(lambda: driver.decoder.device_status, "the status text")

    (msg,) = published.on(TOPIC)
    assert msg.__msgtype__ == "egorec_ros/msg/GloveFrame"
    assert np.array_equal(msg.pressure, counts.astype(np.float32))
    want_quat = (q[:, [1, 2, 3, 0]] / 16384.0).astype(np.float32).reshape(-1)
    assert msg.imu_quat.dtype == np.float32 and np.array_equal(msg.imu_quat, want_quat)
    assert np.array_equal(msg.imu_valid, valid)
    bad = driver.health.bad
    assert (bad["crc"], bad["firmware"], bad["length"], bad["type"], bad["adc_range"]) == (1, 1, 1, 1, 1)
    assert bad["junk_bytes"] >= 6
    assert driver.decoder.device_status == "fw 1.2.2 ok"
    snap = driver.health.snapshot()                       # what a node reports as diagnostics
    assert (snap["status"], snap["published"], snap["bad"]["crc"], snap["device"]) == ("ok", 1, 1, LEFT)
    assert msg.header.stamp.sec * 10**9 + msg.header.stamp.nanosec <= published.items[0][2]


def test_adc_without_a_recent_imu_frame_has_no_imu_fields(glove):
    device, _, published, _ = glove
    device.write(frame(2, 1, 0, imu_payload(np.tile([16384, 0, 0, 0], (16, 1))), flags=0xFFFF))
    device.write(frame(3, 1, 200_000, adc_payload(np.arange(256))))                 # IMU 200 ms older
    wait_for(lambda: published.count(TOPIC) == 1, "the frame")
    (msg,) = published.on(TOPIC)
    assert len(msg.imu_quat) == 0 and len(msg.imu_valid) == 0
    assert np.array_equal(msg.pressure, np.arange(256, dtype=np.float32))


def test_stamps_follow_the_glove_clock_not_the_read_jitter(glove):
    device, _, published, _ = glove
    for k in range(6):
        device.write(frame(3, k, 4_000_000_000 + k * 16_667, adc_payload(np.full(256, k))))   # wraps u32 µs
        wait_for(lambda k=k: published.count(TOPIC) == k + 1, "a frame")
    stamps = np.array([m.header.stamp.sec * 10**9 + m.header.stamp.nanosec for m in published.on(TOPIC)])
    assert np.all(np.diff(stamps) > 0)
    assert np.all(stamps <= np.array([a for _, _, a in published.items]))
    device.write(frame(3, 6, (4_000_000_000 + 6 * 16_667) % 2**32, adc_payload(np.full(256, 6))))
    wait_for(lambda: published.count(TOPIC) == 7, "the frame after the wrap")
    last = published.on(TOPIC)[-1].header.stamp
    assert last.sec * 10**9 + last.nanosec > stamps[-1]


def test_unplug_and_replug_reconnect_with_status(glove):
    device, driver, published, statuses = glove
    device.write(frame(3, 1, 10, adc_payload(np.full(256, 1))))
    wait_for(lambda: published.count(TOPIC) == 1, "a frame before the unplug")
    device.unplug()
    wait_for(lambda: driver.health.status == DISCONNECTED, "disconnected")
    wait_for(lambda: len(driver.loop.delays) >= 3, "a few reconnect attempts")
    assert driver.loop.delays[:3] == [0.2, 0.4, 0.8]
    device.plug()
    wait_for(lambda: driver.health.status == OK, "reconnected")
    device.write(frame(3, 2, 20, adc_payload(np.full(256, 2))))
    wait_for(lambda: published.count(TOPIC) == 2, "a frame after the replug")
    assert published.on(TOPIC)[-1].pressure[0] == 2.0
    assert driver.health.reconnects == 1
    assert statuses[:3] == [OK, DISCONNECTED, OK]
    assert driver.health.bad.get("seq_gap", 0) == 0, "sequence numbers restart after a replug"


def test_the_port_is_exclusive(glove):
    device, _, _, _ = glove
    with pytest.raises(serial.SerialException):
        serial.Serial(str(device.link), 115200, exclusive=True)


def test_a_third_glove_is_refused(tmp_path):
    seats = GloveSeats({LEFT: "left_glove", RIGHT: "right_glove"})
    first = UsbGlove(UsbGloveConfig("/dev/null", LEFT, "/l"), Published(), seats)
    UsbGlove(UsbGloveConfig("/dev/null", RIGHT, "/r"), Published(), seats)
    with pytest.raises(GloveRefused, match="not in the rig"):
        UsbGlove(UsbGloveConfig("/dev/null", "usbglove:999", "/x"), Published(), seats)
    free = GloveSeats(allow_unnamed=True)
    assert [free.claim("a"), free.claim("b")] == ["left_glove", "right_glove"]
    with pytest.raises(GloveRefused, match="only two glove columns"):
        free.claim("c")
    first.stop()
    assert GloveSeats.from_rig(rig_with_camera("drivers_gloves_rig")).claim(RIGHT) == "right_glove"


def test_recorded_glove_frames_make_a_valid_task(tmp_path):
    rig = rig_with_camera("drivers_gloves_rig")
    seats = GloveSeats.from_rig(rig)
    devices = {k: PtyDevice(tmp_path / k.replace(":", "_")) for k in (LEFT, RIGHT)}
    published = Published()
    drivers = [UsbGlove(UsbGloveConfig(str(devices[k].link), k, t), published, seats).start()
               for k, t in ((LEFT, "/left_glove/frame"), (RIGHT, "/right_glove/frame"))]
    try:
        wait_for(lambda: all(d.health.status == OK for d in drivers), "both gloves")
        q = np.tile([16384, 0, 0, 0], (16, 1))
        start = time.monotonic()
        for k in range(45):                     # 0.75 s at 60 Hz, on a glove clock that runs in real time
            time.sleep(max(0.0, start + k / 60 - time.monotonic()))
            us = int((time.monotonic() - start) * 1e6)
            for n, dev in enumerate(devices.values()):
                dev.write(frame(2, k, us, imu_payload(q), flags=0xFFFF)
                          + frame(3, k, us + 100, adc_payload(np.full(256, k + n))))
        wait_for(lambda: published.count() == 2 * 45, "frames")
    finally:
        for d in drivers:
            d.stop()
        for dev in devices.values():
            dev.close()
    task, result = record(tmp_path, rig, published.items, camera="cam.rgb")
    from egorec_ros.dataset.task import open_task
    table = open_task(task).episode(result.number.index).read(["observation.left_glove",
                                                               "observation.right_glove_imu_valid"]).to_pydict()
    left = np.array(table["observation.left_glove"], dtype=np.float32)   # a row without a new sample: zeros
    assert left.shape[1] == 256 and np.all(left == left[:, :1]), "each row one frame of the glove"
    sent = left[left[:, 0] > 0, 0]
    assert len(sent) and np.all(np.diff(sent) > 0) and set(sent) <= set(range(1, 45))
    valid = np.array(table["observation.right_glove_imu_valid"]).sum(axis=1)
    assert set(valid) <= {0.0, 16.0} and 16.0 in valid, "all 16 IMUs valid in a row with a sample"


def test_a_glove_whose_usb_serial_is_not_the_rig_key_is_not_used(tmp_path, monkeypatch):
    from serial.tools import list_ports
    from serial.tools.list_ports_common import ListPortInfo
    device = PtyDevice(tmp_path / "usb-STMicro_glove-if00")
    listed = ListPortInfo(os.ttyname(device.slave), skip_link_detection=True)
    listed.vid, listed.pid, listed.serial_number = 0x0483, 0x5740, "999999999999"
    monkeypatch.setattr(list_ports, "comports", lambda: [listed])
    published = Published()
    driver = UsbGlove(UsbGloveConfig(str(device.link), LEFT, TOPIC), published, GloveSeats({LEFT: "left_glove"}))
    driver.start()
    try:
        wait_for(lambda: len(driver.loop.delays) >= 1, "the refusal")
        assert driver.health.status == DISCONNECTED
        assert "usbglove:999999999999" in driver.health.detail and LEFT in driver.health.detail
        listed.serial_number = LEFT.split(":")[1]                      # the right glove on that port
        wait_for(lambda: driver.health.status == OK, "accepted once the serial matches")
    finally:
        driver.stop()
        device.close()
