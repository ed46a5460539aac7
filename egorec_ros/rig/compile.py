"""Rig description (plain dict from YAML) -> compiled ``Rig``.

All naming rules of §2.3/§4 live here: slot names per device kind, column prefixes
(first gripper empty, second ``gripper_2_``, ego ``ego_``), status ids, and the §5.1/
§5.2 checks that refuse a rig which would make two writers share a slot or column.
"""
from __future__ import annotations

import dataclasses
import logging
from typing import Any, Mapping

from egorec_ros.codecs import force_matrix as fm
from egorec_ros.errors import UserError
from egorec_ros.qa.thresholds import thresholds_from
from egorec_ros.rig import frames
from egorec_ros.rig.kinds import DEVICE_KINDS, GLOVE_KINDS, StreamKind
from egorec_ros.rig.model import Device, Rig, StreamSpec
from egorec_ros.rig.options import OptionError, parse_options
from egorec_ros.schema.declaration import VideoSpec
from egorec_ros.schema import columns as col
from egorec_ros.schema.names import clean_slot_name


class RigError(UserError, ValueError):
    """A rig description that cannot be recorded; the message says where and why."""


MAX_UVC = 8
GLOVE_SENSORS = ("left_glove", "right_glove")
_DEVICE_KEYS = {"kind", "key", "name", "role", "rig", "hand", "sensor", "slot", "slot_base",
                "streams", "calibration", "info_kind"}
JOINT_FIELDS = ("position", "velocity", "effort")

log = logging.getLogger(__name__)
_warned_keys: set[tuple[str, str]] = set()   # (where, device id): warn once per process


def compile_rig(doc: Mapping[str, Any], *, where: str = "rig") -> Rig:
    """Compile a rig description; ``where`` names the file in error messages. Every problem
    found is reported in one RigError (a rig file with several mistakes is fixed in one go)."""
    devices_doc = doc.get("devices")
    if not isinstance(devices_doc, Mapping) or not devices_doc:
        raise RigError(f"{where}: 'devices' must be a non-empty mapping of device id -> device")
    problems: list[str] = []
    fps = doc.get("fps", 30.0)
    if isinstance(fps, bool) or not isinstance(fps, (int, float)):
        problems.append(f"{where}: fps must be a number of frames per second (e.g. fps: 30), got {fps!r}")
        fps = 30.0
    elif not 1.0 <= fps <= 240.0:
        problems.append(f"{where}: fps {float(fps)} is outside 1..240")
    fps = float(fps)
    problems += _combination_problems(devices_doc, where)

    counters: dict[str, int] = {}
    devices: list[Device] = []
    for dev_id, d in devices_doc.items():
        if not isinstance(d, Mapping) or str(d.get("kind", "")) not in DEVICE_KINDS:
            continue   # reported by _combination_problems
        try:
            device = _compile_device(str(dev_id), dict(d), counters, fps, f"{where}: device {dev_id!r}", problems)
        except RigError as exc:
            problems.append(str(exc))
            continue
        if device is not None:
            devices.append(device)
    columns, videos = _collect(tuple(devices), where, problems)
    master = doc.get("master_slot") or next((v.key for v in videos if v.kind == "rgb"), None)
    complete = len(devices) == len(devices_doc)   # else the master slot may be on a device with a problem
    if complete and master is not None and master not in {v.key for v in videos if v.kind == "rgb"}:
        problems.append(f"{where}: master_slot {master!r} is not a recorded RGB slot")
    try:
        qa = thresholds_from(doc.get("qa"), where)
    except ValueError as exc:
        problems.append(str(exc))
        qa = thresholds_from(None)
    if problems:
        raise RigError(_all_of(problems, where))
    forensic = next((s.slot for d in devices if d.kind == "d435" for s in d.streams
                     if s.role == "rgb"), None)
    if forensic is not None:
        columns = columns + tuple(col.d435_forensics())
    return Rig(name=str(doc.get("name", "rig")), fps=fps, devices=tuple(devices), columns=columns,
               videos=videos, master_slot=master, forensic_slot=forensic, qa=qa)


