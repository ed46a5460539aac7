"""BLE glove driver on a fake of the few bleak calls it uses (BleakClient with a
disconnected callback, connect, start_notify, disconnect), fed with protocol frames
split like MTU-sized notifications from the event loop, as bleak does; bad checksums
and trailers counted; disconnect -> reconnect every 3 s; a recorded valid task."""
from __future__ import annotations

import asyncio
import threading

import numpy as np
import pytest

from helpers.drivers import Published, record, rig_with_camera, wait_for
from egorec_ros.drivers.ble_glove import BleGlove, BleGloveConfig
from egorec_ros.drivers.ble_glove_protocol import NOTIFY_UUID, hand_of, is_glove_name
from egorec_ros.drivers.glove_seats import GloveRefused, GloveSeats
from egorec_ros.drivers.health import DISCONNECTED, OK

MAC = "D4:22:CD:00:12:34"
KEY = f"ble:{MAC}"
TOPIC = "/left_glove/frame"
MTU_PAYLOAD = 244


def frame(values: np.ndarray, xor_fix: int = 0, trailer: bytes = b"\xfb\x03") -> bytes:
    """Built by hand from the documented layout."""
    body = np.asarray(values, "<u2").tobytes()
    xor = 0
    for b in body:
        xor ^= b
    return b"\xaa\x55" + body + bytes([xor ^ xor_fix]) + trailer


class FakeGlove:
    """The glove side of bleak: every BleakClient the driver makes talks to this glove."""

    def __init__(self) -> None:
        self.clients: list[FakeClient] = []
        self.reachable = threading.Event()
        self.reachable.set()

    def factory(self, address: str, disconnected_callback) -> "FakeClient":
        client = FakeClient(self, address, disconnected_callback)
        self.clients.append(client)
        return client

    @property
    def current(self) -> "FakeClient":
        return self.clients[-1]

    def notify(self, data: bytes, mtu: int = MTU_PAYLOAD) -> None:
        client = self.current
        for k in range(0, len(data), mtu):
            client.loop.call_soon_threadsafe(client.callback, 17, bytearray(data[k:k + mtu]))

    def drop_link(self) -> None:
        client = self.current
        client.loop.call_soon_threadsafe(client.disconnected_callback, client)


class FakeClient:
    def __init__(self, glove: FakeGlove, address: str, disconnected_callback) -> None:
        self.glove, self.address, self.disconnected_callback = glove, address, disconnected_callback
        self.callback = None
        self.loop = None
        self.disconnects = 0

    async def connect(self) -> bool:
        if not self.glove.reachable.is_set():
            raise TimeoutError(f"Device with address {self.address} was not found")
        return True

    async def start_notify(self, uuid: str, callback) -> None:
        assert uuid == NOTIFY_UUID
        self.loop = asyncio.get_running_loop()
        self.callback = callback

    async def disconnect(self) -> bool:
        self.disconnects += 1
        return True


@pytest.fixture
def glove():
    fake = FakeGlove()
    published = Published()
    driver = BleGlove(BleGloveConfig(MAC, TOPIC), published, GloveSeats({KEY: "left_glove"}),
                      client_factory=fake.factory).start()
    wait_for(lambda: driver.health.status == OK, "connected")
    yield fake, driver, published
    driver.stop()


def test_names_and_hands():
    assert is_glove_name("Matrix_L") and is_glove_name("matrix-R") and not is_glove_name("JBL Flip R")
    assert (hand_of("Matrix_L"), hand_of("Matrix-R"), hand_of("Matrix")) == ("left", "right", None)


def test_frames_reassembled_bit_exactly_bad_ones_counted(glove):
    fake, driver, published = glove
    rng = np.random.default_rng(2)
    a, b, c = (rng.integers(0, 65536, 256) for _ in range(3))
    fake.notify(b"\x00\x01" + frame(a) + frame(b, xor_fix=0x40) + frame(b, trailer=b"\xfb\x04") + frame(c))
    wait_for(lambda: published.count() == 2, "two good frames")
    msgs = published.on(TOPIC)
    assert np.array_equal(msgs[0].pressure, a.astype(np.float32))
    assert np.array_equal(msgs[1].pressure, c.astype(np.float32))
    assert len(msgs[0].imu_quat) == 0 and len(msgs[0].imu_valid) == 0
    bad = driver.health.bad
    assert (bad["xor"], bad["trailer"]) == (1, 1) and bad["junk_bytes"] >= 2
    assert driver.sensor == "left_glove"


def test_disconnect_then_reconnect_after_3_s(glove):
    fake, driver, published = glove
    fake.reachable.clear()
    fake.drop_link()
    wait_for(lambda: driver.health.status == DISCONNECTED, "disconnected")
    assert fake.clients[0].disconnects == 1
    fake.reachable.set()
    wait_for(lambda: driver.health.status == OK, "reconnected", timeout=10)
    assert driver.loop.delays[0] == 3.0 and driver.health.reconnects == 1
    fake.notify(frame(np.full(256, 9)))
    wait_for(lambda: published.count() == 1, "a frame after the reconnect")


def test_a_third_ble_glove_is_refused():
    seats = GloveSeats(allow_unnamed=True)
    BleGlove(BleGloveConfig("A", "/a"), Published(), seats, client_factory=FakeGlove().factory)
    BleGlove(BleGloveConfig("B", "/b"), Published(), seats, client_factory=FakeGlove().factory)
    with pytest.raises(GloveRefused):
        BleGlove(BleGloveConfig("C", "/c"), Published(), seats, client_factory=FakeGlove().factory)


def test_recorded_ble_frames_make_a_valid_task(glove, tmp_path):
    import time
    fake, driver, published = glove
    for k in range(30):
        fake.notify(frame(np.full(256, k)))
        time.sleep(1 / 60)
    wait_for(lambda: published.count() == 30, "the frames")
    rig = rig_with_camera("drivers_ble_glove_rig")
    task, result = record(tmp_path, rig, published.items, camera="cam.rgb")
    from egorec_ros.dataset.task import open_task
    values = open_task(task).episode(result.number.index).read(["observation.left_glove"]).to_pydict()
    assert max(v[0] for v in values["observation.left_glove"] if v) >= 20
