"""Open any bag: ROS 1 ``.bag``, a rosbag2 folder (sqlite3 or mcap, split files,
zstd file or message compression), or a lone ``.mcap`` / ``.db3`` storage file
without its metadata.yaml.

Messages stream in receive-time order from rosbags' readers (mcap chunks and
sqlite3 rows are read as they are consumed), so a bag is never held in memory.
Every reader failure becomes a ``BagError`` that names the bag, the last good
message and what to do.
"""
from __future__ import annotations

import re
from collections.abc import Collection, Generator
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

import yaml
from rosbags.rosbag1 import Reader as Ros1Reader
from rosbags.rosbag2 import Reader as Ros2Reader

from egorec_ros.bags.bagtypes import bag_typestore, ros2_type_name
from egorec_ros.bags.errors import BagError
from egorec_ros.bags.zstd_chunks import register as register_zstd_chunks
from egorec_ros.messages.context import receive_time
from egorec_ros.messages.decode import deserialize
from egorec_ros.messages.msg import Msg

ROS1 = "ros1"
ROSBAG2_SQLITE3 = "rosbag2/sqlite3"
ROSBAG2_MCAP = "rosbag2/mcap"

_MAGIC = {b"#ROSBAG V2.0": ROS1, b"\x89MCAP0\r\n": ROSBAG2_MCAP, b"SQLite format 3\x00": ROSBAG2_SQLITE3}
_SUFFIX = {ROS1: ".bag", ROSBAG2_MCAP: ".mcap", ROSBAG2_SQLITE3: ".db3"}
_HINT = {ROS1: "if the recording was interrupted, run `rosbag reindex` on a copy",
         ROSBAG2_MCAP: "if the recording was interrupted, run `mcap recover` on a copy",
         # an interrupted sqlite3 recording is a readable db; an unreadable one is damaged
         ROSBAG2_SQLITE3: "the sqlite3 file is damaged (truncated or corrupt); `ros2 bag reindex` only rebuilds "
                          "metadata.yaml and cannot repair it: salvage the readable rows with "
                          "`sqlite3 BROKEN.db3 .recover | sqlite3 FIXED.db3` and convert FIXED.db3"}

register_zstd_chunks()


def normal_topic(name: str) -> str:
    """A topic name as ROS resolves it: ``raspicam_node/camera_info`` (relative, as some
    recorders and rig files write it), ``/raspicam_node/camera_info`` and
    ``/raspicam_node//camera_info/`` are one topic. Compare topics only through this."""
    return "/" + "/".join(part for part in name.split("/") if part)


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
        self._connections = list(reader.connections)      # the reader's own: it matches them by type name
        self._msgtype = {c.id: ros2_type_name(c.msgtype) for c in self._connections}
        typed = [c._replace(msgtype=self._msgtype[c.id]) for c in self._connections]
        self._store, problems = bag_typestore(typed, ros1=self._ros1)
        self.topics: dict[str, TopicInfo] = {}
        for topic in sorted({c.topic for c in typed}):
            conns = [c for c in typed if c.topic == topic]
            types = sorted({c.msgtype for c in conns})
            problem = (f"carries several message types ({', '.join(types)})" if len(types) > 1
                       else problems.get(types[0]))
            self.topics[topic] = TopicInfo(topic, types[0], sum(c.msgcount for c in conns), problem)
        self._normal = {normal_topic(t): info for t, info in self.topics.items()}
        self.message_count = int(reader.message_count)
        self.start_ns = int(reader.start_time) if self.message_count else 0
        self.end_ns = int(reader.end_time) if self.message_count else 0   # exclusive

    def find(self, topic: str) -> TopicInfo | None:
        """The bag's topic of that name, written with or without its leading slash."""
        return self.topics.get(topic) or self._normal.get(normal_topic(topic))

    # ---- reading ---------------------------------------------------------------------------

    def messages(self, topics: Collection[str] | None = None, start_ns: int | None = None,
                 stop_ns: int | None = None) -> Generator[RawMessage, None, None]:
        """Messages of ``topics`` (None: all) with start_ns <= log time < stop_ns, in log-time order."""
        conns = [c for c in self._connections if topics is None or c.topic in topics]
        if not conns:
            return
        reader = self._reader
        if reader is None:      # a bug, not a bad bag: like reading a closed file
            raise ValueError(f"{self.path}: the bag is closed; read it before closing it (or inside its `with`)")
        last: RawMessage | None = None
        try:
            for conn, log_ns, data in reader.messages(conns, start=start_ns, stop=stop_ns):
                last = RawMessage(conn.topic, self._msgtype[conn.id], log_ns, data)
                yield last
        except Exception as exc:  # any reader failure (truncated chunk, sqlite error, zstd error, ...)
            after = f"after {last.topic} at {self.when(last.log_ns)}" if last else "before the first message"
            raise BagError(f"{self.path}: reading failed {after}: {reader_text(exc)}; {_HINT[self.storage]}") from exc

    def decode(self, raw: RawMessage) -> Msg:
        """The deserialized message; BagError when its bytes do not fit its type."""
        try:
            if self._ros1:
                return self._store.deserialize_ros1(raw.data, raw.msgtype)
            return deserialize(raw.msgtype, raw.data, self._store)
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
        raise BagError(f"{path}: cannot open this {storage} bag: {reader_text(exc)}; {_HINT[storage]}") from exc
    try:
        return Bag(path, storage, reader)
    except Exception as exc:
        reader.close()
        raise BagError(f"{path}: cannot read the bag's connections: {reader_text(exc)}") from exc