def _all_of(problems: list[str], where: str) -> str:
    """One problem: its line. Several: a line naming the file and how many, then one line each."""
    if len(problems) == 1:
        return problems[0]
    prefix = f"{where}: "
    lines = [p[len(prefix):] if p.startswith(prefix) else p for p in problems]
    return f"{where}: {len(problems)} problems:\n" + "\n".join(f"  - {line}" for line in lines)


def _combination_problems(devices_doc: Mapping[str, Any], where: str) -> list[str]:
    problems = []
    kinds = []
    for dev_id, d in devices_doc.items():
        if not isinstance(d, Mapping):
            problems.append(f"{where}: device {dev_id!r} must be a mapping (kind: ..., key: ..., streams: ...), "
                            f"got {d!r}")
            kinds.append("")
            continue
        kind = str(d.get("kind", ""))
        kinds.append(kind)
        if kind not in DEVICE_KINDS:
            problems.append(f"{where}: device {dev_id!r} has unknown kind {kind!r}; "
                            f"known kinds: {', '.join(DEVICE_KINDS)}")
    if kinds.count("s80m") > 1:
        problems.append(f"{where}: only one S80M/S80C per rig (its slots stereo_left/right are global, §5.1)")
    if "s80m" in kinds and "d435" in kinds:
        problems.append(f"{where}: a D435/D405 and an S80M/S80C cannot be used together "
                        "(they share video0/video2, §5.1)")
    if kinds.count("uvc") > MAX_UVC:
        problems.append(f"{where}: at most {MAX_UVC} UVC cameras (§4.2)")
    gloves = sum(k in GLOVE_KINDS for k in kinds)
    if gloves > 2:
        problems.append(f"{where}: {gloves} gloves; only left_glove and right_glove exist, a third glove "
                        "would overwrite one of them (§4.5, §5.2)")
    return problems


def _compile_device(dev_id: str, d: dict, counters: dict[str, int], fps: float, where: str,
                    problems: list[str]) -> Device | None:
    """The device, or None when its keys or streams have problems (each added to ``problems``);
    RigError for a problem its builder finds."""
    found: list[str] = []
    unknown = set(d) - _DEVICE_KEYS
    if unknown:
        found.append(f"{where}: unknown keys {sorted(unknown)}; allowed: {sorted(_DEVICE_KEYS)}")
    kind = d["kind"]
    roles = DEVICE_KINDS[kind]
    streams_doc = d.get("streams") or {}
    if not isinstance(streams_doc, Mapping):
        problems += found + [f"{where}: 'streams' must map role -> stream options"]
        return None
    for role in streams_doc:
        if role not in roles:
            found.append(f"{where}: kind {kind!r} has no stream {role!r}; it has: {', '.join(roles)}")
    for role, spec in roles.items():
        if not spec.optional and role not in streams_doc:
            found.append(f"{where}: kind {kind!r} needs a {role!r} stream")
    for role, opts in streams_doc.items():
        if role not in roles:
            continue
        if not isinstance(opts or {}, Mapping):
            found.append(f"{where}: stream {role!r}: options must be a mapping (e.g. {{topic: /camera}}), "
                         f"got {opts!r}")
            continue
        try:
            parse_options(roles[role].kind, opts or {})
        except OptionError as exc:
            found.append(f"{where}: stream {role!r}: {exc}")
    if found:
        problems += found
        return None
    key = str(d.get("key") or f"{kind}:{dev_id}")
    if not d.get("key"):
        _warn_invented_key(where, dev_id, key)
    name = str(d.get("name") or dev_id)
    index = counters.get(kind, 0)
    counters[kind] = index + 1
    builder = _BUILDERS[kind if kind not in GLOVE_KINDS else "glove"]
    return builder(dev_id, kind, key, name, d, {r: dict(o or {}) for r, o in streams_doc.items()},
                   index, counters, fps, where)


