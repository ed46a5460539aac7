"""egorec upload TASK_DIR [--episodes 1,3-5 | --all-new] --server URL [--project NAME|ID] [--user U]
[--delete-after] [--precompress] [--status]: send episodes to the collection server through the
recordings root's persistent queue (ROOT/.egorec-upload.sqlite), exactly once each."""
from __future__ import annotations

import sys
from pathlib import Path


def add_parser(sub) -> None:
    p = sub.add_parser("upload", help="send episodes to the collection server (one zip each, a persistent queue, "
                                      "exactly once)")
    p.add_argument("task_dir", help="the task folder (its parent, the recordings root, holds the queue)")
    which = p.add_mutually_exclusive_group()
    which.add_argument("--episodes", help="episode numbers (1-based) to send, e.g. 1,3-5")
    which.add_argument("--all-new", action="store_true",
                       help="every committed episode not queued for this server yet (the default)")
    p.add_argument("--server", help="the server's address, e.g. https://collect.example.org")
    p.add_argument("--project", default="", help="project name or id (default: the server decides from the task)")
    p.add_argument("--user", help="log in as this user; the password comes from $EGOREC_UPLOAD_PASSWORD or the "
                                  "credentials file (JSON user/password, mode 0600)")
    p.add_argument("--credentials", type=Path, help="credentials file (default: $EGOREC_UPLOAD_CREDENTIALS or "
                                                     "~/.config/egorec/upload_credentials.json)")
    p.add_argument("--insecure", action="store_true", help="do not verify the server's TLS certificate")
    p.add_argument("--delete-after", action="store_true", help="delete each episode locally once the server has it")
    p.add_argument("--precompress", action="store_true",
                   help="re-encode RGB videos to HEVC (CRF 30) in the zip; HEVC and depth videos go as they are")
    p.add_argument("--limit-mbps", type=float, default=0.0, help="bandwidth limit in megabit/s (default: none)")
    p.add_argument("--attempts", type=int, default=8, help="attempts per episode before it is marked failed")
    p.add_argument("--timeout", type=float, default=120.0,
                   help="seconds to wait for the server's answer after sending an episode")
    p.add_argument("--status", action="store_true", help="only show the queue (per episode) and exit")
    p.set_defaults(run=run)


def run(args) -> int:
    from egorec_ros.upload.errors import UploadError
    from egorec_ros.upload.queue import UploadQueue

    task_dir = Path(args.task_dir).resolve()
    if args.status:
        return _status(task_dir)
    if not args.server:
        raise UploadError("give --server URL (the collection server), or --status to see the queue")
    if not (task_dir / "meta" / "info.json").is_file():
        raise UploadError(f"{task_dir} is not a task folder (no meta/info.json); give the folder that holds "
                          "data/, videos/ and meta/")
    from egorec_ros.thread_priority import idle_io_for_thread, lower_this_thread
    from egorec_ros.upload.background import UPLOAD_NICENESS
    from egorec_ros.upload.credentials import load_credentials
    from egorec_ros.upload.selection import new_episodes, parse_episodes
    from egorec_ros.upload.slice import task_paths
    from egorec_ros.upload.uploader import Uploader, UploadSettings, sweep_slices

    lower_this_thread(UPLOAD_NICENESS)      # below a recorder running on this machine (and its threads)
    why = idle_io_for_thread()              # and its disk writes
    if why:
        _say(f"note: I/O priority not lowered ({why}); a recorder on this machine shares the disk alike")
    settings = UploadSettings(server=args.server.rstrip("/"), project=args.project, verify_tls=not args.insecure,
                              limit_bytes_s=args.limit_mbps * 1e6 / 8, max_attempts=max(1, args.attempts),
                              read_timeout_s=args.timeout, precompress=args.precompress,
                              delete_after=args.delete_after)
    root, task = task_dir.parent, task_dir.name
    committed = [n.index for n in task_paths(task_dir).list_episodes()]
    with UploadQueue(root) as queue:
        queued = [e.episode_index for e in queue.entries(task=task, server=settings.server)]
        failed_or_waiting = [e.episode_index for e in queue.entries(task=task, server=settings.server)
                             if e.state in ("pending", "uploading", "failed")]
        sweep_slices(queue)
    wanted = parse_episodes(args.episodes) if args.episodes else sorted(
        set(new_episodes(committed, queued)) | set(failed_or_waiting))
    missing = sorted(set(wanted) - set(committed) - set(failed_or_waiting))
    if missing:
        raise UploadError(f"{task_dir} has no episode {', '.join(map(str, missing))} (committed: "
                          f"{_ranges(committed) or 'none'}); check --episodes")
    uploader = Uploader(root, settings, load_credentials(args.user, args.credentials), log=_say,
                        progress=_bar_factory())
    try:
        ids = {uploader.enqueue(task, n).id for n in wanted}
        if not ids:
            print(f"nothing to upload from {task_dir}: every committed episode is queued or sent "
                  "(`egorec upload --status`)", file=sys.stderr)
            return 0
        uploader.connect()
        entries = uploader.run(ids)
    finally:
        uploader.close()
    done = [e for e in entries if e.state == "done"]
    bad = [e for e in entries if e.state not in ("done", "gone")]
    print(f"{len(done)} of {len(entries)} episode(s) of {task} on {settings.server}"
          + (f"; not sent: {', '.join(f'{e.episode_index} ({e.state}: {e.last_error})' for e in bad)}" if bad else ""),
          file=sys.stderr)
    return 1 if bad else 0


def _status(task_dir: Path) -> int:
    from egorec_ros.upload.background import queue_status
    from egorec_ros.upload.queue import QUEUE_FILE, UploadQueue

    root = task_dir.parent
    if not (root / QUEUE_FILE).exists():
        print(f"no upload queue in {root} yet")
        return 0
    with UploadQueue(root) as queue:
        entries = queue.entries(task=task_dir.name)
    print(f"queue {root / QUEUE_FILE}: {queue_status(root).text}")
    for e in entries:
        size = f"{e.size / 1e6:.1f} MB" if e.size else "-"
        extra = f"session {e.session_id}" if e.session_id else e.last_error
        print(f"  {e.task} episode {e.episode_index:>5}  {e.state:<9} attempts {e.attempts}  {size:>10}  "
              f"{e.server}  {extra}")
    return 0


def _say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _bar_factory():
    """A tqdm bar per episode: bytes, rate, ETA."""
    from tqdm import tqdm

    def make(entry, total: int):
        bar = tqdm(total=total, unit="B", unit_scale=True, unit_divisor=1024, file=sys.stderr, leave=False,
                   desc=f"episode {entry.episode_index}", mininterval=0.5)

        def step(n: int) -> None:
            bar.update(n)
            if bar.n >= total:
                bar.close()
        return step
    return make


def _ranges(numbers: list[int]) -> str:
    out: list[str] = []
    run: list[int] = []
    for n in sorted(numbers):
        if run and n == run[-1] + 1:
            run.append(n)
            continue
        if run:
            out.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
        run = [n]
    if run:
        out.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
    return ",".join(out)
