"""Which driver serves which device of a rig, and where the device is plugged.

The rig names devices by kind and key; a lab gives where a device is only when it cannot
be found: serial ports are found by USB serial number (the key), a BLE glove by the
address in its key, a UVC camera by its /dev/v4l/by-id name (the key); a camera-service
socket, an S80 SDK command and a SLAM command are given as ``ID[.STREAM]=WHERE``:

* ``left_glove=/dev/ttyACM0``, ``gripper=/dev/serial/by-id/...`` (serial devices)
* ``ble_glove=AA:BB:CC:DD:EE:FF`` (BLE address)
* ``cam=/dev/video2`` or a video file (UVC through PyAV), ``cam=ipc:/run/ksqf.sock`` (camera
  IPC), ``gripper.rgb=ipc:/run/gripper_cam.sock`` (the camera of a gripper)
* ``s80=cmd:/opt/s80/s80_pipe --fps 50`` (S80 SDK process), ``ego.slam=/opt/orbslam/run ...``

A device the rig names that is neither found nor placed is ``missing`` (the others still
run); a plugged device the rig does not name is ``unused``. Pure: ``found`` is what
``drivers.discovery`` saw, so this is tested without hardware.
"""
from __future__ import annotations

import shlex
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from egorec_ros.drivers import discovery
from egorec_ros.drivers.discovery import Found
from egorec_ros.errors import UserError
from egorec_ros.rig.model import Device, Rig

IPC = "ipc:"
CMD = "cmd:"
BY_ID = Path("/dev/v4l/by-id")
PARTS = ("slam", "tactile", "hand_pose")       # drivers (or their absence) of one stream of a device
UPSTREAM = {"d435": "realsense2_camera (ros2 launch egorec_ros record.launch.py includes it)"}


class PlaceError(UserError, ValueError):
    """A ``ID[.STREAM]=WHERE`` that names nothing in the rig or cannot be parsed."""


@dataclass(frozen=True)
class Start:
    """One driver to start: ``what`` (usb_glove, ble_glove, gripper, camera_ipc, uvc, s80, slam)
    for ``device`` of the rig, reading from ``where`` (a path, address, socket or command)."""

    device: str
    what: str
    where: str | tuple[str, ...]

    @property
    def name(self) -> str:
        """``ego.rgb`` for a camera, ``ego.slam`` for a SLAM process, the device id for the rest."""
        part = {"camera_ipc": "rgb", "uvc": "rgb"}.get(self.what, self.what if self.what in PARTS else None)
        return f"{self.device}.{part}" if part else self.device


@dataclass
class Plan:
    starts: list[Start] = field(default_factory=list)
    missing: list[tuple[str, str]] = field(default_factory=list)    # (device[.what], why and what to do)
    unused: list[Found] = field(default_factory=list)               # plugged in, not in the rig
    upstream: list[tuple[str, str]] = field(default_factory=list)   # (device, which node drives it)


def parse_places(entries: Iterable[str]) -> dict[str, str]:
    """``["ID[.STREAM]=WHERE", ...]`` -> {"ID" or "ID.STREAM": WHERE}."""
    out = {}
    for entry in filter(None, (e.strip() for e in entries)):
        name, sep, where = entry.partition("=")
        if not sep or not name.strip() or not where.strip():
            raise PlaceError(f"device place {entry!r}: expected ID=WHERE or ID.STREAM=WHERE "
                             "(e.g. left_glove=/dev/ttyACM0, cam=ipc:/run/cam.sock, ego.slam='/opt/slam/run')")
        out[name.strip()] = where.strip()
    return out


def plan(rig: Rig, places: Mapping[str, str], found: Sequence[Found], *, ble_adapter: bool = True) -> Plan:
    """The drivers for ``rig``: placed devices first, then found ones; the rest reported."""
    _check_names(rig, places)
    result = Plan()
    by_key = {f.key: f for f in found}
    for dev in rig.devices:
        for what, where, why in _device_starts(dev, places, by_key, ble_adapter):
            if where is None:
                result.missing.append((Start(dev.id, what, "").name, why))
            else:
                result.starts.append(Start(dev.id, what, where))
        if dev.kind in UPSTREAM:
            result.upstream.append((dev.id, UPSTREAM[dev.kind]))
    named = {d.key for d in rig.devices}
    result.unused = [f for f in found if f.key not in named]
    return result