_ARGS_TUPLE = re.compile(r"""\((?:'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)"),\)""")


def reader_text(exc: BaseException) -> str:
    """A reader error as a sentence: rosbags formats some errors with their cause's ``args``
    (``Bag index looks damaged: ('Header could not be read from file.',)``); the tuple is unwrapped."""
    text = _ARGS_TUPLE.sub(lambda m: m.group(1) if m.group(1) is not None else m.group(2), str(exc))
    return text[:-1] if text.endswith(".") else text   # it goes inside a sentence


def _locate(path: Path) -> tuple[str, Path]:
    """-> (storage kind, path to hand to the rosbags reader)."""
    if not path.exists():
        raise BagError(f"{path}: no such bag file or folder")
    if path.is_dir():
        if (path / "metadata.yaml").is_file():
            named, listed = _folder_storage(path)
            _check_listed(path, listed)
            if listed:
                _check_file(path / listed[0], named, path / "metadata.yaml")
            return named, path
        files = sorted(p for p in path.iterdir() if p.suffix in (".mcap", ".db3"))
        if not files:
            raise BagError(_not_a_bag(path))
        if len(files) != 1:
            raise BagError(f"{path}: a rosbag2 folder without metadata.yaml and with {len(files)} storage files "
                           f"({', '.join(p.name for p in files)}); pass one .mcap/.db3 file, or "
                           "restore metadata.yaml with `ros2 bag reindex`")
        path = files[0]
    storage = _file_storage(path)
    if storage is None:
        what = "zstd-compressed" if _head(path).startswith(b"\x28\xb5\x2f\xfd") else "unrecognised"
        raise BagError(f"{path}: {what} file, not a ROS 1 bag, MCAP or sqlite3 file"
                       + ("; open the rosbag2 folder with its metadata.yaml instead" if what != "unrecognised"
                          else ""))
    if storage != ROS1 and path.suffix != _SUFFIX[storage]:     # rosbags picks rosbag2 storage by suffix
        raise BagError(f"{path}: the file content is {storage} but its name ends in {path.suffix!r}; "
                       f"rename it to *{_SUFFIX[storage]}")
    if storage == ROSBAG2_MCAP:
        _check_mcap_profile(path)
    return storage, path


def _head(path: Path) -> bytes:
    with path.open("rb") as f:
        return f.read(64)


def _file_storage(path: Path) -> str | None:
    head = _head(path)
    return next((kind for magic, kind in _MAGIC.items() if head.startswith(magic)), None)


def _check_mcap_profile(path: Path) -> None:
    """rosbags reads MCAP of the ``ros2`` profile only; say what another profile is (a ROS 1
    MCAP is not an interrupted recording)."""
    head = _head(path)
    # magic (8), Header opcode (1), record length (8), profile: uint32 length + text
    size = int.from_bytes(head[17:21], "little") if len(head) >= 21 and head[8] == 0x01 else 0
    profile = head[21:21 + size].decode("utf-8", "replace") if 0 < size <= 40 else ""
    if profile == "ros1":
        raise BagError(f"{path}: a ROS 1 MCAP file (profile 'ros1': ROS 1 messages in MCAP), not a rosbag2 "
                       "MCAP (profile 'ros2'); egorec reads ROS 1 recordings only as .bag files: convert the ROS 1 "
                       ".bag this file was made from")
    if profile and profile != "ros2":
        raise BagError(f"{path}: an MCAP file of profile {profile!r}, not a rosbag2 MCAP (profile 'ros2'); "
                       "egorec reads rosbag2 MCAP (ROS 2) and ROS 1 .bag files")


