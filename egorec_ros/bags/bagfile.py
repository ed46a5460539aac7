"""Open any bag: ROS 1 ``.bag``, a rosbag2 folder (sqlite3 or mcap, split files,
zstd file or message compression), or a lone ``.mcap`` / ``.db3`` storage file
without its metadata.yaml.

Messages stream in receive-time order from rosbags' readers (mcap chunks and
sqlite3 rows are read as they are consumed), so a bag is never held in memory.
Every reader failure becomes a ``BagError`` that names the bag, the last good
message and what to do.
"""
from __future__ import annotations

from collections.abc import Collection, Generator
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

import yaml
from rosbags.rosbag1 import Reader as Ros1Reader
from rosbags.rosbag2 import Reader as Ros2Reader

from egorec_ros.bags.bagtypes import bag_typestore
from egorec_ros.bags.errors import BagError
from egorec_ros.messages.context import receive_time
from egorec_ros.messages.msg import Msg

ROS1 = "ros1"
ROSBAG2_SQLITE3 = "rosbag2/sqlite3"
ROSBAG2_MCAP = "rosbag2/mcap"

_MAGIC = {b"#ROSBAG V2.0": ROS1, b"\x89MCAP0\r\n": ROSBAG2_MCAP, b"SQLite format 3\x00": ROSBAG2_SQLITE3}
_SUFFIX = {ROS1: ".bag", ROSBAG2_MCAP: ".mcap", ROSBAG2_SQLITE3: ".db3"}
_HINT = {ROS1: "if the recording was interrupted, run `rosbag reindex` on a copy",
         ROSBAG2_MCAP: "if the recording was interrupted, run `mcap recover` on a copy",
         ROSBAG2_SQLITE3: "if the recording was interrupted, try `ros2 bag reindex` on a copy"}


@dataclass(frozen=True)
class TopicInfo:
    topic: str
    msgtype: str
    count: int
    problem: str | None = None     # why its messages cannot be decoded (None: decodable)

    @property
    def decodable(self) -> bool:
        return self.problem is None


@dataclass(frozen=True, slots=True)
class RawMessage:
    """One serialized message; ``log_ns`` is the bag's receive (log) time."""

    topic: str
    msgtype: str
    log_ns: int
    data: bytes | memoryview


class Bag:
    """An open bag. Use ``open_bag``; close it (or use ``with``) when done."""

    def __init__(self, path: Path, storage: str, reader: Ros1Reader | Ros2Reader):
        self.path = path
        self.storage = storage
        self._reader: Ros1Reader | Ros2Reader | None = reader
        self._ros1 = storage == ROS1
        self._connections = list(reader.connections)
        self._store, problems = bag_typestore(self._connections, ros1=self._ros1)
        self.topics: dict[str, TopicInfo] = {}
        for topic in sorted({c.topic for c in self._connections}):
            conns = [c for c in self._connections if c.topic == topic]
            types = sorted({c.msgtype for c in conns})
            problem = (f"carries several message types ({', '.join(types)})" if len(types) > 1
                       else problems.get(types[0]))
            self.topics[topic] = TopicInfo(topic, types[0], sum(c.msgcount for c in conns), problem)
        self.message_count = int(reader.message_count)
        self.start_ns = int(reader.start_time) if self.message_count else 0
        self.end_ns = int(reader.end_time) if self.message_count else 0   # exclusive

    # ---- reading ---------------------------------------------------------------------------

    def messages(self, topics: Collection[str] | None = None, start_ns: int | None = None,
                 stop_ns: int | None = None) -> Generator[RawMessage, None, None]:
        """Messages of ``topics`` (None: all) with start_ns <= log time < stop_ns, in log-time order."""
        conns = [c for c in self._connections if topics is None or c.topic in topics]
        if not conns:
            return
        last: RawMessage | None = None
        try:
            for conn, log_ns, data in self._reader.messages(conns, start=start_ns, stop=stop_ns):
                last = RawMessage(conn.topic, conn.msgtype, log_ns, data)
                yield last
        except Exception as exc:  # any reader failure (truncated chunk, sqlite error, zstd error, ...)
            after = f"after {last.topic} at {self.when(last.log_ns)}" if last else "before the first message"
            raise BagError(f"{self.path}: reading failed {after}: {exc}; {_HINT[self.storage]}") from exc

    def decode(self, raw: RawMessage) -> Msg:
        """The deserialized message; BagError when its bytes do not fit its type."""
        try:
            if self._ros1:
                return self._store.deserialize_ros1(raw.data, raw.msgtype)
            return self._store.deserialize_cdr(raw.data, raw.msgtype)
        except Exception as exc:
            raise BagError(f"{self.path}: message on {raw.topic} ({raw.msgtype}) at {self.when(raw.log_ns)} "
                           f"cannot be decoded: {exc}") from exc

    def first(self, topic: str, start_ns: int | None = None, stop_ns: int | None = None) -> RawMessage | None:
        """First message of one topic in a time range (cheap: readers seek by index)."""
        it = self.messages([topic], start_ns, stop_ns)
        try:
            return next(it, None)
        finally:
            it.close()

    def when(self, log_ns: int) -> str:
        return receive_time(log_ns, self.start_ns)

    # ---- lifetime --------------------------------------------------------------------------

    def close(self) -> None:
        if self._reader is not None:
            reader, self._reader = self._reader, None
            reader.close()

    def __enter__(self) -> Bag:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