def _warn_invented_key(where: str, dev_id: str, key: str) -> None:
    """§5.2 rule 3: the device key (serial number, MAC) is the only hardware evidence of which
    device wrote which data; an invented one looks like evidence and is not."""
    if (where, dev_id) in _warned_keys:
        return
    _warned_keys.add((where, dev_id))
    kind = key.split(":", 1)[0]
    log.warning("%s has no `key:`; it is recorded as %r, which does not identify the hardware. "
                "Add its serial number or MAC, e.g. `key: %s:<serial>` (§5.2 rule 3: the key is how one tells "
                "afterwards which device wrote which data)", where, key, kind)


# ---- per-kind naming -------------------------------------------------------------------

def _video(dev_id: str, role: str, opts: dict, slot: str, kind: StreamKind, master: str | None = None,
           status: str | None = None) -> StreamSpec:
    return StreamSpec(id=f"{dev_id}.{role}", device=dev_id, role=role, kind=kind, topic=opts.get("topic"),
                      slot=slot, master=master, status=status, source=opts)


def _uvc(dev_id, kind, key, name, d, streams, index, counters, fps, where) -> Device:
    slot = clean_slot_name(d["slot"]) if d.get("slot") else (
        "head_left_rgb" if index == 0 else "head_right_rgb" if index == 1 else f"head_right_rgb_{index}")
    out = [_video(dev_id, "rgb", streams["rgb"], slot, StreamKind.VIDEO, status=slot)]
    out += _ego_slam(dev_id, d, streams, slot, key, counters, where)
    return Device(dev_id, kind, key, name, role=d.get("role"), slots=(slot,), streams=tuple(out),
                  calibration=d.get("calibration"))


def _d435(dev_id, kind, key, name, d, streams, index, counters, fps, where) -> Device:
    base = clean_slot_name(d.get("slot_base") or "d435")
    n = counters.get(f"d435:{base}", 0) + 1
    counters[f"d435:{base}"] = n
    suffix = "" if n == 1 else f"_{n}"
    rgb, depth = f"{base}_rgb{suffix}", f"{base}_depth{suffix}"
    out = [_video(dev_id, "rgb", streams["rgb"], rgb, StreamKind.VIDEO)]
    slots = [rgb]
    if "depth" in streams:
        out.append(_video(dev_id, "depth", streams["depth"], depth, StreamKind.DEPTH, master=rgb))
        slots.append(depth)
    out += _ego_slam(dev_id, d, streams, rgb, key, counters, where)
    return Device(dev_id, kind, key, name, role=d.get("role"), slots=tuple(slots), streams=tuple(out),
                  calibration=d.get("calibration"))


def _s80m(dev_id, kind, key, name, d, streams, index, counters, fps, where) -> Device:
    out = [_video(dev_id, "left", streams["left"], "stereo_left", StreamKind.VIDEO)]
    if "right" in streams:
        out.append(_video(dev_id, "right", streams["right"], "stereo_right", StreamKind.VIDEO))
    if "depth" in streams:
        out.append(_video(dev_id, "depth", streams["depth"], "stereo_depth", StreamKind.DEPTH,
                          master="stereo_left"))
    if "imu" in streams:
        ts, samples = col.imu()
        out.append(StreamSpec(id=f"{dev_id}.imu", device=dev_id, role="imu", kind=StreamKind.IMU,
                              topic=streams["imu"].get("topic"), slot="stereo_left",
                              columns={"ts": ts.name, "samples": samples.name}, source=streams["imu"]))
    out += _ego_slam(dev_id, d, streams, "stereo_left", key, counters, where)
    return Device(dev_id, kind, key, name, role=d.get("role"),
                  slots=("stereo_left", "stereo_right", "stereo_depth"), streams=tuple(out),
                  calibration=d.get("calibration"))