def plan_here(rig: Rig, places: Iterable[str], *, discover: bool) -> Plan:
    """``plan`` with what is plugged into this machine (``discover``) and ``ID[.STREAM]=WHERE`` places."""
    return plan(rig, parse_places(places), plugged() if discover else [], ble_adapter=ble_adapter_present())


def nothing_to_drive(rig: Rig, planned: Plan) -> str | None:
    """Why a drivers process has nothing to do (every device is driven upstream), or None."""
    if planned.starts or planned.missing:
        return None
    return f"rig {rig.name} has no device egorec drives" + "".join(
        f"; {dev} is driven by {who}" for dev, who in planned.upstream)


def _device_starts(dev: Device, places: Mapping[str, str], by_key: Mapping[str, Found], ble_adapter: bool):
    """(what, where or None, why missing) for each driver ``dev`` needs."""
    roles = {s.role for s in dev.streams}
    placed = places.get(dev.id)
    if dev.kind in ("usb_glove", "gripper"):
        what = dev.kind
        where = placed or (by_key[dev.key].where if dev.key in by_key else None)
        yield what, where, (f"{dev.kind} {dev.key} is not plugged in (no serial port has USB serial "
                            f"{dev.key.partition(':')[2]}); plug it in or give its port: {dev.id}=/dev/ttyACM0")
        if dev.kind == "gripper" and roles & {"left_force", "right_force", "left_force_matrix", "right_force_matrix"}:
            yield "tactile", None, ("finger forces come from the tactile-camera process, whose output egorec "
                                    "cannot read yet (drivers.tactile is the interface); those streams stay silent")
        if dev.kind == "usb_glove" and "hand_pose" in roles:
            yield "hand_pose", None, "no driver publishes hand poses (the glove sends none); that stream stays silent"
    elif dev.kind == "ble_glove":
        address = placed or dev.key.removeprefix("ble:")
        yield "ble_glove", address if ble_adapter else None, "no Bluetooth adapter (/sys/class/bluetooth has no hci*)"
    elif dev.kind == "s80m":
        command = placed.removeprefix(CMD) if placed else None
        yield "s80", _command(command), f"S80 {dev.key}: give the SDK pipe command: {dev.id}=cmd:'/path/to/s80_pipe ...'"
    if "rgb" in roles and dev.kind in ("uvc", "gripper"):
        cam = places.get(f"{dev.id}.rgb") or (placed if dev.kind == "uvc" else None)
        if cam is None and dev.key in by_key:                 # a V4L2 camera found by its by-id name
            cam = by_key[dev.key].where
        if cam is not None and cam.startswith(IPC):
            yield "camera_ipc", cam[len(IPC):], ""
        else:
            missing = (f"camera {dev.key} is not plugged in (no {BY_ID / dev.key[4:]})" if dev.kind == "uvc"
                       else f"where is the camera of {dev.kind} {dev.key}?")
            yield "uvc", cam, (f"{missing}; give its V4L2 device, a video file or its capture-service socket: "
                               f"{dev.id}.rgb=/dev/video0 or {dev.id}.rgb=ipc:/run/cam.sock")
    if "slam" in roles:
        yield "slam", _command(places.get(f"{dev.id}.slam")), (f"give the SLAM process command: {dev.id}.slam="
                                                               "'/path/to/orbslam ...' (its stdout pose lines are read)")


def _command(text: str | None) -> tuple[str, ...] | None:
    return tuple(shlex.split(text)) if text else None


def _check_names(rig: Rig, places: Mapping[str, str]) -> None:
    devices = {d.id: d for d in rig.devices}
    for name in places:
        device, _, stream = name.partition(".")
        if device not in devices:
            raise PlaceError(f"device place {name}=…: rig {rig.name} has no device {device!r}; "
                             f"it has {', '.join(devices)}")
        if stream and stream not in {s.role for s in devices[device].streams}:
            raise PlaceError(f"device place {name}=…: device {device} has no {stream!r} stream")


def plugged(dev: Path = Path("/dev")) -> list[Found]:
    """Serial devices by VID:PID and V4L2 cameras on this machine (no BLE scan: a BLE glove
    is reached by the address in its key; no RealSense: realsense2_camera finds its own)."""
    from serial.tools import list_ports

    return discovery.serial_devices(list_ports.comports()) + discovery.v4l2_devices(dev)


def ble_adapter_present() -> bool:
    return any(Path("/sys/class/bluetooth").glob("hci*"))
