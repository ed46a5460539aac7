"""`egorec validate`: every rule of §8.1/§8.2 that can be checked on disk, plus ours
(frames == rows, frame_index without holes, episode_index = k + 1, lockstep lists)."""
from __future__ import annotations

from pathlib import Path

from egorec_ros.layout import atomic
from egorec_ros.layout.paths import SET_ASIDE, TaskPaths
from egorec_ros.schema.info import FORMAT
from egorec_ros.validate.episode_rules import check_episode
from egorec_ros.validate.findings import Finding, Findings
from egorec_ros.validate.task_rules import INFO, LAYOUT_KEYS, check_info, check_side_files, check_strays


def validate_task(task_dir: str | Path, *, decode: bool = True, progress=None) -> list[Finding]:
    """All findings for a task dir (empty = clean). ``decode=False`` counts video packets
    instead of decoding frames (fast, but misses undecodable frames)."""
    root = Path(task_dir)
    out = Findings()
    try:
        info = atomic.read_json(root / INFO)
    except FileNotFoundError:
        out.add(INFO, "", "§1.1", _missing_info(root))
        return out.items
    except ValueError as exc:
        out.add(INFO, "", "§6", f"not valid JSON: {exc}")
        return out.items
    if not isinstance(info, dict) or info.get("format") != FORMAT:
        out.add(INFO, "format", "§8.2.1", f"is {info.get('format') if isinstance(info, dict) else None!r}, "
                f"expected {FORMAT!r}; refusing to read further")
        return out.items
    check_info(info, out)
    if any(f.file == INFO and f.where in LAYOUT_KEYS for f in out):
        return out.items   # without a valid layout no file can be located
    paths = TaskPaths.from_info(root, info)
    episodes = paths.list_episodes()
    indices = {n.index for n in episodes}
    total = info.get("total_episodes")
    if episodes and isinstance(total, int) and total < max(indices):
        out.add(INFO, "total_episodes", "§6.1", f"is {info.get('total_episodes')} but episode {max(indices)} exists")
    tasks = check_side_files(paths, indices, out, info.get("features") or {})
    owned: set[Path] = set()
    for i, n in enumerate(episodes):
        owned |= check_episode(paths, n, info, tasks, decode, out)
        if progress:
            progress(i + 1, len(episodes))
    check_strays(paths, owned, out)
    return out.items


def _missing_info(root: Path) -> str:
    """Why there is no info.json: no folder, a run killed during its first episode, or not a task."""
    if not root.is_dir():
        return f"missing: {root} does not exist"
    staged = TaskPaths(root).list_staged()
    if staged:
        return (f"missing: no episode was committed yet, but {len(staged)} unfinished episode(s) of an interrupted "
                f"run are staged ({', '.join(p.name for _, p in staged)}); run `egorec recover {root}` to set them "
                f"aside, or `egorec recover --salvage {root}` to keep the rows recorded before the interruption")
    if (root / SET_ASIDE).is_dir():
        return (f"missing: no episode was committed yet; {SET_ASIDE}/ holds the data of interrupted episodes "
                "that `egorec recover` set aside")
    return "missing: not a task directory"
