"""The recorder node, on any transport: the rig's topics in, episodes out, driven by services
and a marker topic, reporting on ``~/status`` (1 Hz) and ``/diagnostics``.

Services (``<name>/start``, ``<name>/stop``, ``<name>/abort``; types ``egorec_ros/srv/Start``
and ``egorec_ros/srv/Stop``): start takes a task folder and an instruction and answers with
the episode's number; stop commits and answers with the episode's QA verdict and reasons;
abort discards and frees the number (§1.3). ``<name>/delete`` (``egorec_ros/srv/Delete``)
deletes a committed episode of the current task (0 = the last one: the operator's redo), its
number never reused; ``<name>/list_episodes`` (``egorec_ros/srv/ListEpisodes``) lists a task's
episodes as JSON (``dataset.listing``). ``~/status`` carries the last verdict and the live QA
alarms, which also raise a /diagnostics WARN as soon as they appear. A marker
topic (``std_msgs/Bool`` recording flag or ``std_msgs/String`` start/stop words) starts and
stops episodes with the converter's ``--marker`` rule, so a bag of the same session converts
into the same episodes. ``close()`` (Ctrl-C, SIGTERM) commits the running episode.

``egorec recorder`` runs it over DDS; ``ros2 run egorec_ros recorder`` over rclpy.
"""
from __future__ import annotations

import json
import queue
import shutil
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from egorec_ros.assembly.assembler import AssemblyConfig
from egorec_ros.codecs.video import VideoCodec
from egorec_ros.converter.split import BOOL, STRING, marker_state
from egorec_ros.dataset.listing import episode_summaries
from egorec_ros.messages.decode import deserialize
from egorec_ros.messages.payloads.stamps import header_message
from egorec_ros.messages.typestores import ros2_typestore
from egorec_ros.live.diagnostics import (DIAGNOSTIC_ARRAY, DIAGNOSTICS_TOPIC, ERROR, OK, STALE, WARN,
                                         diagnostic_array, diagnostic_status)
from egorec_ros.live.input import LiveInput
from egorec_ros.live.preview import Previews
from egorec_ros.qa.live import live_alarms
from egorec_ros.qa.verdict import from_row
from egorec_ros.recorder.no_rows import no_rows_reason
from egorec_ros.rig.kinds import GLOVE_KINDS, StreamKind
from egorec_ros.recorder.session import EpisodeAbortedError, Recorder
from egorec_ros.rig.model import Rig
from egorec_ros.store import TaskWriter
from egorec_ros.transport.base import DEFAULT, RECORDER, QoS, Transport
from egorec_ros.transport.socket_drops import rcvbuf_advice, rmem_max, udp_drops
from egorec_ros.upload.background import BackgroundUploader, QueueStatus
from egorec_ros.upload.credentials import Credentials
from egorec_ros.upload.uploader import UploadSettings

START, STOP = "egorec_ros/srv/Start", "egorec_ros/srv/Stop"
DELETE, LIST_EPISODES = "egorec_ros/srv/Delete", "egorec_ros/srv/ListEpisodes"
STATUS = "egorec_ros/msg/RecorderStatus"
STREAM_STATUS = "egorec_ros/msg/StreamStatus"
DEFAULT_NAME = "egorec_recorder"
LOW_DISK_GB = 5.0
ALARM_CHECK_S = 0.2       # live QA alarms are looked for this often between status messages


@dataclass(frozen=True)
class NodeConfig:
    out: Path                                 # dataset root; episodes go to out/<task>
    task: str                                 # task folder until a start names another
    codec: VideoCodec = VideoCodec()
    depth_container: str = "mp4"
    assembly: AssemblyConfig = AssemblyConfig()
    name: str = DEFAULT_NAME                  # services and status under /<name>/
    marker: str | None = None                 # marker topic
    marker_type: str = STRING                 # std_msgs/msg/String or std_msgs/msg/Bool
    start_words: tuple[str, ...] = ("start",)
    stop_words: tuple[str, ...] = ("stop",)
    status_period_s: float = 1.0
    silent_after_s: float = 0.5               # a stream with no sample for this long is reported silent
    qos: QoS | dict[str, QoS] | None = None   # subscriptions (default: best effort, matches any publisher)
    upload: UploadSettings | None = None      # send each committed episode to this server (issue 22)
    upload_credentials: Credentials | None = None