def _gripper(dev_id, kind, key, name, d, streams, index, counters, fps, where) -> Device:
    rig_no = d.get("rig") or index + 1
    if isinstance(rig_no, bool) or not isinstance(rig_no, int):
        raise RigError(f"{where}: gripper rig must be an integer (1, 2, ...), got {rig_no!r}")
    taken = counters.setdefault("gripper_rigs", set())
    if rig_no in taken:
        raise RigError(f"{where}: gripper rig {rig_no} is already taken; each gripper needs its own rig number")
    taken.add(rig_no)
    slot_prefix = "gripper_" if rig_no == 1 else f"gripper_{rig_no}_"
    col_prefix = "" if rig_no == 1 else f"gripper_{rig_no}_"
    slots = tuple(slot_prefix + s for s in ("stereo_left", "rgb", "pose", "force_left", "force_right"))
    out = [_video(dev_id, "rgb", streams["rgb"], slot_prefix + "rgb", StreamKind.VIDEO)]
    for side in ("left", "right"):
        if f"{side}_force" in streams:
            name_ = f"observation.{col_prefix}gripper_{side}_force"
            out.append(_latest(dev_id, f"{side}_force", streams, {"force": name_}, name_ + "_ns",
                               slot_prefix + f"force_{side}"))
    for side in ("left", "right"):
        if f"{side}_force_matrix" in streams:
            name_ = f"observation.{col_prefix}gripper_{side}_force_matrix"
            out.append(_latest(dev_id, f"{side}_force_matrix", streams, {"matrix": name_}, name_ + "_ns",
                               slot_prefix + f"force_{side}"))
    if "state" in streams:
        out.append(_latest(dev_id, "state", streams, {"state": f"observation.{col_prefix}gripper_state"},
                           None, None))
    if "slam" in streams:
        out.append(_trajectory(dev_id, streams["slam"], f"observation.{col_prefix}slam_trajectory",
                               role="gripper", owner={"role": "gripper", "rig": rig_no, "device_key": key,
                                                       **({"hand": d["hand"]} if d.get("hand") else {})},
                               source_slot=slot_prefix + "stereo_left", status=slot_prefix + "pose",
                               where=where))
    return Device(dev_id, kind, key, name, role="gripper", rig=rig_no, hand=d.get("hand"), slots=slots,
                  streams=tuple(out))


def _glove(dev_id, kind, key, name, d, streams, index, counters, fps, where) -> Device:
    sensor = d.get("sensor")
    taken = counters.setdefault("glove_sensors", set())
    if sensor is None:
        sensor = next((s for s in GLOVE_SENSORS if s not in taken), None)
    if sensor not in GLOVE_SENSORS:
        raise RigError(f"{where}: glove sensor must be one of {GLOVE_SENSORS}, got {sensor!r}")
    if sensor in taken:
        raise RigError(f"{where}: sensor column {sensor!r} already belongs to another glove (§5.2: one writer per column)")
    taken.add(sensor)
    hand = sensor.split("_")[0]
    fields = {"pressure": f"observation.{sensor}"}
    if kind == "usb_glove":
        fields |= {"imu_quat": f"observation.{sensor}_imu_quat", "imu_valid": f"observation.{sensor}_imu_valid"}
    out = [_latest(dev_id, "pressure", streams, fields, None, sensor)]
    if "hand_pose" in streams:
        hand_frame = streams["hand_pose"].get("frame")
        if hand_frame is not None and hand_frame not in frames.HAND_FRAMES:
            raise RigError(f"{where}: hand_pose frame {hand_frame!r} is unknown; known: {', '.join(frames.HAND_FRAMES)}")
        out.append(_latest(dev_id, "hand_pose", streams, {"hand_pose": f"observation.{hand}_hand_pose"},
                           None, None))
    return Device(dev_id, kind, key, name, hand=hand, sensor=sensor, slots=(), streams=tuple(out),
                  info_kind=d.get("info_kind", "data_ble"))


