"""egorec inspect TASK_DIR [--json]"""
from __future__ import annotations

import json
import sys


def summary(task_dir: str) -> dict:
    from egorec_ros.assembly.counts import problems
    from egorec_ros.dataset import open_task

    task = open_task(task_dir)
    episodes = []
    for ep in task:
        drops = ep.row["drop_stats"].get("streams", {})
        episodes.append({
            "episode_index": ep.index, "rows": len(ep), "duration_sec": ep.row["duration_sec"],
            "videos": ep.video_keys, "columns": len(ep.columns),
            "dropped": {sid: p for sid, c in drops.items() if (p := problems(c))},
        })
    info = task.info
    return {"task_dir": str(task.root), "task_name": info.get("task_name"), "fps": info.get("fps"),
            "total_episodes": info.get("total_episodes"), "episodes": episodes,
            "features": len(info.get("features", {})), "cameras": list(info.get("cameras", {})),
            "video_extensions": info.get("video_extensions", {})}


def add_parser(sub) -> None:
    p = sub.add_parser("inspect", help="summarise a task directory")
    p.add_argument("task_dir")
    p.add_argument("--json", action="store_true")
    p.add_argument("--html", metavar="FILE", help="also write a report page: first frames, drops per stream, "
                                                 "trajectories and forces of every episode")
    p.set_defaults(run=run)


def run(args) -> int:
    from egorec_ros.dataset import DatasetError
    from egorec_ros.report.html import write_report

    try:
        s = summary(args.task_dir)
    except DatasetError as exc:
        print(f"egorec inspect: {exc}", file=sys.stderr)
        return 1
    if args.html:
        print(f"report: {write_report(args.task_dir, args.html)}", file=sys.stderr)
    if args.json:
        print(json.dumps(s, ensure_ascii=False, indent=2))
        return 0
    print(f"{s['task_dir']}: task {s['task_name']!r}, {len(s['episodes'])} episodes "
          f"(numbers used: {s['total_episodes']}), {s['fps']} fps, {s['features']} features")
    print(f"  videos: {', '.join(f'{k}.{e}' for k, e in s['video_extensions'].items()) or 'none'}")
    for e in s["episodes"]:
        drops = "; ".join(f"{sid} {d}" for sid, d in e["dropped"].items()) or "no drops"
        print(f"  episode {e['episode_index']:>5}: {e['rows']:>6} rows {e['duration_sec']:8.2f} s  "
              f"{len(e['videos'])} videos  {e['columns']} columns  {drops}")
    return 0
