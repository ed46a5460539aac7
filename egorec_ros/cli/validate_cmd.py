"""egorec validate TASK_DIR [--json] [--quick]"""
from __future__ import annotations

import json
import sys


def add_parser(sub) -> None:
    p = sub.add_parser("validate", help="check a task directory against the spec (exit 0 = clean)")
    p.add_argument("task_dir")
    p.add_argument("--json", action="store_true", help="print findings as JSON")
    p.add_argument("--quick", action="store_true", help="count video packets instead of decoding every frame")
    p.set_defaults(run=run)


def run(args) -> int:
    from egorec_ros.validate.validate import validate_task

    def progress(done: int, total: int) -> None:
        if not args.json and sys.stderr.isatty():
            print(f"\rchecked {done}/{total} episodes", end="", file=sys.stderr, flush=True)

    findings = validate_task(args.task_dir, decode=not args.quick, progress=progress)
    if not args.json and sys.stderr.isatty():
        print(file=sys.stderr)
    if args.json:
        print(json.dumps({"task_dir": args.task_dir, "clean": not findings,
                          "findings": [f.to_json() for f in findings]}, ensure_ascii=False, indent=2))
    elif findings:
        for f in findings:
            print(f)
        print(f"{len(findings)} finding(s) in {args.task_dir}")
    else:
        print(f"{args.task_dir}: clean")
    return 1 if findings else 0
