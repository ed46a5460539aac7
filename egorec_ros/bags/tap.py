"""Every message the live input receives, also written to a rosbag2 (mcap) as it arrives.

The bag holds the serialized bytes exactly as they came over the wire, with the host arrival
time as receive time, so ``egorec convert`` of the bag replays what the recorder saw: the
same rows as the live recording (tested in test_transport_dds_replay.py), and a record of the
raw session for re-conversion with another rig or codec later.
"""
from __future__ import annotations

import threading
from pathlib import Path

from rosbags.interfaces import Connection
from rosbags.rosbag2 import StoragePlugin
from rosbags.rosbag2 import Writer as Ros2Writer

from egorec_ros.messages.typestores import ros2_typestore


class BagTap:
    """``tap(topic, msgtype, cdr, arrival_ns)`` from the transport thread; ``close()`` finishes the bag."""

    def __init__(self, path: str | Path) -> None:
        path = Path(path)
        if path.exists():
            raise FileExistsError(f"{path} exists; choose a new folder for the bag")
        self.path = path
        self._store = ros2_typestore()
        writer = Ros2Writer(path, version=Ros2Writer.VERSION_LATEST, storage_plugin=StoragePlugin.MCAP)
        writer.open()
        self._writer: Ros2Writer | None = writer        # None once closed
        self._connections: dict[tuple[str, str], Connection] = {}
        self._lock = threading.Lock()
        self.messages = 0

    def __call__(self, topic: str, msgtype: str, cdr: bytes, arrival_ns: int) -> None:
        with self._lock:
            if self._writer is None:
                return
            key = (topic, msgtype)
            if key not in self._connections:
                self._connections[key] = self._writer.add_connection(topic, msgtype, typestore=self._store)
            self._writer.write(self._connections[key], arrival_ns, cdr)
            self.messages += 1

    def close(self) -> None:
        with self._lock:
            if self._writer is not None:
                self._writer.close()
                self._writer = None