def _latest(dev_id: str, role: str, streams: dict, fields: dict[str, str], ns_column: str | None,
            status: str | None) -> StreamSpec:
    return StreamSpec(id=f"{dev_id}.{role}", device=dev_id, role=role, kind=StreamKind.LATEST,
                      topic=streams[role].get("topic"), columns=fields, ns_column=ns_column,
                      status=status, source=streams[role])


def _trajectory(dev_id: str, opts: dict, column: str, *, role: str, owner: dict, source_slot: str,
                status: str | None, where: str) -> StreamSpec:
    frame, epoch = frames.ROLE_DEFAULTS[role]
    frame = opts.get("frame", frame)
    if frame not in frames.FRAMES:
        raise RigError(f"{where}: slam frame {frame!r} is unknown; known: {', '.join(frames.FRAMES)}")
    epoch = opts.get("epoch", epoch)
    clock = opts.get("clock", "camera_sensor")
    if epoch not in frames.EPOCHS or clock not in frames.CLOCKS:
        raise RigError(f"{where}: slam epoch/clock must be one of {frames.EPOCHS} / {frames.CLOCKS}")
    spec = {"frame": frame, "frame_axes": dict(frames.FRAMES[frame]),
            "time": {"t": "sensor_s", "clock": clock, "epoch": epoch},
            "owner": owner, "source_slot": source_slot}
    return StreamSpec(id=f"{dev_id}.slam", device=dev_id, role="slam", kind=StreamKind.TRAJECTORY,
                      topic=opts.get("topic"), columns={"points": column, "ns": column + "_ns"},
                      status=status, source={**opts, "slam_spec": spec})


def _ego_slam(dev_id: str, d: dict, streams: dict, source_slot: str, key: str, counters: dict,
              where: str) -> list[StreamSpec]:
    if "slam" not in streams:
        return []
    if d.get("role") != "ego":
        raise RigError(f"{where}: a camera with a slam stream must have role: ego (its trajectory is "
                       "named by role, observation.ego_slam_trajectory, §4.7)")
    n = counters.get("ego", 0) + 1
    counters["ego"] = n
    column = "observation.ego_slam_trajectory" if n == 1 else f"observation.ego_{n}_slam_trajectory"
    return [_trajectory(dev_id, streams["slam"], column, role="ego", owner={"role": "ego", "device_key": key},
                        source_slot=source_slot, status=None, where=where)]


def _joint_state(dev_id, kind, key, name, d, streams, index, counters, fps, where) -> Device:
    out = []
    for role, opts in streams.items():
        field_name = opts.get("field", "position")
        dim = opts.get("dim")
        if field_name not in JOINT_FIELDS:
            raise RigError(f"{where}: stream {role!r}: field must be one of {JOINT_FIELDS}, got {field_name!r}")
        if not isinstance(dim, int) or dim < 1:
            raise RigError(f"{where}: stream {role!r}: give the joint count as dim: N (an integer >= 1)")
        column = "action" if role == "action" else opts.get("column", f"observation.{dev_id}_{field_name}")
        out.append(StreamSpec(id=f"{dev_id}.{role}", device=dev_id, role=role, kind=StreamKind.LATEST,
                              topic=opts.get("topic"), columns={field_name: column}, source=opts))
    return Device(dev_id, kind, key, name, slots=(), streams=tuple(out))


_BUILDERS = {"uvc": _uvc, "d435": _d435, "s80m": _s80m, "gripper": _gripper, "glove": _glove,
             "joint_state": _joint_state}


# ---- columns and videos -----------------------------------------------------------------

