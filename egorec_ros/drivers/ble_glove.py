"""BLE data glove driver core (bleak): notifications -> ``egorec_ros/msg/GloveFrame``
(pressure only; BLE gloves have no IMU). The glove has no clock: a frame is stamped
with the host time of the notification that began it. Reconnect every 3 s.

Only a few bleak calls are used — ``BleakClient(address, disconnected_callback=...)``,
``connect``, ``start_notify``, ``disconnect`` — so tests run on a fake of them.
"""
from __future__ import annotations

import asyncio
from typing import Any
from collections.abc import Callable
from dataclasses import dataclass

from egorec_ros.messages.payloads.gloves import glove_message
from egorec_ros.drivers import clock
from egorec_ros.drivers.ble_glove_protocol import NOTIFY_UUID, FrameReader
from egorec_ros.drivers.glove_seats import GloveSeats
from egorec_ros.drivers.health import Health
from egorec_ros.drivers.publish import Publish, header, store
from egorec_ros.drivers.reconnect import Backoff, DeviceLoop, Driver

RECONNECT_S = 3.0
CONNECT_TIMEOUT_S = 10.0
POLL_S = 0.05
KEY_PREFIX = "ble:"


@dataclass(frozen=True)
class BleGloveConfig:
    address: str                  # MAC (Linux) or the platform's BLE id
    topic: str
    key: str = ""                 # ble:<MAC> by default
    frame_id: str = ""

    @property
    def device_key(self) -> str:
        return self.key or KEY_PREFIX + self.address


def _bleak_client(address: str, disconnected_callback: Callable) -> object:
    from bleak import BleakClient
    return BleakClient(address, disconnected_callback=disconnected_callback, timeout=CONNECT_TIMEOUT_S)


class BleGloveDecoder:
    def __init__(self, topic: str, health: Health, publish: Publish, frame_id: str = "") -> None:
        self.topic, self.frame_id, self.health, self._publish = topic, frame_id, health, publish
        self.reset()

    def reset(self) -> None:
        self._reader = FrameReader(self.health.drop)

    def feed(self, data: bytes, read_ns: int) -> None:
        for stamp, pressure in self._reader.feed(data, read_ns):
            self._publish(self.topic, glove_message(store(), {"pressure": pressure}, header(stamp, self.frame_id)))
            self.health.sent()


class BleGlove(Driver):
    def __init__(self, config: BleGloveConfig, publish: Publish, seats: GloveSeats, on_status=None,
                 client_factory: Callable[..., object] = _bleak_client) -> None:
        self.config = config
        self.sensor = seats.claim(config.device_key)
        self._seats = seats
        self._client_factory = client_factory
        self.health = Health(config.device_key, on_status)
        self.decoder = BleGloveDecoder(config.topic, self.health, publish, config.frame_id)
        self.loop = DeviceLoop(config.device_key, self._session, self.health, Backoff(RECONNECT_S, RECONNECT_S))

    def stop(self) -> None:
        super().stop()
        self._seats.release(self.config.device_key)

    def _session(self, loop: DeviceLoop) -> None:
        asyncio.run(self._connected(loop))

    async def _connected(self, loop: DeviceLoop) -> None:
        gone = asyncio.Event()
        aio = asyncio.get_running_loop()
        client: Any = self._client_factory(self.config.address,
                                      disconnected_callback=lambda _c: aio.call_soon_threadsafe(gone.set))
        try:
            await client.connect()
            self.decoder.reset()
            await client.start_notify(NOTIFY_UUID, self._notified)
            loop.opened(f"{self.config.address} as {self.sensor}")
            while not gone.is_set() and not loop.stopping:
                await asyncio.sleep(POLL_S)
        except Exception as exc:   # noqa: BLE001 - bleak raises BleakError and platform errors alike
            raise ConnectionError(f"{self.config.address}: {type(exc).__name__}: {exc}") from exc
        finally:
            try:
                await client.disconnect()
            except Exception:      # noqa: BLE001 - already gone
                pass
        if gone.is_set():
            raise ConnectionError(f"{self.config.address}: the glove disconnected")

    def _notified(self, _sender: object, data: bytearray) -> None:
        self.decoder.feed(bytes(data), clock.now_ns())
