"""Simulated devices as ROS publishers: every stream of a rig on its topic, in real time.

The samples are those of ``LiveRig`` (host-clock stamps at capture, the sim's jitter,
drops and stalls); each becomes the message a real setup publishes (``sensor_msgs``
Image incl. 16UC1 depth, Imu, WrenchStamped, our GloveFrame / HandPose / ForceMatrix /
GripperState / SlamPose), built by the same functions that write test bags and
serialized with rosbags' typestore. Each image also gets its CameraInfo, as camera
drivers publish it. ``sent`` records what went out (stream, stamp) for checks.
"""
from __future__ import annotations

import threading
import time
from collections import Counter
from typing import Callable

import numpy as np

from egorec_ros.assembly.sample import Sample
from egorec_ros.bags.bagwrite import sample_message
from egorec_ros.converter.calibration import camera_info_topic
from egorec_ros.messages.payloads.camera_info import CAMERA_INFO
from egorec_ros.messages.payloads.stamps import header_message
from egorec_ros.messages.typestores import ros2_typestore
from egorec_ros.live.input import stream_msgtype
from egorec_ros.rig.kinds import StreamKind
from egorec_ros.rig.model import Device, Rig, StreamSpec
from egorec_ros.sim.flaws import DEFAULT, FlawsChoice
from egorec_ros.sim.live import LiveRig
from egorec_ros.sim.plan import Sizes
from egorec_ros.transport.base import SENSOR_DATA, QoS, Transport

SentLog = Callable[[str, int, int], object]   # (stream id, header stamp ns, host time just before publishing)


class SimPublisher:
    """``start()`` / ``stop()`` (or ``with``); publishes until stopped (or ``seconds``)."""

    def __init__(self, rig: Rig, transport: Transport, *, qos: QoS = SENSOR_DATA, seed: int = 0,
                 flaws: FlawsChoice = DEFAULT, sizes: Sizes = None, seconds: float | None = None,
                 on_sent: SentLog | None = None) -> None:
        self._store = ros2_typestore()
        self._streams = {s.id: s for s in rig.streams.values() if s.topic}
        topics = {sid: s.topic for sid, s in self._streams.items() if s.topic}
        self._types = {sid: stream_msgtype(s) for sid, s in self._streams.items()}
        self._pubs = {sid: transport.publisher(topics[sid], self._types[sid], qos) for sid in topics}
        devices = {s.id: d for d in rig.devices for s in d.streams}
        self._infos = {sid: (transport.publisher(camera_info_topic(topics[sid], s.source.get("camera_info")),
                                                 CAMERA_INFO, qos), devices[sid])
                       for sid, s in self._streams.items()
                       if s.kind in (StreamKind.VIDEO, StreamKind.DEPTH) and self._types[sid].endswith("/Image")}
        self._on_sent = on_sent
        self._lock = threading.Lock()
        self.sent: Counter[str] = Counter()
        self._live = LiveRig(rig, self._publish, seconds=seconds, seed=seed, flaws=flaws, sizes=sizes)

    def start(self) -> int:
        return self._live.start()

    def wait(self, timeout: float | None = None) -> bool:
        return self._live.wait(timeout)

    def stop(self) -> None:
        self._live.stop()

    @property
    def max_lag_ns(self) -> int:
        """Worst delivery behind the simulated schedule (a busy machine makes stamps lag behind now)."""
        return self._live.max_lag_ns

    @property
    def behind(self) -> dict[str, int]:
        """Samples not published, per stream, because the machine could not render them in time
        (dropped and counted, as a real driver drops frames, rather than published late)."""
        return dict(self._live.behind)

    def __enter__(self) -> SimPublisher:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _publish(self, sample: Sample) -> None:
        spec = self._streams.get(sample.stream)
        if spec is None:
            return
        msgtype = self._types[spec.id]
        cdr = self._store.serialize_cdr(sample_message(self._store, spec, msgtype, sample), msgtype)
        sent_ns = time.time_ns()
        self._pubs[spec.id].publish(cdr)
        if spec.id in self._infos:
            pub, device = self._infos[spec.id]
            pub.publish(self._store.serialize_cdr(self._camera_info(spec, device, sample), CAMERA_INFO))
        with self._lock:
            self.sent[spec.id] += 1
            if self._on_sent is not None:
                self._on_sent(spec.id, sample.stamp_ns, sent_ns)

    def _camera_info(self, spec: StreamSpec, device: Device, sample: Sample) -> object:
        """The device's calibration (left camera) or a pinhole with a 90° field of view."""
        height, width = np.shape(sample.payload)[:2]
        cal = (device.calibration or {}).get("left_camera", {})
        fx, fy, cx, cy = cal.get("intrinsic", [width / 2, width / 2, width / 2, height / 2])
        k = np.array([fx, 0, cx, 0, fy, cy, 0, 0, 1], dtype=np.float64)
        p = np.array([fx, 0, cx, 0, 0, fy, cy, 0, 0, 0, 1, 0], dtype=np.float64)
        types = self._store.types
        return types[CAMERA_INFO](
            header=header_message(self._store, sample.stamp_ns, spec.id), height=height, width=width,
            distortion_model="plumb_bob", d=np.array(cal.get("distortion", [0.0] * 5), dtype=np.float64), k=k,
            r=np.array([1, 0, 0, 0, 1, 0, 0, 0, 1], dtype=np.float64), p=p, binning_x=0, binning_y=0,
            roi=types["sensor_msgs/msg/RegionOfInterest"](x_offset=0, y_offset=0, height=0, width=0,
                                                          do_rectify=False))
