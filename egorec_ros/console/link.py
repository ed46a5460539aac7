"""The console's side of the recorder: its ``~/status``, ``/diagnostics``, preview topics and
services, over any Transport (DDS from ``egorec console``, rclpy from ``ros2 run``).

Callbacks only keep the newest message (bytes) and bump a counter; decoding happens when the page
asks (a few times a second), so the console costs the robot PC little however fast topics come.
Nothing here touches a recording: restarting the console leaves the recorder as it was."""
from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Callable

from egorec_ros.live.diagnostics import DIAGNOSTIC_ARRAY, DIAGNOSTICS_TOPIC
from egorec_ros.live.node import DELETE, LIST_EPISODES, START, STATUS, STOP
from egorec_ros.live.preview import COMPRESSED_IMAGE, PREVIEW_QOS
from egorec_ros.messages.decode import deserialize
from egorec_ros.messages.typestores import ros2_typestore
from egorec_ros.transport.base import DEFAULT, SENSOR_DATA, Subscription, Transport

SENSOR_QOS = SENSOR_DATA          # best effort, shallow: the console only wants the newest

LEVELS = {0: "ok", 1: "warn", 2: "error", 3: "stale"}
# device topics the page draws (glove pressure heat map, force bars): ROS type -> kind. Only the
# newest message's bytes are kept; it is decoded when the page asks (5 Hz), whatever the topic's rate.
SENSOR_TYPES = {"egorec_ros/msg/GloveFrame": "glove", "geometry_msgs/msg/WrenchStamped": "force",
                "geometry_msgs/msg/Vector3Stamped": "force"}
DISCOVER_S = 1.0


@dataclass
class Preview:
    jpeg: bytes
    stamp_ns: int
    seq: int


@dataclass
class _Latest:
    status: bytes | None = None
    status_at: float = 0.0
    diagnostics: bytes | None = None
    previews: dict[str, Preview] = field(default_factory=dict)
    sensors: dict[str, tuple[str, bytes]] = field(default_factory=dict)     # topic -> (type, newest cdr)


class RecorderLink:
    """Watches recorder ``name`` on ``transport``; ``snapshot()`` for the page, ``call()`` for control."""

    def __init__(self, transport: Transport, name: str) -> None:
        self.transport, self.name = transport, name.strip("/")
        self.prefix = "/" + self.name
        self._store = ros2_typestore()
        self._lock = threading.Lock()
        self._latest = _Latest()
        self._memo: dict[str, tuple[bytes, Any]] = {}
        self._subs: list[Subscription] = [
            transport.subscribe(f"{self.prefix}/status", STATUS, DEFAULT, self._on_status),
            transport.subscribe(DIAGNOSTICS_TOPIC, DIAGNOSTIC_ARRAY, DEFAULT, self._on_diagnostics)]
        self._live: dict[str, Subscription] = {}      # preview, glove and force topics: only while a page listens
        self._wanted = False
        self._wake = threading.Event()
        self._running = True
        self._thread = threading.Thread(target=self._discover_loop, name="egorec-console-discover", daemon=True)
        self._thread.start()

    # ---- callbacks: keep the bytes -------------------------------------------------------

    def _on_status(self, cdr: bytes, _arrival_ns: int) -> None:
        with self._lock:
            self._latest.status, self._latest.status_at = cdr, time.monotonic()

    def _on_diagnostics(self, cdr: bytes, _arrival_ns: int) -> None:
        with self._lock:
            self._latest.diagnostics = cdr

    def _on_preview(self, stream: str, cdr: bytes, _arrival_ns: int) -> None:
        msg = deserialize(COMPRESSED_IMAGE, cdr)
        stamp = msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec
        with self._lock:
            old = self._latest.previews.get(stream)
            self._latest.previews[stream] = Preview(bytes(msg.data), stamp, (old.seq + 1) if old else 1)

    def _on_sensor(self, topic: str, msgtype: str, cdr: bytes, _arrival_ns: int) -> None:
        with self._lock:
            self._latest.sensors[topic] = (msgtype, cdr)

    def listening(self, on: bool) -> None:
        """A page is (or no page is any more) showing the live view. Preview, glove and force topics
        are subscribed only meanwhile: with no subscriber the recorder encodes no preview, and the
        console takes none of the ~500 sensor messages a second an Appendix B rig sends."""
        self._wanted = on
        self._wake.set()

    def _discover_loop(self) -> None:
        """Subscribe each preview topic of the recorder, and glove and force topics, as they appear
        while a page listens; unsubscribe them all when none does (this thread alone changes them)."""
        head = f"{self.prefix}/preview/"
        while self._running:
            try:
                if self._wanted:
                    self._subscribe_live(head)
                elif self._live:
                    for sub in self._live.values():
                        sub.close()
                    self._live.clear()
                    with self._lock:
                        self._latest.previews.clear()
                        self._latest.sensors.clear()
            except Exception:  # noqa: BLE001,S110 - the graph is asked again next round
                pass
            self._wake.wait(DISCOVER_S)
            self._wake.clear()

    def _subscribe_live(self, head: str) -> None:
        for topic, types in self.transport.topics().items():
            if topic in self._live:
                continue
            kind_type = next((t for t in types if t in SENSOR_TYPES), None)
            if kind_type:
                self._live[topic] = self.transport.subscribe(topic, kind_type, SENSOR_QOS,
                                                             partial(self._on_sensor, topic, kind_type))
            elif topic.startswith(head):
                self._live[topic] = self.transport.subscribe(topic, COMPRESSED_IMAGE, PREVIEW_QOS,
                                                             partial(self._on_preview, topic[len(head):]))

    # ---- what the page reads --------------------------------------------------------------

    def preview(self, stream: str) -> Preview | None:
        with self._lock:
            return self._latest.previews.get(stream)

    def snapshot(self) -> dict[str, Any]:
        """Recorder state for the page (JSON-able); ``connected`` False when no status came for 3 s."""
        with self._lock:
            status, at, diag = self._latest.status, self._latest.status_at, self._latest.diagnostics
            previews = {k: {"seq": p.seq, "stamp_ns": p.stamp_ns} for k, p in self._latest.previews.items()}
            sensors = dict(self._latest.sensors)
        out: dict[str, Any] = {"name": self.name, "connected": status is not None and time.monotonic() - at < 3.0,
                               "previews": previews, "status": None, "diagnostics": []}
        if status is not None:
            out["status"] = self._decoded("status", status, lambda cdr: status_dict(deserialize(STATUS, cdr)))
        if diag is not None:
            out["diagnostics"] = self._decoded("diagnostics", diag, lambda cdr: diagnostics_list(
                deserialize(DIAGNOSTIC_ARRAY, cdr), self.name))
        out["sensors"] = {topic: sensor_values(msgtype, cdr) for topic, (msgtype, cdr) in sorted(sensors.items())}
        return out

    def _decoded(self, what: str, cdr: bytes, decode: Callable[[bytes], Any]) -> Any:
        """``decode(cdr)``, kept until other bytes come: status and diagnostics arrive at 1 Hz, the
        page asks 5 times a second."""
        kept = self._memo.get(what)
        if kept is None or kept[0] is not cdr:
            kept = self._memo[what] = (cdr, decode(cdr))
        return kept[1]

    def call(self, service: str, **fields: Any) -> dict[str, Any]:
        """Call ``/<name>/<service>``; the reply's fields (TimeoutError when the recorder is away)."""
        srv = {"start": START, "stop": STOP, "abort": STOP, "delete": DELETE, "list_episodes": LIST_EPISODES}[service]
        store = self._store
        if srv == STOP:
            fields = {"structure_needs_at_least_one_member": 0}
        request = bytes(store.serialize_cdr(store.types[f"{srv}_Request"](**fields), f"{srv}_Request"))
        timeout = 120.0 if service == "stop" else 10.0        # a stop waits for the commit
        reply = deserialize(f"{srv}_Response", self.transport.call(f"{self.prefix}/{service}", srv, request, timeout))
        out = {k: _plain(getattr(reply, k)) for k in reply.__dataclass_fields__ if k != "__msgtype__"}
        if "episodes_json" in out:
            out["episodes"] = json.loads(out.pop("episodes_json") or "[]")
        return out

    def close(self) -> None:
        self._running = False
        self._wake.set()
        self._thread.join(timeout=5)
        for sub in [*self._subs, *self._live.values()]:
            sub.close()


