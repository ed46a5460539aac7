"""Camera calibration (§6.5) from the bag's CameraInfo, for rig cameras that have none.

Which CameraInfo belongs to an image topic follows ROS image_transport: a camera
publishes ``<ns>/image_raw`` (or any image name, plus transport sub-topics such as
``<ns>/image/compressed``) and its ``<ns>/camera_info`` beside the base image topic.
So the rig usually needs no extra option: ``/camera/image_raw`` -> ``/camera/camera_info``,
``/raspicam_node/image/compressed`` -> ``/raspicam_node/camera_info``; a stream whose
CameraInfo lives elsewhere names it with ``camera_info: TOPIC``.

A calibration written in the rig file always wins. A CameraInfo whose resolution
differs from the stream's is not used (its intrinsics are for other pixels); a note
says so.
"""
from __future__ import annotations

import dataclasses
from egorec_ros.bags.bagfile import Bag
from egorec_ros.messages.payloads.camera_info import CAMERA_INFO, camera_calibration, camera_info_topic
from egorec_ros.converter.split import EpisodeWindow
from egorec_ros.rig.kinds import StreamKind
from egorec_ros.rig.model import Device, Rig, StreamSpec
from egorec_ros.messages.msg import Msg

DEPTH_SCALE_M_PER_MM = 0.001      # depth streams are stored in millimetres


def with_bag_calibration(rig: Rig, bag: Bag, window: EpisodeWindow, notes: list[str]) -> Rig:
    """``rig`` with a calibration for every camera device that has none in the rig and whose
    CameraInfo is in the bag (its first message in the window, else in the bag)."""
    devices = []
    for device in rig.devices:
        # (video stream, its CameraInfo topic) for each video stream with a topic
        videos = [(s, camera_info_topic(s.topic, s.source.get("camera_info")))
                  for s in device.streams if s.kind is StreamKind.VIDEO and s.topic]
        calibration = None
        if device.calibration is None and videos:
            calibration = _calibration(device, videos, bag, window, rig.fps, notes)
        devices.append(dataclasses.replace(device, calibration=calibration) if calibration else device)
    return dataclasses.replace(rig, devices=tuple(devices))


def _calibration(device: Device, videos: list[tuple[StreamSpec, str]], bag: Bag, window: EpisodeWindow, fps: float,
                 notes: list[str]) -> dict | None:
    main, main_topic = videos[0]
    info = _camera_info(bag, main, main_topic, window, notes)
    if info is None:
        return None
    right_info, right_note = None, ""
    right = next(((s, topic) for s, topic in videos[1:] if s.role == "right"), None)
    if right is not None:
        right_info = _camera_info(bag, *right, window, notes)
        right_note = f" and {right[1]}" if right_info is not None else ""
    depth = any(s.kind is StreamKind.DEPTH for s in device.streams)
    notes.append(f"{device.id}: calibration from {main_topic}{right_note}")
    return camera_calibration(info, name=device.name, right=right_info, fps=fps,
                              depth_scale=DEPTH_SCALE_M_PER_MM if depth else None)


def _camera_info(bag: Bag, stream: StreamSpec, topic: str, window: EpisodeWindow, notes: list[str]) -> Msg | None:
    info = bag.find(topic)
    if info is None or info.msgtype != CAMERA_INFO or not info.decodable:
        if stream.source.get("camera_info"):  # the rig named it: say why it was not used
            notes.append(f"{stream.id}: camera_info topic {topic} is not a readable CameraInfo topic of this "
                         "bag; no calibration from the bag")
        return None
    topic = info.topic
    raw = bag.first(topic, window.start_ns, window.end_ns) or bag.first(topic)
    if raw is None:
        return None
    msg = bag.decode(raw)
    size = (int(msg.width), int(msg.height))
    want = (stream.source.get("width"), stream.source.get("height"))
    if size != want:
        notes.append(f"{stream.id}: {topic} describes {size[0]}x{size[1]} images but the stream is "
                     f"{want[0]}x{want[1]}; its calibration is not used")
        return None
    return msg
