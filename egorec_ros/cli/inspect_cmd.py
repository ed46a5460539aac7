"""egorec inspect TASK_DIR [--json] [--html FILE]

A damaged file (unreadable data parquet, torn episode row, undecodable video) is reported
with its path and the error, and the rest of the task is still summarised; the exit code
is then 1."""
from __future__ import annotations

import json
import sys


def summary(task_dir: str) -> dict:
    from egorec_ros.assembly.counts import problems
    from egorec_ros.dataset import open_task
    from egorec_ros.qa.verdict import from_row
    from egorec_ros.report.damage import damage, row_or_default

    task = open_task(task_dir)
    episodes = []
    for ep in task:
        entry: dict = {"episode_index": ep.index}
        try:
            entry |= {"rows": len(ep), "columns": len(ep.columns)}
        except Exception as exc:   # whatever broke the file, report it and go on with the others
            entry["damaged"] = [damage(task.root, ep.data_path, exc)]
            episodes.append(entry)
            continue
        row, row_damage = row_or_default(ep)
        drops = row["drop_stats"].get("streams", {})
        duration = entry["rows"] / task.fps if row_damage else row["duration_sec"]
        verdict, reasons = from_row(row.get("qa"))
        entry |= {"duration_sec": duration, "videos": ep.video_keys,
                  "dropped": {sid: p for sid, c in drops.items() if (p := problems(c))},
                  "qa": {"verdict": verdict, "reasons": reasons}}
        if row_damage:
            entry["damaged"] = [row_damage]
        episodes.append(entry)
    info = task.info
    return {"task_dir": str(task.root), "task_name": info.get("task_name"), "fps": info.get("fps"),
            "total_episodes": info.get("total_episodes"), "episodes": episodes,
            "features": len(info.get("features", {})), "cameras": list(info.get("cameras", {})),
            "video_extensions": info.get("video_extensions", {}),
            "damaged": sum(len(e.get("damaged", [])) for e in episodes)}


def drops_text(dropped: dict[str, dict[str, int]]) -> str:
    """``{"cam0.rgb": {"repeated": 3}}`` -> ``cam0.rgb: 3 repeated``: one line a person reads."""
    return "; ".join(f"{sid}: " + ", ".join(f"{n} {kind}" for kind, n in counts.items())
                     for sid, counts in dropped.items()) or "no drops"


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
    code = 1 if s["damaged"] else 0
    if args.json:
        print(json.dumps(s, ensure_ascii=False, indent=2))
        return code
    print(f"{s['task_dir']}: task {s['task_name']!r}, {len(s['episodes'])} episodes "
          f"(numbers used: {s['total_episodes']}), {s['fps']} fps, {s['features']} features")
    print(f"  videos: {', '.join(f'{k}.{e}' for k, e in s['video_extensions'].items()) or 'none'}")
    for e in s["episodes"]:
        if "rows" not in e:
            print(f"  episode {e['episode_index']:>5}: DAMAGED {e['damaged'][0]}")
            continue
        drops = drops_text(e["dropped"])
        print(f"  episode {e['episode_index']:>5}: {e['rows']:>6} rows {e['duration_sec']:8.2f} s  "
              f"{len(e['videos'])} videos  {e['columns']} columns  QA {e['qa']['verdict'] or '-'}  {drops}")
        for reason in e["qa"]["reasons"]:
            print(f"                 {reason}")
        for d in e.get("damaged", []):
            print(f"                 DAMAGED {d}")
    if s["damaged"]:
        print(f"{s['damaged']} damaged file(s): `egorec validate {args.task_dir}` checks every file, "
              f"`egorec recover {args.task_dir}` says what can be done")
    return code
