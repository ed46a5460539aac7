"""egorec delete TASK_DIR EPISODE[,EPISODE...] [--yes]: remove committed episodes (the operator's
redo). Their files go; their numbers are never reused and total_episodes stays (§1.3); stats.json
is rebuilt from the episodes left. A task a recorder is writing is refused here: ask the recorder
(`egorec ctl delete N`), which deletes safely beside the episode it is recording."""
from __future__ import annotations

import sys


def add_parser(sub) -> None:
    p = sub.add_parser("delete", help="delete committed episodes of a task (their numbers are never reused)")
    p.add_argument("task_dir")
    p.add_argument("episodes", metavar="EPISODE[,EPISODE...]",
                   help="episode_index values (1-based, as `egorec inspect` lists them), comma-separated; "
                        "A-B for a range")
    p.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    p.set_defaults(run=run)


def run(args) -> int:
    from egorec_ros.dataset import DatasetError, open_task
    from egorec_ros.layout.lock import TaskLockedError
    from egorec_ros.layout.numbering import parse_episode_list
    from egorec_ros.store import TaskWriter
    from egorec_ros.store.delete import episode_files

    try:
        wanted = parse_episode_list(args.episodes)
        task = open_task(args.task_dir)
    except (ValueError, DatasetError) as exc:
        print(f"egorec delete: {exc}", file=sys.stderr)
        return 1
    have = {e.index for e in task.episodes}
    missing = [n for n in wanted if n not in have]
    if missing:
        print(f"egorec delete: {args.task_dir} has no episode {', '.join(map(str, missing))} (it has "
              f"{_ranges(sorted(have)) or 'none'}); nothing deleted", file=sys.stderr)
        return 1
    files = {n: episode_files(task.paths, task.paths.number(n)) for n in wanted}
    if not args.yes and not _confirmed(args.task_dir, files):
        print("nothing deleted")
        return 1
    try:
        writer = TaskWriter(args.task_dir)
    except TaskLockedError as exc:
        print(f"egorec delete: {exc}. A running recorder deletes its own task's episodes: "
              f"`egorec ctl delete N` (or its ~/delete service)", file=sys.stderr)
        return 1
    with writer:
        for n in wanted:
            removed = writer.delete(n)
            print(f"episode {n}: deleted ({len(removed)} files); its number is not reused")
    return 0


def _confirmed(task_dir: str, files: dict) -> bool:
    if not sys.stdin.isatty():
        print(f"egorec delete: would delete {sum(map(len, files.values()))} files of episode(s) "
              f"{', '.join(map(str, files))} in {task_dir}; pass --yes to confirm (stdin is not a terminal)",
              file=sys.stderr)
        return False
    answer = input(f"delete episode(s) {', '.join(map(str, files))} of {task_dir} "
                   f"({sum(map(len, files.values()))} files, numbers not reused)? [y/N] ")
    return answer.strip().lower() in ("y", "yes")


def _ranges(numbers: list[int]) -> str:
    """[1, 2, 3, 7] -> "1-3, 7"."""
    out, start = [], None
    for i, n in enumerate(numbers):
        start = n if start is None else start
        if i + 1 == len(numbers) or numbers[i + 1] != n + 1:
            out.append(f"{start}-{n}" if n > start else str(n))
            start = None
    return ", ".join(out)
