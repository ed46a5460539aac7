"""egorec recover TASK_DIR [--salvage] [--list]"""
from __future__ import annotations

import sys
from pathlib import Path


def add_parser(sub) -> None:
    p = sub.add_parser("recover", help="finish, salvage or set aside episodes left by an interrupted run")
    p.add_argument("task_dir")
    p.add_argument("--salvage", action="store_true",
                   help="keep the rows and frames written before the interruption as a complete episode "
                        "(default: set them aside under .set_aside/ and recycle the number)")
    p.add_argument("--list", action="store_true", help="only list what is staged or damaged")
    p.add_argument("--set-aside-damaged", action="store_true",
                   help="move committed episodes whose data file cannot be read (data, row, videos) to "
                        ".set_aside/; their numbers are not reused")
    p.set_defaults(run=run)


def run(args) -> int:
    from egorec_ros.layout.lock import TaskLock, TaskLockedError
    from egorec_ros.layout.paths import TaskPaths
    from egorec_ros.store.damaged import find_damaged, set_aside_damaged
    from egorec_ros.store.metadata import read_info
    from egorec_ros.store.recover import inspect_staged, recover

    staged = inspect_staged(args.task_dir)   # NotATaskError (a UserError) for a path that is no task
    root = Path(args.task_dir)
    damaged = find_damaged(TaskPaths.from_info(root, read_info(TaskPaths(root))))
    if not staged and not damaged:
        print(f"{args.task_dir}: nothing to recover")
        return 0
    try:
        TaskLock(args.task_dir).acquire().release()   # a live writer stages its current episode too
    except TaskLockedError as exc:
        print(f"egorec recover: {exc}; its staged episode is being recorded, not interrupted", file=sys.stderr)
        return 1
    for s in staged:
        print(s.describe())
    for d in damaged:
        print(d.describe(root))
    if args.list:
        return 0
    if staged:
        for action in recover(args.task_dir, salvage=args.salvage):
            print(f"episode {action.episode_index}: {action.action}: {action.detail}")
    if damaged and args.set_aside_damaged:
        for line in set_aside_damaged(root):
            print(line)
        return 0
    return 1 if damaged else 0
