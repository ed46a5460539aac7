"""egorec export egosmith TASK_DIR --out DIR [--episodes …] [--depth] [--dataset-name NAME] [--jobs N]
egorec export egosmith --check DIR"""
from __future__ import annotations

import argparse
import json
import sys

EXIT_REFUSED = 2


def episodes_arg(text: str) -> list[int]:
    """'1,3,5-7' -> [1, 3, 5, 6, 7] (parquet episode_index, 1-based)."""
    from egorec_ros.layout.numbering import parse_episode_list
    try:
        return parse_episode_list(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_parser(formats) -> None:
    from egorec_ros.rig.frames import HAND_FRAMES
    p = formats.add_parser("egosmith", help="EgoSmith WebDataset shards (what the EgoSteer trainer reads)",
                           description="Write shard-%06d.tar of per-frame samples (head JPEG, 116-d lowdim, "
                                       "meta.json, optional depth), then check them as the EgoSteer trainer and EgoSmith's QA would.")
    p.add_argument("task_dir", nargs="?", help="a pooled_episodes_v1 task directory")
    p.add_argument("--out", help="directory for the shards (empty or new)")
    p.add_argument("--episodes", type=episodes_arg, help="episode_index values, e.g. 1,3,5-7 (default: all)")
    p.add_argument("--depth", action="store_true", help="add <key>.depth.npy, uint16 millimetres")
    p.add_argument("--dataset-name", help="key prefix and meta dataset_name (default: the task name in ASCII)")
    p.add_argument("--jobs", type=int, default=1, help="episodes exported in parallel (default 1)")
    p.add_argument("--ray", nargs="?", const="", metavar="ADDRESS",
                   help="export the episodes as Ray tasks on the cluster at ADDRESS (or a local Ray instance); "
                        "TASK_DIR and --out must be on storage every node mounts at the same path")
    p.add_argument("--hand-frame", choices=sorted(HAND_FRAMES),
                   help="frame of the hand keypoints when the task does not declare it")
    p.add_argument("--frames-per-shard", type=int, default=10_000, help="frame budget of a shard (default 10000)")
    p.add_argument("--pose-tolerance-ms", type=float, default=100.0,
                   help="a frame gets a head pose only between SLAM points this close to it (default 100)")
    p.add_argument("--check", metavar="DIR", help="only check the shards in DIR: the EgoSteer trainer's drops and "
                   "EgoSmith's QA rules")
    p.add_argument("--train-depth", action="store_true",
                   help="check as a trainer that loads depth (training.train_depth) would")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.set_defaults(run=run)


def run(args) -> int:
    from egorec_ros.cluster.errors import ClusterError
    from egorec_ros.dataset import DatasetError
    from egorec_ros.export.egosmith.errors import ExportRefused
    if args.check:
        return _check(args.check, args.json, args.train_depth)
    if not args.task_dir or not args.out:
        print("egorec export egosmith: give TASK_DIR and --out DIR (or --check DIR)", file=sys.stderr)
        return EXIT_REFUSED
    try:
        summary = _export(args)
    except (ExportRefused, DatasetError, ClusterError) as exc:
        print(f"egorec export egosmith: {exc}", file=sys.stderr)
        return EXIT_REFUSED
    summary["check"] = _checked(args.out, args.train_depth)
    _print(summary, args.json)
    return 0


def _export(args) -> dict:
    from tqdm import tqdm

    from egorec_ros.export.egosmith.run import export
    bar = tqdm(unit="frame", desc="export", file=sys.stderr, disable=None, leave=False)
    try:
        return export(args.task_dir, args.out, episodes=args.episodes, depth=args.depth, name=args.dataset_name,
                      jobs=args.jobs, hand_frame=args.hand_frame, frames_per_shard=args.frames_per_shard,
                      pose_tolerance_ns=int(args.pose_tolerance_ms * 1e6), ray=args.ray,
                      progress=bar.update, on_plan=lambda total: setattr(bar, "total", total))
    finally:
        bar.close()


def _checked(directory: str, load_depth: bool) -> dict:
    from tqdm import tqdm

    from egorec_ros.export.egosmith.rules import check_shards
    with tqdm(unit="sample", desc="check", file=sys.stderr, disable=None, leave=False) as bar:
        return check_shards(directory, load_depth=load_depth, progress=bar.update)


def _check(directory: str, as_json: bool, load_depth: bool) -> int:
    report = _checked(directory, load_depth)
    if not report["shards"]:
        print(f"egorec export egosmith --check: no shard-*.tar in {directory}", file=sys.stderr)
        return EXIT_REFUSED
    if as_json:
        print(json.dumps(report, ensure_ascii=False, indent=2))
    else:
        _print_check(report)
    bad = report["dropped"] or report["egosmith_qa"]["hard_filter_drop_episodes"] or report["problems"]
    return 1 if bad else 0


def _print(s: dict, as_json: bool) -> None:
    if as_json:
        print(json.dumps(s, ensure_ascii=False, indent=2))
        return
    frames = sum(e["frames"] for e in s["episodes"])
    print(f"{s['out']}: {frames} samples of {len(s['episodes'])} episode(s) in {len(s['shards'])} shard(s), "
          f"dataset {s['dataset_name']!r}, head camera {s['head_slot']}, hands in {s['hand_frame']}"
          f"{', with depth' if s['depth'] else ''}")
    for e in s["episodes"]:
        dropped = "; ".join(f"{n} {why}" for why, n in e["dropped"].items()) or "none"
        print(f"  episode {e['episode_index']:>5} (EgoSmith episode {e['egosmith_episode_index']}): {e['rows']:>6} rows -> "
              f"{e['frames']:>6} samples; not exported: {dropped}")
    _print_check(s["check"])


def _print_check(r: dict) -> None:
    print(f"EgoSteer trainer on {len(r['shards'])} shard(s): {r['dropped']} of {r['samples']} samples would be dropped"
          + "".join(f"; {n} {why}" for why, n in r["reasons"].items()))
    for ep, e in r["episodes"].items():
        if e["dropped"]:
            why = "; ".join(f"{n} {k}" for k, n in e["reasons"].items())
            print(f"  {ep}: {e['dropped']} of {e['frames']} dropped: {why}")
    qa = r["egosmith_qa"]
    print(f"EgoSmith QA (wds_sanity): {qa['hard_filter_drop_episodes']} of {qa['episodes']} episode(s) dropped by "
          "its hard filter")
    for name, hit in qa["rules"].items():
        print(f"  {name}: {hit['samples']} sample(s) in {hit['episodes']} episode(s)"
              f"{' (hard filter)' if hit['hard_filter'] else ''}")
    for p in r["problems"]:
        print(f"  problem: {p}")