def open_bag(path: str | Path) -> Bag:
    """Open a bag of any supported kind; BagError (with the reason) if it cannot be read."""
    path = Path(path)
    storage, target = _locate(path)
    reader = Ros1Reader(target) if storage == ROS1 else Ros2Reader(target)
    try:
        reader.open()
    except Exception as exc:
        raise BagError(f"{path}: cannot open this {storage} bag: {exc}; {_HINT[storage]}") from exc
    try:
        return Bag(path, storage, reader)
    except Exception as exc:
        reader.close()
        raise BagError(f"{path}: cannot read the bag's connections: {exc}") from exc


def _locate(path: Path) -> tuple[str, Path]:
    """-> (storage kind, path to hand to the rosbags reader)."""
    if not path.exists():
        raise BagError(f"{path}: no such bag file or folder")
    if path.is_dir():
        if (path / "metadata.yaml").is_file():
            return _folder_storage(path), path
        files = sorted(p for p in path.iterdir() if p.suffix in (".mcap", ".db3"))
        if len(files) != 1:
            raise BagError(f"{path}: a rosbag2 folder without metadata.yaml and with {len(files)} storage files "
                           f"({', '.join(p.name for p in files) or 'none'}); pass one .mcap/.db3 file, or "
                           "restore metadata.yaml with `ros2 bag reindex`")
        path = files[0]
    with path.open("rb") as f:
        head = f.read(16)
    storage = next((kind for magic, kind in _MAGIC.items() if head.startswith(magic)), None)
    if storage is None:
        what = "zstd-compressed" if head.startswith(b"\x28\xb5\x2f\xfd") else "unrecognised"
        raise BagError(f"{path}: {what} file, not a ROS 1 bag, MCAP or sqlite3 file"
                       + ("; open the rosbag2 folder with its metadata.yaml instead" if what != "unrecognised"
                          else ""))
    if storage != ROS1 and path.suffix != _SUFFIX[storage]:     # rosbags picks rosbag2 storage by suffix
        raise BagError(f"{path}: the file content is {storage} but its name ends in {path.suffix!r}; "
                       f"rename it to *{_SUFFIX[storage]}")
    return storage, path


def _folder_storage(path: Path) -> str:
    """Storage named by metadata.yaml (an unreadable file is reported by rosbags on open)."""
    try:
        info = yaml.safe_load((path / "metadata.yaml").read_text(encoding="utf-8"))
        return ROSBAG2_MCAP if info["rosbag2_bagfile_information"]["storage_identifier"] == "mcap" \
            else ROSBAG2_SQLITE3
    except (yaml.YAMLError, KeyError, TypeError, OSError, UnicodeDecodeError):
        return ROSBAG2_SQLITE3
