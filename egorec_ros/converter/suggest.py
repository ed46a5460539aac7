"""A starting rig file from a bag's topics (``egorec convert --suggest-rig``).

Recognised topics become devices of config/rigs/*.yaml form:

* an Imu topic makes the first colour camera the left eye of an ``s80m`` (role ego) with that
  IMU, a second camera named *right* its right eye, and a depth image its depth;
* otherwise a depth image pairs with the colour camera sharing the longest topic prefix as a
  ``d435``; remaining colour cameras are ``uvc`` cameras;
* WrenchStamped / ForceMatrix / GripperState topics make a ``gripper`` per topic namespace,
  with the camera of that namespace as its rgb stream;
* GloveFrame topics make gloves (``usb_glove`` when the first frame has IMU data), with the
  HandPose topic of the same side;
* the first remaining pose topic (SlamPose, PoseStamped, Odometry, ...) is the ego camera's SLAM.

Image sizes come from each topic's first message, calibration from a CameraInfo beside the
image topic. Topics it cannot map are listed as YAML comments, and the result is compiled
with ``compile_rig``: what still needs a human is listed in ``RigSuggestion.todo``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import PurePosixPath

import yaml

from egorec_ros.bags.bagfile import Bag, RawMessage, TopicInfo, normal_topic
from egorec_ros.bags.errors import BagError
from egorec_ros.converter.calibration import DEPTH_SCALE_M_PER_MM
from egorec_ros.messages.context import MessageContext
from egorec_ros.messages.errors import FrameError
from egorec_ros.messages.payloads import forces, gloves, images, imu, poses
from egorec_ros.messages.payloads.camera_info import CAMERA_INFO, camera_calibration, camera_info_topic
from egorec_ros.rig.compile import MAX_UVC, RigError, compile_rig
from egorec_ros.rig.load import SUGGESTED_FROM

_IMAGE_TYPES = (images.IMAGE, images.COMPRESSED_IMAGE)
_POSE_TYPES = (poses.SLAM_POSE, poses.POSE_STAMPED, poses.POSE_WITH_COVARIANCE_STAMPED, poses.ODOMETRY,
               poses.TRANSFORM_STAMPED)
_GRIPPER_TYPES = (forces.WRENCH_STAMPED, forces.FORCE_MATRIX, forces.GRIPPER_STATE)


@dataclass
class RigSuggestion:
    text: str                                          # the YAML, with comments
    todo: list[str] = field(default_factory=list)      # what a human must fill in before it compiles
    notes: list[str] = field(default_factory=list)     # what was left out, and why

    @property
    def compiles(self) -> bool:
        return not self.todo


@dataclass
class _Camera:
    topic: str
    width: int
    height: int
    depth: bool
    count: int


def suggest_rig(bag: Bag, *, name: str | None = None) -> RigSuggestion:
    used: set[str] = set()
    todo: list[str] = []
    notes: list[str] = []
    by_type: dict[str, list[TopicInfo]] = {}
    for info in bag.topics.values():
        if info.decodable and info.count:
            by_type.setdefault(info.msgtype, []).append(info)
    cameras = [c for mt in _IMAGE_TYPES for t in by_type.get(mt, []) if (c := _camera(bag, t, notes))]
    colour = [c for c in cameras if not c.depth]
    depth = [c for c in cameras if c.depth]
    devices = _grippers(by_type, colour, used, notes)
    imus = by_type.get(imu.IMU, [])
    if imus and colour:
        devices["ego"] = _stereo_ego(bag, colour, depth, imus[0], used)
        notes += [f"depth topic {d.topic} left out: an S80M rig cannot also have a D435 (§5.1)"
                 for d in depth if d.topic not in used]
    else:
        for d in depth:
            partner = max(colour, key=lambda c: _shared_prefix(c.topic, d.topic), default=None)
            if partner is None:
                notes.append(f"depth topic {d.topic} left out: no colour camera to pair with (d435 needs rgb)")
                continue
            colour.remove(partner)
            used |= {partner.topic, d.topic}
            devices[f"d435_{len(devices)}"] = _camera_device(
                "d435", {"rgb": _video_stream(partner), "depth": _video_stream(d)}, partner, bag, used)
    for cam in colour[:MAX_UVC]:
        used.add(cam.topic)
        devices[f"cam{len(devices)}"] = _camera_device("uvc", {"rgb": _video_stream(cam)}, cam, bag, used)
    devices.update(_gloves(bag, by_type, used))
    _ego_slam(devices, by_type, used)

    doc = {"name": name or bag.path.stem, "fps": 30, "devices": devices}
    if not devices:
        todo.append(_no_camera(bag, by_type, notes))
    else:
        try:
            compile_rig(doc, where="suggested rig")
        except RigError as exc:
            todo.append(str(exc))
    return RigSuggestion(_render(bag, doc, used, todo, notes), todo, notes)


def _no_camera(bag: Bag, by_type: dict[str, list[TopicInfo]], notes: list[str]) -> str:
    """Why no device was suggested, and what to do: a rig records rows on a camera's frames."""
    if not bag.message_count:
        why = "the bag holds no message"
    elif any(mt in by_type for mt in _IMAGE_TYPES):
        why = "its image topics cannot be used (see the NOTE lines)"
    else:
        types = sorted({info.msgtype for info in bag.topics.values()})
        why = (f"none of its {len(bag.topics)} topics is an image ({' or '.join(_IMAGE_TYPES)}); it has "
               f"{', '.join(types[:6])}{', ...' if len(types) > 6 else ''}")
        undecodable = [info.topic for info in bag.topics.values() if not info.decodable]
        if undecodable:
            why += f" ({len(undecodable)} topic(s) of unknown type: {', '.join(undecodable[:3])})"
    return (f"no camera topic found in {bag.path}: {why}. A rig needs at least one camera (rows are built on its "
            "frames): fill in `devices` by hand, or suggest a rig from a bag that recorded the cameras")


