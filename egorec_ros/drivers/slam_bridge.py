"""SLAM bridge core: an ORB-SLAM process's stdout lines -> ``egorec_ros/msg/SlamPose``.

Line: ``[t] XYZ:(x,y,z) Quat:(w=…,x=…,y=…,z=…) Host:(ns)`` (Host optional). ``t`` is the
camera sensor time in seconds; it becomes ``sensor_time`` counted from the rig's epoch
(``first_frame``: from the first pose of the session; ``enter_press``/``device_boot``:
the process already counts from there). The header stamp is ``Host`` — the host time
of the camera frame the pose came from (Unix ns, or monotonic ns mapped to Unix) — or,
without it, the read time of the line. ``header.frame_id`` is the rig's frame.
Other output of the process (banners, logs) is counted, not treated as bad.
"""
from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from egorec_ros.messages.payloads.poses import slam_pose_message
from egorec_ros.drivers import clock
from egorec_ros.drivers.health import Health
from egorec_ros.drivers.process_link import ProcessDriver
from egorec_ros.drivers.publish import Publish, header, store
from egorec_ros.drivers.reconnect import DeviceLoop

_NUM = r"\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[-+]?nan|[-+]?inf)\s*"
POSE_LINE = re.compile(rf"^\[{_NUM}\]\s*XYZ:\({_NUM},{_NUM},{_NUM}\)\s*"
                       rf"Quat:\(\s*w={_NUM},\s*x={_NUM},\s*y={_NUM},\s*z={_NUM}\)"
                       rf"(?:\s*Host:\(\s*(\d+)\s*\))?\s*$", re.IGNORECASE)
UNIX_NS_MIN = 10**18            # stamps below this are monotonic (seconds since boot), not Unix
QUAT_NORM_TOLERANCE = 0.05

BAD_MALFORMED = "malformed"
BAD_NOT_FINITE = "not_finite"
BAD_QUAT = "quat_norm"
BAD_T_BACKWARDS = "t_backwards"
OTHER_LINES = "other_lines"     # in Health.bad for the record, though not a device fault


@dataclass(frozen=True)
class SlamConfig:
    command: Sequence[str]
    topic: str
    frame: str                  # rig stream option `frame`
    epoch: str = "first_frame"  # rig stream option `epoch`
    name: str = "slam"


class SlamLineDecoder:
    def __init__(self, config: SlamConfig, health: Health, publish: Publish) -> None:
        self.config, self.health, self._publish = config, health, publish
        self.reset()

    def reset(self) -> None:
        self._t0: float | None = None
        self._last_t = -math.inf

    def line(self, text: str, read_ns: int) -> None:
        m = POSE_LINE.match(text.strip())
        if m is None:
            self.health.drop(BAD_MALFORMED if "XYZ:" in text else OTHER_LINES)
            return
        values = np.array([float(v) for v in m.groups()[:8]], dtype=np.float64)
        if not np.all(np.isfinite(values)):
            self.health.drop(BAD_NOT_FINITE)
            return
        t, x, y, z, qw, qx, qy, qz = values
        if abs(math.sqrt(qw * qw + qx * qx + qy * qy + qz * qz) - 1.0) > QUAT_NORM_TOLERANCE:
            self.health.drop(BAD_QUAT)
            return
        if t <= self._last_t:
            self.health.drop(BAD_T_BACKWARDS)
            return
        self._last_t = t
        if self._t0 is None:
            self._t0 = t
        sensor_time = t - self._t0 if self.config.epoch == "first_frame" else t
        host = m.group(9)
        stamp = read_ns if host is None else int(host)
        if stamp < UNIX_NS_MIN:
            stamp = clock.unix_ns(stamp)
        point = np.array([sensor_time, x, y, z, qx, qy, qz, qw], dtype=np.float64)
        self._publish(self.config.topic, slam_pose_message(store(), point, header(stamp, self.config.frame)))
        self.health.sent()


class SlamBridge(ProcessDriver[SlamLineDecoder]):
    def __init__(self, config: SlamConfig, publish: Publish, on_status=None) -> None:
        super().__init__(config.command, config.name, on_status)
        self.config = config
        self.decoder = SlamLineDecoder(config, self.health, publish)

    def pump(self, stdout, loop: DeviceLoop) -> None:
        for raw in stdout:
            self.decoder.line(raw.decode("utf-8", "replace"), clock.now_ns())
            if loop.stopping:
                return
