"""What is plugged in (``egorec devices``): serial ports by VID:PID, BLE gloves by scan,
V4L2 cameras, RealSense cameras. Each probe takes its inputs as arguments (the port
list, the /dev folder, the scan function, the enumerate output) so it is tested without
hardware; ``discover()`` feeds them from the machine."""
from __future__ import annotations

import asyncio
import shutil
import subprocess
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from egorec_ros.drivers import realsense
from egorec_ros.drivers.ble_glove_protocol import hand_of, is_glove_name

USB_GLOVE_VID_PID = (0x0483, 0x5740)      # STM32 CDC
ESP32_S3_VID = 0x303A                     # Espressif: the UMI control board's native USB
BLE_SCAN_S = 4.0
REALSENSE_BY_ID = "RealSense"


@dataclass(frozen=True)
class Found:
    kind: str                      # rig device kind
    key: str                       # rig device key
    where: str                     # port, device node, BLE address, serial number
    name: str = ""
    hand: str | None = None
    notes: tuple[str, ...] = ()


@dataclass
class Discovery:
    devices: list[Found] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)     # probes that could not run, and why


def serial_devices(ports: Iterable) -> list[Found]:
    """pyserial ``list_ports`` entries -> USB gloves (0483:5740) and UMI boards (Espressif).
    The ESP32-S3's USB serial number is its MAC, the gripper's key."""
    out = []
    for p in ports:
        vid_pid = (p.vid, p.pid)
        serial = p.serial_number or ""
        if vid_pid == USB_GLOVE_VID_PID:
            out.append(Found("usb_glove", f"usbglove:{serial}", p.device, p.product or "USB glove",
                             notes=() if serial else ("no USB serial number: key cannot tell the gloves apart",)))
        elif p.vid == ESP32_S3_VID:
            out.append(Found("gripper", f"gripper:{serial}", p.device, p.product or "UMI gripper board"))
    return out


def v4l2_devices(dev: Path = Path("/dev")) -> list[Found]:
    """UVC cameras by their stable /dev/v4l/by-id names (capture nodes: ``-video-index0``);
    RealSense nodes are left to the RealSense probe."""
    by_id = dev / "v4l" / "by-id"
    if by_id.is_dir():
        return [Found("uvc", f"uvc:{link.name}", str(link), link.name.split("-video-index")[0])
                for link in sorted(by_id.glob("*-video-index0")) if REALSENSE_BY_ID not in link.name]
    nodes = sorted(dev.glob("video[0-9]*"), key=lambda p: int(p.name[5:]) if p.name[5:].isdigit() else -1)
    return [Found("uvc", f"uvc:{node.name}", str(node), node.name,
                  notes=("no /dev/v4l/by-id name: the key changes when cameras are replugged",)) for node in nodes]


def ble_gloves(advertised: Iterable) -> list[Found]:
    """Scan results (objects with ``name`` and ``address``) -> gloves by name (Matrix_L/R)."""
    return [Found("ble_glove", f"ble:{d.address}", d.address, d.name, hand=hand_of(d.name))
            for d in advertised if is_glove_name(d.name)]


def realsense_devices(enumerate_output: str) -> list[Found]:
    return [Found("d435", d.key, d.serial, f"{d.model}", notes=(f"firmware {d.firmware}",))
            for d in realsense.parse_enumerate(enumerate_output)]


def discover(*, ble: bool = True, dev: Path = Path("/dev"),
             scan: Callable[[], Iterable] | None = None) -> Discovery:
    result = Discovery()
    from serial.tools import list_ports
    result.devices += serial_devices(list_ports.comports())
    result.devices += v4l2_devices(dev)
    if shutil.which("rs-enumerate-devices"):
        out = subprocess.run(["rs-enumerate-devices", "-s"], capture_output=True, text=True, timeout=20).stdout
        result.devices += realsense_devices(out)
    else:
        result.skipped.append("RealSense: rs-enumerate-devices (librealsense tools) is not installed")
    if not ble:
        result.skipped.append("BLE: not scanned (--no-ble)")
    elif scan is None and not any(Path("/sys/class/bluetooth").glob("hci*")):
        result.skipped.append("BLE: no Bluetooth adapter (/sys/class/bluetooth has no hci*)")
    else:
        try:
            result.devices += ble_gloves((scan or _bleak_scan)())
        except Exception as exc:   # noqa: BLE001 - BlueZ missing, adapter off, permissions...
            result.skipped.append(f"BLE: scan failed ({type(exc).__name__}: {exc})")
    return result


def _bleak_scan() -> list:
    from bleak import BleakScanner
    return asyncio.run(BleakScanner.discover(timeout=BLE_SCAN_S))