def _first(bag: Bag, topic: str) -> RawMessage:
    """The first message of a topic the bag lists with messages (only such topics are looked at)."""
    raw = bag.first(topic)
    if raw is None:
        raise BagError(f"{bag.path}: its index lists {bag.topics[topic].count} message(s) on {topic}, but none can "
                       "be read: the index does not match the messages; reindex a copy of the bag "
                       "(`ros2 bag reindex`, `rosbag reindex`) and suggest a rig from the copy")
    return raw


# ---- cameras -----------------------------------------------------------------------------------

def _camera(bag: Bag, info: TopicInfo, notes: list[str]) -> _Camera | None:
    raw = _first(bag, info.topic)
    msg = bag.decode(raw)
    ctx = MessageContext(str(bag.path), info.topic, raw.log_ns, bag.start_ns)
    try:
        width, height = images.frame_size(info.msgtype, msg, ctx)
    except FrameError as exc:
        notes.append(f"image topic {info.topic} left out: its first frame cannot be decoded: {exc}")
        return None
    return _Camera(info.topic, width, height, images.is_depth_image(info.msgtype, msg), info.count)


def _stereo_ego(bag: Bag, colour: list[_Camera], depth: list[_Camera], imu_topic: TopicInfo,
                used: set[str]) -> dict:
    """An S80M: the first camera (one named left if any) + a camera named right + the first depth
    image + the IMU. The cameras it takes are removed from ``colour``."""
    left = next((c for c in colour if "left" in c.topic), colour[0])
    colour.remove(left)
    streams = {"left": _video_stream(left), "imu": {"topic": imu_topic.topic}}
    right = next((c for c in colour if "right" in c.topic), None)
    if right:
        colour.remove(right)
        streams["right"] = _video_stream(right)
    if depth:
        streams["depth"] = _video_stream(depth[0])
    used |= {o["topic"] for o in streams.values()}
    return _camera_device("s80m", streams, left, bag, used, role="ego")


def _video_stream(cam: _Camera) -> dict:
    return {"topic": cam.topic, "width": cam.width, "height": cam.height}


def _camera_device(kind: str, streams: dict, main: _Camera, bag: Bag, used: set[str], role: str | None = None) -> dict:
    dev: dict = {"kind": kind}
    if role:
        dev["role"] = role
    dev["streams"] = streams
    info_topic = _camera_info_topic(bag, main.topic)
    if info_topic:
        used.add(info_topic)
        info = bag.decode(_first(bag, info_topic))
        fps = _message_rate(bag, main.topic)
        dev["calibration"] = camera_calibration(info, name=main.topic.strip("/").replace("/", "_"), fps=fps,
                                                depth_scale=DEPTH_SCALE_M_PER_MM if "depth" in streams else None)
    return dev


def _message_rate(bag: Bag, topic: str, sample: int = 100) -> float:
    """Messages per second of one topic, from the span of its first ``sample`` messages (not the
    whole bag's duration: other topics may run longer)."""
    times = []
    messages = bag.messages([topic])
    try:
        for raw in messages:
            times.append(raw.log_ns)
            if len(times) >= sample:
                break
    finally:
        messages.close()
    span = times[-1] - times[0] if len(times) > 1 else 0
    return round((len(times) - 1) / span * 1e9, 1) if span > 0 else 0.0


def _camera_info_topic(bag: Bag, image_topic: str) -> str | None:
    """The topic conversion will take (image_transport convention), else the CameraInfo
    topic sharing the longest prefix with the image topic."""
    candidates = [t for t, i in bag.topics.items() if i.msgtype == CAMERA_INFO and i.decodable and i.count]
    if (info := bag.find(camera_info_topic(image_topic))) is not None and info.topic in candidates:
        return info.topic
    best = max(candidates, key=lambda t: _shared_prefix(t, image_topic), default=None)
    return best if best and _shared_prefix(best, image_topic) > 0 else None


# ---- other devices -------------------------------------------------------------------------------