class RecorderNode:
    def __init__(self, rig: Rig, transport: Transport, config: NodeConfig,
                 log: Callable[[str], None] = lambda m: print(m, file=sys.stderr, flush=True)) -> None:
        self.rig, self.transport, self.config, self.log = rig, transport, config, log
        self._store = ros2_typestore()
        self._lock = threading.RLock()            # service calls, marker and shutdown take turns
        self.task = config.task
        # the task folder is created (and locked) by the first start into it: a node whose episodes
        # all go to other tasks leaves no folder for its default task
        self._writer: TaskWriter | None = None
        self.recorder = Recorder(rig, None, config=config.assembly)
        self.live = LiveInput(rig, transport, self.recorder, source="live",
                              qos=RECORDER if config.qos is None else config.qos)
        self.episode_index = 0
        self.no_rows = ""   # why the last stopped episode built no row
        self._closed = False
        self._prefix = "/" + config.name.strip("/")
        self._handles = [
            transport.serve(f"{self._prefix}/start", START, self._on_start),
            transport.serve(f"{self._prefix}/stop", STOP, lambda req: self._on_stop(req, abort=False)),
            transport.serve(f"{self._prefix}/abort", STOP, lambda req: self._on_stop(req, abort=True)),
            transport.serve(f"{self._prefix}/delete", DELETE, self._on_delete),
            transport.serve(f"{self._prefix}/list_episodes", LIST_EPISODES, self._on_list),
        ]
        if config.marker:
            if config.marker_type not in (BOOL, STRING):
                raise ValueError(f"marker type must be {BOOL} or {STRING}, got {config.marker_type!r}")
            self._handles.append(transport.subscribe(config.marker, config.marker_type, RECORDER, self._on_marker))
        self.previews = Previews(rig, transport, self._prefix, log=log)
        self.live.preview = self.previews.offer
        self._status_pub = transport.publisher(f"{self._prefix}/status", STATUS, DEFAULT)
        self._diag_pub = transport.publisher(DIAGNOSTICS_TOPIC, DIAGNOSTIC_ARRAY, DEFAULT)
        self._last_received: Counter[str] = Counter()
        # the last committed episode: (task, index, verdict, reasons); index 0 = none
        self.last: tuple[str, int, str, list[str]] = ("", 0, "", [])
        self._alarms: list[str] = []
        self._stream_kinds = {s.id: _qa_kind(rig, s) for s in rig.streams.values() if s.topic}
        self._last_status = time.monotonic()
        # the kernel's drops on this process's DDS sockets: images lost before DDS sees them
        self._udp_drops_at_start = self._udp_drops = udp_drops().drops
        self._callback_drops = 0          # samples the transport took but dropped unread (stale or full)
        advice = rcvbuf_advice(rmem_max())
        if advice:
            self.log(f"warning: {advice}")
        self._running = threading.Event()
        self._running.set()
        self._status_thread = threading.Thread(target=self._status_loop, name="egorec-status", daemon=True)
        self._status_thread.start()
        # marker actions wait for a commit: off the transport thread, which must keep delivering
        self._markers: queue.Queue[bool | None] = queue.Queue()
        self._marker_thread = threading.Thread(target=self._marker_loop, name="egorec-marker", daemon=True)
        self._marker_thread.start()
        self.uploader = (BackgroundUploader(Path(config.out), config.upload, config.upload_credentials, self.log,
                                            delete=self.delete_uploaded)
                         if config.upload else None)

    # ---- control ------------------------------------------------------------------------

    def start(self, task: str = "", instruction: str = "") -> int:
        """Start an episode (in ``task``'s folder if given); returns the number it will have."""
        with self._lock:
            if self._closed:
                raise RuntimeError("the recorder is shutting down")
            if self.recorder.status().recording:
                raise RuntimeError(f"episode {self.episode_index} of task {self.task} is being recorded; stop it first")
            if self._writer is None or (task and task != self.task):
                self._switch(task or self.task)
            assert self._writer is not None
            self.episode_index = self._writer.next_number().index
            self.recorder.start_episode(task=instruction or None)
            self.log(f"episode {self.episode_index} of {self.task}: recording")
            return self.episode_index

    def stop(self) -> tuple[int, int]:
        """Commit the running episode; (number, rows), number 0 when no row was built (``no_rows``
        then says why, for the stop service's reply). Its QA verdict is ``self.last`` afterwards."""
        with self._lock:
            result, report = self.recorder.stop_episode()
            if result is None:
                last = self.recorder.last_episode
                self.no_rows = no_rows_reason(self.rig, report.streams, last.get("stamp_lag"),
                                              last.get("latency_ns", 0))
                self.log(f"stopped: no row was built ({self.no_rows}); nothing written")
                return 0, 0
            verdict, reasons = from_row(result.qa)
            self.last = (self.task, result.number.index, verdict, reasons)
            self.log(f"episode {result.number.index} of {self.task}: {result.rows} rows committed; "
                     f"QA {verdict or 'not computed'}" + "".join(f"\n  {r}" for r in reasons))
            if self.uploader is not None:         # committed episodes only: aborted ones never go
                self.uploader.enqueue(self.task, result.number.index)
            return result.number.index, result.rows

    def delete(self, episode_index: int = 0) -> int:
        """Delete a committed episode of the current task (0 or below: the last one); its number
        is never reused (§1.3). Safe while another episode is being recorded."""
        with self._lock:
            if episode_index <= 0:
                done = [e["episode_index"] for e in episode_summaries(Path(self.config.out) / self.task)]
                if not done:
                    raise ValueError(f"task {self.task} has no committed episode to delete")
                episode_index = done[-1]
            if self.recorder.status().recording and episode_index == self.episode_index:
                raise ValueError(f"episode {episode_index} of {self.task} is being recorded; stop or abort it")
            if self._writer is None:          # no episode started yet: open the task folder, if it exists
                if not (Path(self.config.out) / self.task).is_dir():
                    raise ValueError(f"task {self.task} has no episode {episode_index} to delete (no folder yet)")
                self._switch(self.task)
            assert self._writer is not None
            self._writer.delete(episode_index)
            if self.last[:2] == (self.task, episode_index):
                self.last = ("", 0, "", [])
            self.log(f"episode {episode_index} of {self.task}: deleted (its number is not reused)")
            return episode_index

    def delete_uploaded(self, task: str, episode_index: int) -> None:
        """``upload.delete_after``: the server has this committed episode, so it goes here, through
        the writer holding its task when that is the current one (numbers never reused, §1.3)."""
        with self._lock:
            if task == self.task and self._writer is not None and not self._closed:
                self._writer.delete(episode_index)
            else:                             # an earlier task, or the recorder is closing
                with TaskWriter(Path(self.config.out) / task) as writer:
                    writer.delete(episode_index)
            if self.last[:2] == (task, episode_index):
                self.last = ("", 0, "", [])
        self.log(f"episode {episode_index} of {task}: deleted locally, the server has it (its number is not reused)")

    def list_episodes(self, task: str = "") -> tuple[str, list[dict]]:
        """(task, its committed episodes: number, rows, duration, instruction, verdict, and its
        upload: state, attempts, last error, server session id; ``{"state": "off"}`` when this
        recorder uploads nothing, ``"not queued"`` for an episode it never queued)."""
        task = task or self.task
        if Path(task).is_absolute() or ".." in Path(task).parts:
            raise ValueError(f"task {task!r} must be a folder name under the recorder's output root")
        episodes = episode_summaries(Path(self.config.out) / task)
        uploads = self.uploader.episode_states(task) if self.uploader is not None else {}
        for e in episodes:
            e["upload"] = (uploads.get(e["episode_index"], {"state": "not queued"}) if self.uploader is not None
                           else {"state": "off"})
        return task, episodes

    def abort(self) -> int:
        """Discard the running episode; its number is free again (§1.3)."""
        with self._lock:
            index = self.recorder.abort_episode() or 0
            self.log(f"episode {index or self.episode_index} of {self.task}: discarded")
            return index

    def close(self) -> None:
        """Commit the running episode; release the task folder; stop answering. A stop or abort
        being answered finishes first and its caller gets the reply (the services close last)."""
        self._running.clear()
        self._markers.put(None)
        self._marker_thread.join()
        self.live.close()
        self.previews.close()
        with self._lock:
            self._closed = True
            if self.recorder.status().recording:
                try:
                    self.stop()
                except EpisodeAbortedError:   # an abort got there first (one slower than its service call)
                    self.log("closing: the running episode was being aborted; it is discarded")
            self.recorder.close()
            if self._writer is not None:
                self._writer.close()
        for handle in self._handles:
            handle.close()
        self._status_thread.join()
        if self.uploader is not None:
            self.uploader.close()

    # ---- service and marker callbacks (transport thread) --------------------------------

    def _on_start(self, request: bytes) -> bytes:
        try:
            req = deserialize(f"{START}_Request", request)
            index = self.start(str(req.task).strip(), str(req.instruction).strip())
            return self._reply(START, success=True, message=f"recording episode {index} of {self.task}",
                               episode_index=index)
        except Exception as exc:  # noqa: BLE001 - the caller gets the reason, the recorder keeps running
            return self._reply(START, success=False, message=str(exc), episode_index=0)

    def _on_stop(self, _request: bytes, *, abort: bool) -> bytes:
        try:
            if abort:
                index, rows = self.abort(), 0
                text = f"episode {index} discarded; its number is free" if index else "episode discarded"
            else:
                index, rows = self.stop()
                text = (f"episode {index}: {rows} rows committed" if index
                        else f"no row was built ({self.no_rows}); nothing written")
            _task, last, verdict, reasons = self.last
            if abort or last != index:
                verdict, reasons = "", []
            return self._reply(STOP, success=True, message=text, episode_index=index, rows=rows,
                               verdict=verdict, reasons=reasons)
        except Exception as exc:  # noqa: BLE001
            return self._reply(STOP, success=False, message=str(exc), episode_index=0, rows=0, verdict="",
                               reasons=[])

    def _on_delete(self, request: bytes) -> bytes:
        try:
            req = deserialize(f"{DELETE}_Request", request)
            index = self.delete(int(req.episode_index))
            return self._reply(DELETE, success=True, episode_index=index,
                               message=f"episode {index} of {self.task} deleted; its number is not reused")
        except Exception as exc:  # noqa: BLE001 - the caller gets the reason, the recorder keeps running
            return self._reply(DELETE, success=False, message=str(exc), episode_index=0)

    def _on_list(self, request: bytes) -> bytes:
        try:
            req = deserialize(f"{LIST_EPISODES}_Request", request)
            task, episodes = self.list_episodes(str(req.task).strip())
            return self._reply(LIST_EPISODES, success=True, message=f"{len(episodes)} episode(s)", task=task,
                               episodes_json=json.dumps(episodes, ensure_ascii=False))
        except Exception as exc:  # noqa: BLE001
            return self._reply(LIST_EPISODES, success=False, message=str(exc), task="", episodes_json="[]")

    def _on_marker(self, cdr: bytes, _arrival_ns: int) -> None:
        cfg = self.config
        try:
            data = deserialize(cfg.marker_type, cdr).data
        except Exception as exc:  # noqa: BLE001 - a bad marker message is reported, not fatal
            self.log(f"marker {cfg.marker}: unreadable message ({exc})")
            return
        recording = marker_state(cfg.marker_type, data, cfg.start_words, cfg.stop_words)
        if recording is not None:
            self._markers.put(recording)

    def _marker_loop(self) -> None:
        while (recording := self._markers.get()) is not None:
            try:
                with self._lock:
                    active = self.recorder.status().recording
                    if recording and not active:
                        self.start()
                    elif not recording and active:
                        self.stop()
            except Exception as exc:  # noqa: BLE001 - reported; the next marker may succeed
                self.log(f"marker {self.config.marker}: {exc}")

    def _reply(self, srv: str, **fields) -> bytes:
        if srv in (START, STOP):       # after the action: a status stamped earlier shows the state before it
            fields["stamp_ns"] = time.time_ns()
        msgtype = f"{srv}_Response"
        return bytes(self._store.serialize_cdr(self._store.types[msgtype](**fields), msgtype))

    # ---- internals ----------------------------------------------------------------------

    def _open(self, task: str) -> tuple[TaskWriter, Recorder]:
        cfg = self.config
        writer = TaskWriter(Path(cfg.out) / task, codec=cfg.codec, depth_container=cfg.depth_container)
        return writer, Recorder(self.rig, writer, config=cfg.assembly)

    def _switch(self, task: str) -> None:
        writer, recorder = self._open(task)
        old_writer, old_recorder = self._writer, self.recorder
        self._writer, self.recorder, self.task = writer, recorder, task
        self.live.recorder = recorder
        old_recorder.close()
        if old_writer is not None:
            old_writer.close()

    def _status_loop(self) -> None:
        """Status every period; between, a check of the live QA alarms every ALARM_CHECK_S,
        publishing at once when a new one appears (the operator sees it within that)."""
        due = time.monotonic() + self.config.status_period_s
        while not _sleep_until_stopped(self._running, min(ALARM_CHECK_S, max(0.0, due - time.monotonic()))):
            try:
                if time.monotonic() >= due or set(self._current_alarms()) - set(self._alarms):
                    due = time.monotonic() + self.config.status_period_s
                    self.publish_status()
            except Exception as exc:  # noqa: BLE001 - status must never take the recorder down
                self.log(f"status: {exc!r}")

    def _current_alarms(self) -> list[str]:
        now_ns = time.time_ns()
        _received, _invalid, last = self.live.snapshot()
        ages = {sid: (now_ns - last[sid]) / 1e9 for sid in self._stream_kinds if sid in last}
        return live_alarms(self._stream_kinds, ages, self.rig.qa, self.recorder.status().recording)

    def publish_status(self) -> None:
        now_ns, now = time.time_ns(), time.monotonic()
        period, self._last_status = max(1e-3, now - self._last_status), now
        status = self.recorder.status()
        received, invalid, last = self.live.snapshot()
        store, streams, diags = self._store, [], []
        for spec in self.rig.streams.values():
            if not spec.topic:
                continue
            sid = spec.id
            age = (now_ns - last[sid]) / 1e9 if sid in last else -1.0
            rate = (received.get(sid, 0) - self._last_received[sid]) / period
            streams.append(store.types[STREAM_STATUS](
                stream=sid, topic=spec.topic, rate_hz=rate, last_sample_age_s=age,
                received=received.get(sid, 0), invalid=invalid.get(sid, 0),
                dropped=status.dropped.get(sid, 0) + status.overflow.get(sid, 0), late=status.late.get(sid, 0)))
            diags.append(self._stream_diagnostic(spec, age, rate, invalid.get(sid, 0), status.dropped.get(sid, 0)))
        self._last_received = Counter(received)
        key, backlog = max(status.backlog.items(), key=lambda kv: kv[1], default=("", 0))
        ages = {sid: (now_ns - last[sid]) / 1e9 for sid in self._stream_kinds if sid in last}
        alarms = live_alarms(self._stream_kinds, ages, self.rig.qa, status.recording)
        for line in sorted(set(alarms) - set(self._alarms), key=alarms.index):
            self.log(f"QA alarm: {line}")
        self._alarms = alarms
        last_task, last_index, last_verdict, last_reasons = self.last
        if last_task != self.task:      # the last verdict belongs to another task's episode
            last_index, last_verdict, last_reasons = 0, "", []
        free_gb = shutil.disk_usage(_existing(Path(self.config.out))).free / 1e9
        drops, new_drops = self._udp_drops_since_last()
        behind = self.transport.callback_drops()
        header = header_message(store, now_ns, self.config.name)
        upload = self.uploader.status() if self.uploader is not None else None
        msg = store.types[STATUS](header=header, state="recording" if status.recording else "idle", task=self.task,
                                  episode_index=self.episode_index if status.recording else 0, rows=status.rows,
                                  encoder_backlog=backlog, encoder_backlog_key=key, free_disk_gb=free_gb,
                                  streams=streams, last_episode_index=last_index, last_verdict=last_verdict,
                                  last_reasons=last_reasons, alarms=alarms,
                                  upload_pending=upload.pending if upload else 0,
                                  upload_failed=upload.failed if upload else 0, upload=upload.text if upload else "",
                                  stage=status.stage, overload=status.overload, udp_drops=drops,
                                  callback_drops=behind, **_upload_fields(self.config.upload, upload))
        self._status_pub.publish(bytes(store.serialize_cdr(msg, STATUS)))
        new_behind, self._callback_drops = behind - self._callback_drops, behind
        level = WARN if free_gb < LOW_DISK_GB or new_drops or new_behind else OK
        diags.insert(0, self._diagnostic(level, "recorder", f"{'recording' if status.recording else 'idle'}; "
                                         f"{free_gb:.1f} GB free" + (" (low)" if free_gb < LOW_DISK_GB else "")
                                         + (f"; {new_drops} UDP datagrams dropped by the kernel (socket receive "
                                            "buffer full: messages lost)" if new_drops else "")
                                         + (f"; {new_behind} samples dropped unread (the recorder fell over 1 s "
                                            "behind: CPU starved)" if new_behind else ""),
                                         task=self.task, rows=status.rows, encoder_backlog=backlog,
                                         udp_drops=drops, callback_drops=behind))
        diags.append(self._diagnostic(WARN if alarms else OK, "qa", "; ".join(alarms) if alarms else "no live QA alarm",
                                      alarms=len(alarms), last_episode=last_index, last_verdict=last_verdict))
        if upload is not None:
            diags.append(self._diagnostic(WARN if upload.failed else OK, "upload", upload.text,
                                          pending=upload.pending, failed=upload.failed, done=upload.done,
                                          rate_bytes_s=f"{upload.rate_bytes_s:.0f}",
                                          server=self.config.upload.server if self.config.upload else ""))
        self._diag_pub.publish(diagnostic_array(now_ns, self.config.name, diags))

    def _udp_drops_since_last(self) -> tuple[int, int]:
        """(drops since the node started, drops since the last status); logged when they grow."""
        now = udp_drops().drops
        new, self._udp_drops = now - self._udp_drops, now
        if new:
            self.log(f"warning: the kernel dropped {new} UDP datagrams on the DDS sockets (receive buffer full): "
                     f"messages lost before DDS saw them; {now - self._udp_drops_at_start} since start"
                     + (f"; {rcvbuf_advice(rmem_max())}" if rcvbuf_advice(rmem_max()) else ""))
        return now - self._udp_drops_at_start, new

    def _stream_diagnostic(self, spec, age: float, rate: float, invalid: int, dropped: int):
        if age < 0:
            level, text = STALE, "no message yet"
        elif age > self.config.silent_after_s:
            level, text = ERROR, f"silent for {age:.1f} s"
        elif invalid or dropped:
            level, text = WARN, f"{rate:.1f} Hz; {invalid} invalid, {dropped} dropped this episode"
        else:
            level, text = OK, f"{rate:.1f} Hz"
        return self._diagnostic(level, spec.id, text, topic=spec.topic, rate_hz=f"{rate:.1f}",
                                last_sample_age_s=f"{age:.2f}", invalid=invalid, dropped=dropped)

    def _diagnostic(self, level: int, what: str, message: str, **values):
        return diagnostic_status(level, f"{self.config.name}: {what}", message, self.config.name, values)