def _check_file(path: Path, storage: str, metadata: Path) -> None:
    """The first storage file of a folder has the content metadata.yaml announces."""
    if not path.is_file():
        return              # rosbags names the missing files
    actual = _file_storage(path)
    if actual is not None and actual != storage:
        raise BagError(f"{metadata} says storage_identifier {_IDENTIFIER[storage]!r} but {path.name} is a "
                       f"{actual} file; set `storage_identifier: {_IDENTIFIER.get(actual, actual)}` in "
                       f"metadata.yaml, or convert {path} alone")
    if actual == ROSBAG2_MCAP:
        _check_mcap_profile(path)


def _not_a_bag(path: Path) -> str:
    """What a folder without metadata.yaml and without a storage file is, and what to pass instead."""
    entries = sorted(p.name + ("/" if p.is_dir() else "") for p in path.iterdir())
    ros1 = [e for e in entries if e.endswith(".bag")]
    if ros1:
        return (f"{path}: a folder of ROS 1 bags ({', '.join(ros1[:5])}{', ...' if len(ros1) > 5 else ''}), "
                "not a rosbag2 folder; pass the .bag files themselves")
    held = (f"it holds {len(entries)} other entr{'y' if len(entries) == 1 else 'ies'}: "
            f"{', '.join(entries[:5])}{', ...' if len(entries) > 5 else ''}") if entries else "it is empty"
    return (f"{path}: not a bag: no metadata.yaml and no .mcap, .db3 or .bag file ({held}); pass a rosbag2 "
            "folder (with metadata.yaml), a .mcap/.db3 file or a ROS 1 .bag file")


def _check_listed(path: Path, listed: list[str]) -> None:
    """Every storage file metadata.yaml lists is in the folder (a renamed or missing file is a
    metadata problem, not a damaged bag)."""
    missing = [name for name in listed if not (path / name).exists()]
    if not missing:
        return
    metadata = path / "metadata.yaml"
    present = sorted(p.name for p in path.iterdir() if p.name not in listed and _is_storage_name(p.name))
    if not present:
        raise BagError(f"{metadata} lists {', '.join(missing)}, which the folder does not hold: a storage file of "
                       "the bag is missing; copy it next to metadata.yaml, or remove it from relative_file_paths "
                       "and files in metadata.yaml to convert the rest")
    fix = (f"rename {present[0]} to {missing[0]}" if len(missing) == 1 == len(present)
           else "give the files the names listed")
    alone = f"convert {path / present[0]} alone" if len(present) == 1 else "convert one of those files alone"
    raise BagError(f"{metadata} lists {', '.join(missing)}, but the folder holds {', '.join(present)} instead: "
                   f"the metadata names other files (the storage files themselves are not damaged). {fix[0].upper() + fix[1:]} "
                   f"(or edit relative_file_paths in metadata.yaml), or {alone}")


def _is_storage_name(name: str) -> bool:
    return any(name.endswith(ext) for ext in (".db3", ".mcap", ".db3.zstd", ".mcap.zstd"))


def _folder_storage(path: Path) -> tuple[str, list[str]]:
    """(storage named by metadata.yaml, the storage file names it lists); BagError when metadata.yaml
    is empty or not rosbag2 metadata (other defects are reported by rosbags on open)."""
    metadata = path / "metadata.yaml"
    try:
        doc = yaml.safe_load(metadata.read_text(encoding="utf-8"))
    except (yaml.YAMLError, OSError, UnicodeDecodeError) as exc:
        raise BagError(f"{metadata} cannot be read as YAML ({exc}); {_REBUILD.format(path=path)}") from None
    info = doc.get("rosbag2_bagfile_information") if isinstance(doc, dict) else None
    if not isinstance(info, dict):
        what = "is empty" if doc is None else "has no rosbag2_bagfile_information"
        raise BagError(f"{metadata} {what}: it is not a rosbag2 metadata file; {_REBUILD.format(path=path)}")
    identifier = info.get("storage_identifier")
    storage = ROSBAG2_MCAP if identifier == "mcap" else ROSBAG2_SQLITE3
    files = info.get("relative_file_paths")
    known = identifier in ("mcap", "sqlite3")          # else rosbags says what is wrong on open
    # older rosbag2 wrote the folder name in front of each file; rosbags reads them by file name
    return storage, [Path(str(f)).name for f in files] if known and isinstance(files, list) else []


_IDENTIFIER = {ROSBAG2_MCAP: "mcap", ROSBAG2_SQLITE3: "sqlite3", ROS1: "ros1"}
_REBUILD = ("rebuild it with `ros2 bag reindex {path}`, or delete it and convert the folder's one storage "
            "file (egorec reads a lone .db3/.mcap)")