def _grippers(by_type: dict, colour: list[_Camera], used: set[str], notes: list[str]) -> dict[str, dict]:
    """One gripper per first topic component holding gripper messages (/gripper_1/...)."""
    groups: dict[str, list[TopicInfo]] = {}
    for mt in _GRIPPER_TYPES:
        for info in by_type.get(mt, []):
            groups.setdefault(_root(info.topic), []).append(info)
    devices = {}
    for n, (root, infos) in enumerate(sorted(groups.items()), start=1):
        cam = next((c for c in colour if _root(c.topic) == root), None)
        if cam is None:
            notes.append(f"gripper topics under {root} ({', '.join(i.topic for i in infos)}) left out: no camera "
                         f"under {root}, and a gripper needs an rgb stream")
            continue
        colour.remove(cam)
        streams = {"rgb": _video_stream(cam)}
        for mt, role in ((forces.WRENCH_STAMPED, "force"), (forces.FORCE_MATRIX, "force_matrix")):
            sided = [i for i in infos if i.msgtype == mt]
            for side, info in zip(("left", "right"), _by_side(sided)):
                streams[f"{side}_{role}"] = {"topic": info.topic}
        state = next((i for i in infos if i.msgtype == forces.GRIPPER_STATE), None)
        if state:
            streams["state"] = {"topic": state.topic}
        pose = next((i for mt in _POSE_TYPES for i in by_type.get(mt, []) if _root(i.topic) == root), None)
        if pose:
            streams["slam"] = {"topic": pose.topic}
        used |= {o["topic"] for o in streams.values()}
        devices[f"gripper_{n}"] = {"kind": "gripper", "rig": n, "streams": streams}
    return devices


def _gloves(bag: Bag, by_type: dict, used: set[str]) -> dict[str, dict]:
    devices = {}
    frames = _by_side(by_type.get(gloves.GLOVE_FRAME, []))[:2]
    hands = by_type.get(gloves.HAND_POSE, [])
    for side, info in zip(("left", "right"), frames):
        first = bag.decode(_first(bag, info.topic))
        streams = {"pressure": {"topic": info.topic}}
        hand = next((h for h in hands if side in h.topic), None) or next(
            (h for h in hands if _root(h.topic) == _root(info.topic)), None)
        if hand:
            streams["hand_pose"] = {"topic": hand.topic}
        used |= {o["topic"] for o in streams.values()}
        kind = "usb_glove" if len(first.imu_quat) else "ble_glove"
        devices[f"{side}_glove"] = {"kind": kind, "sensor": f"{side}_glove", "streams": streams}
    return devices


def _ego_slam(devices: dict[str, dict], by_type: dict, used: set[str]) -> None:
    """The first unused pose topic becomes the SLAM of the ego camera (or the first camera)."""
    pose = next((i for mt in _POSE_TYPES for i in by_type.get(mt, []) if i.topic not in used), None)
    cams = [d for d in devices.values() if d["kind"] in ("s80m", "d435", "uvc")]
    if pose is None or not cams:
        return
    ego = next((d for d in cams if d.get("role") == "ego"), cams[0])
    ego["role"] = "ego"
    ego["streams"]["slam"] = {"topic": pose.topic}
    used.add(pose.topic)


def _by_side(infos: list[TopicInfo]) -> list[TopicInfo]:
    """Topics named left first, then right, then the others in name order."""
    return sorted(infos, key=lambda i: (0 if "left" in i.topic else 1 if "right" in i.topic else 2, i.topic))


def _root(topic: str) -> str:
    parts = PurePosixPath(normal_topic(topic)).parts
    return "/" + parts[1] if len(parts) > 2 else "/"


def _shared_prefix(a: str, b: str) -> int:
    n = 0
    for x, y in zip(PurePosixPath(normal_topic(a)).parts[1:], PurePosixPath(normal_topic(b)).parts[1:]):
        if x != y:
            break
        n += 1
    return n


# ---- output --------------------------------------------------------------------------------------

def _render(bag: Bag, doc: dict, used: set[str], todo: list[str], notes: list[str]) -> str:
    head = [SUGGESTED_FROM.format(bag=bag.path),
            "# Check device kinds, keys, names and sizes before recording or converting with it."]
    head += [_comment(f"TODO: {line}") for line in todo] + [_comment(f"NOTE: {line}") for line in notes]
    body = yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, default_flow_style=None, width=120)
    tail = []
    for info in bag.topics.values():
        if info.topic in used:
            continue
        why = (f": {info.problem}" if info.problem else ": needs `child_frame` to pick the transform"
               if info.msgtype == poses.TF_MESSAGE else "")
        tail.append(_comment(f"  {info.topic} ({info.msgtype}, {info.count} messages){why}"))
    if tail:
        tail.insert(0, "# Topics not mapped:")
    return "\n".join(head) + "\n" + body + ("\n".join(tail) + "\n" if tail else "")


def _comment(text: str) -> str:
    """``text`` as YAML comment lines: a multi-line error text (a definition parser's) must not
    break the file."""
    return "\n".join(f"# {line}".rstrip() for line in text.splitlines() or [""])
