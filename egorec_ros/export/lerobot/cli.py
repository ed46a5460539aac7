"""egorec export lerobot TASK_DIR --out DIR [--repo-id NAME] [--cameras ...] [--state ...]
[--action ...] [--video copy|reencode] [--jobs N | --ray [ADDRESS]]"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path


def _names(text: str | None) -> list[str] | None:
    return None if text is None else [n for n in text.split(",") if n]


def add_parser(sub) -> None:
    p = sub.add_parser("lerobot", help="a LeRobot v3.0 dataset that lerobot.datasets.LeRobotDataset opens")
    p.add_argument("task_dir")
    p.add_argument("--out", required=True, help="new dataset folder (must not exist or be empty)")
    p.add_argument("--repo-id", help="LeRobot repo id recorded in the summary (default egorec/<out name>)")
    p.add_argument("--cameras", help="comma-separated video keys (default: every RGB camera and depth stream; "
                                     "depth becomes LeRobot 0.6's depth feature, which 0.4.4 reads as RGB)")
    p.add_argument("--state", help="comma-separated fixed-length observation columns concatenated into "
                                   "observation.state (default: all of them, in the task's feature order)")
    p.add_argument("--state-layout", choices=("concat", "separate"), default="concat",
                   help="separate: each state column is its own feature")
    p.add_argument("--action", help="comma-separated columns concatenated into action (default: `action` "
                                    "when the task recorded one)")
    p.add_argument("--extras", choices=("drop", "flatten"), default="drop",
                   help="flatten: trajectories and IMU lists become <column>_last (newest value, held)")
    p.add_argument("--video", choices=("copy", "reencode"), default="copy",
                   help="copy our MP4s (no re-encode) or re-encode RGB with LeRobot's defaults (AV1, g=2, crf=30); "
                        "depth is always our 12-bit code video, which is LeRobot's depth encoding")
    p.add_argument("--jobs", type=int, default=1, help="episodes exported in parallel by local processes (default 1)")
    p.add_argument("--ray", nargs="?", const="", metavar="ADDRESS",
                   help="export the episodes as Ray tasks on the cluster at ADDRESS (or a local Ray instance); "
                        "TASK_DIR and the folder of --out must be on storage every node mounts at the same path. "
                        "With --jobs or --ray a stopped export keeps its finished episodes: run it again to go on")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.set_defaults(run=run)


def run(args) -> int:
    os.environ.setdefault("SVT_LOG", "1")   # SVT-AV1 (--video reencode): errors only, not its banner per file
    from egorec_ros.errors import UserError
    from egorec_ros.export.lerobot import parts
    from egorec_ros.export.lerobot.export import export_lerobot, partial_dir

    def progress(done: int, total: int) -> None:
        if sys.stderr.isatty():
            print(f"\rexported {done}/{total} episodes", end="", file=sys.stderr, flush=True)

    try:
        s = export_lerobot(args.task_dir, args.out, repo_id=args.repo_id, cameras=_names(args.cameras),
                           state=_names(args.state), action=_names(args.action), state_layout=args.state_layout,
                           extras=args.extras, video=args.video, progress=progress, jobs=args.jobs, ray=args.ray)
    except (UserError, FileExistsError) as exc:   # DatasetError, MappingError, VideoExportError, ClusterError…
        print(f"egorec export lerobot: {exc}", file=sys.stderr)
        _kept(parts.finished(partial_dir(Path(args.out))), partial_dir(Path(args.out)))
        return 1
    except KeyboardInterrupt:
        _kept(parts.finished(partial_dir(Path(args.out))), partial_dir(Path(args.out)))
        raise
    if sys.stderr.isatty():
        print(file=sys.stderr)
    if args.json:
        print(json.dumps(s.to_json(), ensure_ascii=False, indent=2))
        return 0
    m = s.mapping
    print(f"{s.out}: LeRobot v3.0 dataset, {s.episodes} episodes, {s.frames} frames, video {s.video}, "
          f"{s.seconds:.1f} s  (open with LeRobotDataset({s.repo_id!r}, root={str(s.out)!r}))")
    for key, feature in m["cameras"].items():
        print(f"  {feature:<40} <- {'depth' if key in m['depth'] else 'video'} {key}")
    for feature, cols in m["features"].items():
        print(f"  {feature:<40} <- {', '.join(cols)}")
    for col, eps in s.zero_filled.items():
        print(f"  zeros where absent: {col} (our episodes {eps})")
    print(f"  left out ({len(m['left_out'])}): " + "; ".join(f"{k}: {v}" for k, v in m["left_out"].items()))
    if s.reused:
        print(f"  {s.reused} episode(s) kept from the stopped run before")
    if s.nodes:
        print("  episodes per node: " + ", ".join(f"{n} {c}" for n, c in sorted(s.nodes.items())))
    return 0


def _kept(n: int, where: Path) -> None:
    if n:
        print(f"egorec export lerobot: {n} finished episode(s) kept in {where}; the same command goes on from them",
              file=sys.stderr)
