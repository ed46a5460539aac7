"""The transport interface: raw CDR in, raw CDR out, ROS QoS, graph info.

Everything above a transport (recorder, simulated devices, device drivers) talks
to this interface only, so the same code runs over rclpy (``egorec_ros.nodes``)
and over plain DDS (``egorec_ros.transport.dds``, no ROS needed).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Literal, Protocol

from egorec_ros.transport.errors import TransportConfigError

RawCallback = Callable[[bytes, int], None]   # (serialized CDR incl. 4-byte encapsulation header, host arrival ns)
ServiceHandler = Callable[[bytes], bytes]    # serialized <srv>_Request -> serialized <srv>_Response


@dataclass(frozen=True)
class QoS:
    """The part of ROS QoS that matters for matching publishers and subscribers."""

    reliability: Literal["reliable", "best_effort"] = "reliable"
    depth: int = 10                                             # keep-last depth
    durability: Literal["volatile", "transient_local"] = "volatile"

    def __post_init__(self) -> None:
        if self.reliability not in ("reliable", "best_effort"):
            raise ValueError(f"QoS reliability must be 'reliable' or 'best_effort', got {self.reliability!r}")
        if self.durability not in ("volatile", "transient_local"):
            raise ValueError(f"QoS durability must be 'volatile' or 'transient_local', got {self.durability!r}")
        if self.depth < 1:
            raise ValueError(f"QoS depth must be >= 1, got {self.depth}")


DEFAULT = QoS("reliable", 10, "volatile")           # rclcpp/rclpy default profile
SENSOR_DATA = QoS("best_effort", 5, "volatile")     # rmw_qos_profile_sensor_data
# A best-effort subscriber matches reliable and best-effort publishers alike (a reliable
# one would not match realsense2_camera's best-effort images); the depth absorbs bursts.
RECORDER = QoS("best_effort", 50, "volatile")
# Windowed streams (IMU, SLAM trajectories: every sample is a value in a row; small messages)
# keep 200 samples under the recorder profile: 2 s at 100 Hz, where 50 (0.5 s) was less than an
# rclpy executor falls behind on a busy machine (bench_transport, load 15 on 2 cores: a bare rclpy
# subscriber lost 33 % of the IMU at depth 50, images 0 %). Deeper would only hand on older samples.
RECORDER_SMALL = QoS("best_effort", 200, "volatile")
LATCHED = QoS("reliable", 1, "transient_local")     # the last value reaches late joiners (like /tf_static)

PROFILES = {"default": DEFAULT, "sensor_data": SENSOR_DATA, "recorder": RECORDER, "latched": LATCHED}


def qos_from(value: str | QoS | None, default: QoS = RECORDER) -> QoS:
    """A QoS from a profile name (``default``, ``sensor_data``, ``recorder``, ``latched``) or as is."""
    if value is None:
        return default
    if isinstance(value, QoS):
        return value
    if value not in PROFILES:
        raise TransportConfigError(f"unknown QoS profile {value!r}; known: {', '.join(PROFILES)}")
    return PROFILES[value]


def stream_qos(entries: list[str], streams: list[str]) -> dict[str, QoS]:
    """``["PROFILE", "STREAM=PROFILE", ...]`` -> stream id -> QoS: a bare profile is the default for
    every stream (else ``recorder``), ``STREAM=PROFILE`` overrides one stream."""
    default, overrides = RECORDER, {}
    for entry in filter(None, (e.strip() for e in entries)):
        stream, sep, profile = entry.rpartition("=")
        if not sep:
            default = qos_from(profile)
        elif stream not in streams:
            raise TransportConfigError(f"QoS for unknown stream {stream!r}; the rig's streams: {', '.join(streams)}")
        else:
            overrides[stream] = qos_from(profile)
    return {s: overrides.get(s, default) for s in streams}


class Publisher(Protocol):
    def publish(self, cdr: bytes) -> None:
        """Send one serialized message (CDR with its 4-byte encapsulation header)."""

    # optional: ``subscription_count() -> int``, the subscribers matched now (DDS and rclpy have it;
    # egorec_ros.live.preview publishes only while it is above 0)


class Subscription(Protocol):
    def close(self) -> None: ...


class Transport(Protocol):
    def subscribe(self, topic: str, msgtype: str, qos: QoS, callback: RawCallback) -> Subscription:
        """Deliver every message on ``topic`` (ROS name, e.g. ``/camera/image``) of ROS type
        ``msgtype`` (``sensor_msgs/msg/Image``) as raw CDR plus its host arrival time.
        Callbacks come from a transport thread; they must not block."""

    def publisher(self, topic: str, msgtype: str, qos: QoS) -> Publisher: ...

    def serve(self, service: str, srvtype: str, handler: ServiceHandler) -> Subscription:
        """Answer calls of ``service`` (full ROS name) of type ``srvtype`` (``egorec_ros/srv/Start``):
        ``handler`` gets the serialized ``<srvtype>_Request`` and returns the serialized
        ``<srvtype>_Response`` (plain CDR, as rosbags' typestore writes them)."""

    def call(self, service: str, srvtype: str, request: bytes, timeout_s: float = 5.0) -> bytes:
        """Call a service; TimeoutError when no server answers in time."""

    def topics(self) -> dict[str, list[str]]:
        """Topics seen on the graph (ROS names) -> their ROS message types."""

    def callback_drops(self) -> int:
        """Samples taken and never handed to their callback (the callback queue was full, or they
        waited over a second: a starved process); the recorder reports them."""

    def close(self) -> None: ...
