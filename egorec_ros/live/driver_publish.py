"""A driver core's ``publish(topic, msg)`` on a transport: the message object is serialized
with the shared typestore (as ``sim_publish`` and the bag writer do) and published raw.

QoS: images best effort like camera drivers (``sensor_data``: a late frame is worth less
than the next one), everything else reliable (small messages; a glove frame or a pose lost
on a busy host is a hole in the episode). The recorder subscribes best effort, which
matches both. Publishers are made on first use, one per (topic, type), under a lock:
driver threads publish concurrently.
"""
from __future__ import annotations

import threading

from egorec_ros.messages.payloads.images import COMPRESSED_IMAGE, IMAGE
from egorec_ros.messages.typestores import ros2_typestore
from egorec_ros.transport.base import DEFAULT, SENSOR_DATA, Publisher, QoS, Transport

IMAGE_TYPES = (IMAGE, COMPRESSED_IMAGE)


def qos_for(msgtype: str) -> QoS:
    return SENSOR_DATA if msgtype in IMAGE_TYPES else DEFAULT


class TransportPublish:
    """Callable as a driver's ``Publish``."""

    def __init__(self, transport: Transport) -> None:
        self._transport = transport
        self._store = ros2_typestore()
        self._pubs: dict[tuple[str, str], Publisher] = {}
        self._lock = threading.Lock()

    def __call__(self, topic: str, msg: object) -> None:
        msgtype: str = msg.__msgtype__    # type: ignore[attr-defined]  # rosbags message classes carry it
        self.publisher(topic, msgtype).publish(bytes(self._store.serialize_cdr(msg, msgtype)))

    def publisher(self, topic: str, msgtype: str) -> Publisher:
        """The publisher of ``topic`` (made now if new: subscribers can match it before data flows)."""
        pub = self._pubs.get((topic, msgtype))
        if pub is None:
            with self._lock:
                pub = self._pubs.get((topic, msgtype))
                if pub is None:
                    pub = self._pubs[(topic, msgtype)] = self._transport.publisher(topic, msgtype, qos_for(msgtype))
        return pub