def _upload_fields(settings: UploadSettings | None, upload: QueueStatus | None) -> dict:
    """~/status's upload_* fields beyond the counts: server, done, the episode being sent, rate."""
    if settings is None or upload is None:
        return {"upload_server": "", "upload_uploading": 0, "upload_done": 0, "upload_done_bytes": 0,
                "upload_task": "", "upload_episode_index": 0, "upload_sent_bytes": 0, "upload_size_bytes": 0,
                "upload_rate_bytes_s": 0.0}
    return {"upload_server": settings.server, "upload_uploading": upload.uploading, "upload_done": upload.done,
            "upload_done_bytes": upload.done_bytes, "upload_task": upload.current_task,
            "upload_episode_index": upload.current_episode, "upload_sent_bytes": upload.sent_bytes,
            "upload_size_bytes": upload.size_bytes, "upload_rate_bytes_s": float(upload.rate_bytes_s)}


def _qa_kind(rig: Rig, spec) -> str:
    """The live-QA kind of a stream (the words its alarm uses)."""
    if spec.kind is StreamKind.TRAJECTORY:
        return "slam"
    if any(d.id == spec.device and d.kind in GLOVE_KINDS for d in rig.devices):
        return "glove"
    return spec.kind.value


def _sleep_until_stopped(running: threading.Event, seconds: float) -> bool:
    """Sleep ``seconds``; True when the node stopped meanwhile."""
    deadline = time.monotonic() + seconds
    while running.is_set():
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        time.sleep(min(left, 0.1))
    return True


def _existing(path: Path) -> Path:
    while not path.exists() and path != path.parent:
        path = path.parent
    return path
