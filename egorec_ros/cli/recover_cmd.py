"""egorec recover TASK_DIR [--salvage] [--list]"""
from __future__ import annotations

import sys

from egorec_ros.layout.lock import TaskLock, TaskLockedError
from egorec_ros.recover.recover import NotATaskError, inspect_staged, recover


def add_parser(sub) -> None:
    p = sub.add_parser("recover", help="finish, salvage or set aside episodes left by an interrupted run")
    p.add_argument("task_dir")
    p.add_argument("--salvage", action="store_true",
                   help="keep the rows and frames written before the interruption as a complete episode "
                        "(default: set them aside under .set_aside/ and recycle the number)")
    p.add_argument("--list", action="store_true", help="only list what is staged")
    p.set_defaults(run=run)


def run(args) -> int:
    try:
        staged = inspect_staged(args.task_dir)
    except NotATaskError as exc:
        print(f"egorec recover: {exc}", file=sys.stderr)
        return 1
    if not staged:
        print(f"{args.task_dir}: nothing to recover")
        return 0
    try:
        TaskLock(args.task_dir).acquire().release()   # a live writer stages its current episode too
    except TaskLockedError as exc:
        print(f"egorec recover: {exc}; its staged episode is being recorded, not interrupted", file=sys.stderr)
        return 1
    for s in staged:
        print(s.describe())
    if args.list:
        return 0
    for action in recover(args.task_dir, salvage=args.salvage):
        print(f"episode {action.episode_index}: {action.action}: {action.detail}")
    return 0
