"""The one input type of the assembler: a timestamped sample of one stream.

Drivers, the ROS recorder node, simulated devices and the bag converter all
produce ``Sample`` objects; the assembler turns them into rows. Keeping this
type tiny and ROS-free is what lets a replayed bag and a live recording go
through the same code.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Sample:
    """One sample of one stream.

    stamp_ns:   host clock at capture (ROS ``header.stamp``, or receive time when the
                source has no header). All ``*_ns`` columns come from this clock.
    arrival_ns: host clock when the sample reached the recorder (live) or the bag's
                receive time (replay). Decides lateness, never row placement.
    payload:    depends on the stream kind (see ``egorec_ros.rig.kinds``):
                video  -> HxWx3 uint8 RGB / HxW uint8 gray ndarray, or a LazyFrame
                depth  -> HxW uint16 millimetres (0 = invalid), or a LazyFrame
                (``egorec_ros.codecs.lazy_frame``)
                imu    -> float32 (6,) [ax, ay, az, gx, gy, gz] (m/s^2, rad/s)
                trajectory -> float64 (8,) [t, x, y, z, qx, qy, qz, qw], t on the sensor clock
                latest -> dict field name -> ndarray (fields listed by the stream's role)
    raw_stamp_ns: device clock stamp when the source gives one (0 = none).
    """

    stream: str
    stamp_ns: int
    arrival_ns: int
    payload: Any
    raw_stamp_ns: int = 0
