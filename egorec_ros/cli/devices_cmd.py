"""egorec devices [--rig RIG] [--suggest-rig FILE] [--no-ble] [--json]"""
from __future__ import annotations

import json
import sys
from dataclasses import asdict
from pathlib import Path


def add_parser(sub) -> None:
    p = sub.add_parser("devices", help="list the devices plugged in (serial, BLE gloves, V4L2, RealSense)")
    p.add_argument("--rig", help="say which rig device each one is, and which rig devices are missing")
    p.add_argument("--suggest-rig", metavar="FILE", help="write a rig for what is plugged in")
    p.add_argument("--no-ble", action="store_true", help="do not scan for BLE gloves")
    p.add_argument("--json", action="store_true", help="print the devices as JSON")
    p.set_defaults(run=run)


def run(args) -> int:
    from egorec_ros.drivers.discovery import discover

    found = discover(ble=not args.no_ble)
    rig_keys: dict[str, str] = {}
    if args.rig:
        from egorec_ros.rig.load import load_rig
        rig_keys = {d.key: d.id for d in load_rig(args.rig).devices}
    if args.json:
        print(json.dumps({"devices": [asdict(d) | ({"rig_device": rig_keys.get(d.key)} if args.rig else {})
                                      for d in found.devices], "skipped": found.skipped},
                         ensure_ascii=False, indent=2))
    else:
        for d in found.devices:
            in_rig = f"  rig: {rig_keys.get(d.key) or 'NOT IN THE RIG'}" if args.rig else ""
            notes = f"  ({'; '.join(d.notes)})" if d.notes else ""
            print(f"{d.kind:<10} {d.key:<44} {d.where:<36} {d.name}{in_rig}{notes}")
        if not found.devices:
            print("no known device found")
        for s in found.skipped:
            print(f"skipped {s}", file=sys.stderr)
    missing = sorted(set(rig_keys) - {d.key for d in found.devices})
    for key in missing:
        print(f"rig device {rig_keys[key]} ({key}) is not plugged in", file=sys.stderr)
    if args.suggest_rig:
        from egorec_ros.drivers.suggest_rig import suggest
        try:
            text, _ = suggest(found.devices, name=Path(args.suggest_rig).stem)
        except ValueError as exc:
            print(f"egorec devices: {exc}", file=sys.stderr)
            return 1
        Path(args.suggest_rig).write_text(text, encoding="utf-8")
        print(f"wrote {args.suggest_rig}", file=sys.stderr)
    return 1 if missing else 0
