"""A starting rig for what is plugged in (``egorec devices --suggest-rig``): one device
per found device, in the naming of config/rigs/*.yaml, checked by the rig compiler.
Sizes a probe cannot know (camera resolutions) get the common defaults and a comment."""
from __future__ import annotations

import yaml

from egorec_ros.drivers import realsense
from egorec_ros.drivers.discovery import Found
from egorec_ros.messages.payloads.images import COMPRESSED_IMAGE
from egorec_ros.rig.compile import compile_rig

UVC_SIZE = (1280, 960)
GRIPPER_RGB_SIZE = (1280, 960)
REALSENSE_SIZES = {"rgb": (1280, 720), "depth": (848, 480)}
GLOVE_SEATS = ("left_glove", "right_glove")


def _video(topic: str, size: tuple[int, int], jpeg: bool = False) -> dict:
    """``jpeg``: our camera drivers (UVC MJPEG, camera IPC) publish the frames as CompressedImage."""
    return {"topic": topic, "width": size[0], "height": size[1], **({"msg_type": COMPRESSED_IMAGE} if jpeg else {})}


def suggest(found: list[Found], name: str = "plugged_in") -> tuple[str, list[str]]:
    """(rig YAML text, notes). Gloves beyond two are left out (a third glove is refused)."""
    devices: dict[str, dict] = {}
    notes: list[str] = []
    gloves = [f for f in found if f.kind in ("usb_glove", "ble_glove")]
    gloves.sort(key=lambda f: f.hand is None)           # gloves that name their hand choose first
    free = list(GLOVE_SEATS)
    for f in gloves:
        wanted = f"{f.hand}_glove" if f.hand else None
        seat = wanted if wanted in free else (free[0] if free else None)
        if seat is None:
            notes.append(f"{f.key} ({f.where}) left out: only two glove columns exist")
            continue
        free.remove(seat)
        devices[seat] = {"kind": f.kind, "sensor": seat, "key": f.key, "name": f.name or seat,
                         "streams": {"pressure": {"topic": f"/{seat}/frame"}}}
    for n, f in enumerate((f for f in found if f.kind == "gripper"), start=1):
        ns = f"/gripper_{n}"
        devices[f"gripper_{n}"] = {"kind": "gripper", "rig": n, "key": f.key, "name": f.name, "streams": {
            "rgb": _video(f"{ns}/rgb", GRIPPER_RGB_SIZE, jpeg=True), "left_force": {"topic": f"{ns}/left_force"},
            "right_force": {"topic": f"{ns}/right_force"}, "state": {"topic": f"{ns}/state"}}}
        notes.append(f"gripper_{n}: check the size of its camera ({ns}/rgb), {GRIPPER_RGB_SIZE[0]}x{GRIPPER_RGB_SIZE[1]} assumed")
    for n, f in enumerate(f for f in found if f.kind == "uvc"):
        devices[f"cam{n}"] = {"kind": "uvc", "key": f.key, "name": f.name,
                              "streams": {"rgb": _video(f"/uvc{n}/image_raw", UVC_SIZE, jpeg=True)}}
        notes.append(f"cam{n} ({f.where}): check its size, {UVC_SIZE[0]}x{UVC_SIZE[1]} assumed")
    for n, f in enumerate(f for f in found if f.kind == "d435"):
        camera = "camera" if n == 0 else f"camera_{n + 1}"
        t = realsense.topics(camera)
        devices[camera] = {"kind": "d435", "key": f.key, "name": f"{f.name}_{camera}", "streams": {
            "rgb": _video(t["rgb"], REALSENSE_SIZES["rgb"]), "depth": _video(t["depth"], REALSENSE_SIZES["depth"])}}
    if not devices:
        raise ValueError("no known device is plugged in: nothing to write a rig for")
    doc = {"name": name, "fps": 30, "devices": devices}
    compile_rig(doc, where="suggested rig")
    header = "# Rig suggested by `egorec devices --suggest-rig` from what was plugged in.\n" + \
        "".join(f"# TODO: {n}\n" for n in notes)
    return header + yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=120), notes