def _collect(devices: tuple[Device, ...], where: str,
             problems: list[str]) -> tuple[tuple[col.ColumnSpec, ...], tuple[VideoSpec, ...]]:
    columns: list[col.ColumnSpec] = col.key_columns()
    videos: list[VideoSpec] = []
    statuses: list[col.ColumnSpec] = []
    for dev in devices:
        for s in dev.streams:
            columns += _stream_columns(s, where)
            if s.kind in (StreamKind.VIDEO, StreamKind.DEPTH):
                try:
                    videos.append(_video_spec(s, where))
                except RigError as exc:
                    problems.append(str(exc))
            if s.status and all(c.name != f"status.{s.status}" for c in statuses):
                statuses.append(col.status(s.status))
        if dev.sensor:  # hand pose columns are always written for a glove rig (§4.5, App. C)
            hand_col = f"observation.{dev.hand}_hand_pose"
            columns = [c for c in columns if c.name != hand_col]
            hand = col.vector(hand_col, (21, 3), semantic_suffix="_hand_pose", always=True)
            pose = next((s for s in dev.streams if s.role == "hand_pose"), None)
            if pose is not None and pose.source.get("frame"):   # 【提案】 declared keypoint frame
                hand = dataclasses.replace(hand, feature={**(hand.feature or {}), "frame": pose.source["frame"]})
            columns.append(hand)
    columns += statuses
    actions = [i for i, c in enumerate(columns) if c.name == "action"]
    if len(actions) > 1:  # a real action stream takes the placeholder's place
        columns[actions[0]] = columns.pop(actions[1])
    seen: set[str] = set()
    for c in columns:
        if c.name in seen:
            problems.append(f"{where}: column {c.name!r} would have two writers (§5.2)")
        seen.add(c.name)
    slots: dict[str, str] = {}
    for dev in devices:
        for slot in dev.slots:
            if slot in slots:
                problems.append(f"{where}: slot {slot!r} is used by devices {slots[slot]!r} and {dev.id!r}; "
                                "video slot names must be unique (§5.2)")
            slots[slot] = dev.id
    return tuple(columns), tuple(videos)


def _stream_columns(s: StreamSpec, where: str) -> list[col.ColumnSpec]:
    if s.kind is StreamKind.LATEST:
        out = []
        for field_name, name in s.columns.items():
            if field_name == "matrix":
                out.append(col.force_matrix(name, s.source.get("encoding", fm.ROW_DIFF_QUANTIZED),
                                            int(s.source.get("scale", 10))))
            elif field_name in JOINT_FIELDS:
                out.append(col.action(s.source["dim"]) if name == "action"
                           else col.vector(name, (s.source["dim"],)))
            else:
                # a field's column may end in its own name, a reserved suffix (_force, _imu_quat, ...)
                out.append(col.vector(name, _FIELD_SHAPES[field_name], semantic_suffix="_" + field_name))
        if s.ns_column:
            out.append(col.sample_ns(s.ns_column, "_force_matrix_ns" if "matrix" in s.columns else "_force_ns"))
        return out
    if s.kind is StreamKind.TRAJECTORY:
        return list(col.trajectory(s.columns["points"], dict(s.source["slam_spec"])))
    if s.kind is StreamKind.IMU:
        return list(col.imu())
    return []


def _video_spec(s: StreamSpec, where: str) -> VideoSpec:
    w, h = s.source.get("width"), s.source.get("height")
    if not (isinstance(w, int) and isinstance(h, int) and w > 0 and h > 0):
        raise RigError(f"{where}: video stream {s.id!r} needs integer width and height")
    if w % 2 or h % 2:
        raise RigError(f"{where}: video stream {s.id!r} is {w}x{h}; 4:2:0 video needs even sizes")
    if s.slot is None:
        raise RigError(f"{where}: video stream {s.id!r} has no slot (the video file's key)")
    fps = s.source.get("fps")
    return VideoSpec(key=s.slot, kind="depth" if s.kind is StreamKind.DEPTH else "rgb", width=w, height=h,
                     fps=float(fps) if fps else None, master=s.master)


# payload field -> its shape, from the one table of device kinds
_FIELD_SHAPES = {f.name: f.shape for roles in DEVICE_KINDS.values() for role in roles.values() for f in role.fields}