def sensor_values(msgtype: str, cdr: bytes) -> dict[str, Any]:
    """{kind, values}: a glove's pressure cells, a force's x, y, z (an unreadable message: no values)."""
    kind = SENSOR_TYPES[msgtype]
    try:
        msg = deserialize(msgtype, cdr)
    except Exception:  # noqa: BLE001 - the recorder counts bad messages; the page just shows none
        return {"kind": kind, "values": []}
    if kind == "glove":
        return {"kind": kind, "values": [round(float(v), 1) for v in msg.pressure]}
    vec = msg.wrench.force if hasattr(msg, "wrench") else msg.vector
    return {"kind": kind, "values": [round(float(vec.x), 3), round(float(vec.y), 3), round(float(vec.z), 3)]}


def _plain(value: Any) -> Any:
    if isinstance(value, (str, bool, int, float)) or value is None:
        return value
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if hasattr(value, "tolist"):
        return value.tolist()
    return str(value)


def status_dict(msg: Any) -> dict[str, Any]:
    """A RecorderStatus as JSON-able fields (fields a recorder of another version lacks are left out)."""
    out = {k: _plain(getattr(msg, k)) for k in msg.__dataclass_fields__ if k not in ("header", "streams", "__msgtype__")}
    out["stamp_ns"] = msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec
    out["streams"] = [{k: _plain(getattr(s, k)) for k in s.__dataclass_fields__ if k != "__msgtype__"} for s in msg.streams]
    return out


def diagnostics_list(msg: Any, node: str) -> list[dict[str, Any]]:
    """This recorder's /diagnostics entries: name (without the node prefix), level word, message, values.
    The rclpy recorder names its entries by the node's full name (``/egorec_recorder: cam0.rgb``), the
    DDS one by ``--name`` as given (``rec: cam0.rgb``): both are this recorder."""
    head = f"{node.strip('/')}: "
    return [{"name": d.name.lstrip("/")[len(head):], "level": LEVELS.get(int(_plain(d.level)), "error"),
             "message": d.message, "values": {kv.key: kv.value for kv in d.values}}
            for d in msg.status if d.name.lstrip("/").startswith(head)]
