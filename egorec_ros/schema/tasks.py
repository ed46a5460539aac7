"""meta/tasks.jsonl: one compact JSON object per line, {"task_index": i, "task": text}."""
from __future__ import annotations

import json
from pathlib import Path

from egorec_ros.layout import atomic


def read_tasks(path: Path) -> dict[str, int]:
    if not path.exists():
        return {}
    out: dict[str, int] = {}
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            doc = json.loads(line)
            out[str(doc["task"])] = int(doc["task_index"])
        except (ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"{path}:{lineno}: not a {{task_index, task}} object ({exc})") from exc
    return out


def task_index(path: Path, task: str) -> int:
    """Index of ``task``: the existing one, or the next free one (not yet written)."""
    tasks = read_tasks(path)
    return tasks.get(task, max(tasks.values(), default=-1) + 1)


def ensure_task(path: Path, task: str) -> int:
    tasks = read_tasks(path)
    if task in tasks:
        return tasks[task]
    tasks[task] = max(tasks.values(), default=-1) + 1
    lines = [json.dumps({"task_index": i, "task": t}, ensure_ascii=False, separators=(",", ":"))
             for t, i in sorted(tasks.items(), key=lambda kv: kv[1])]
    atomic.write_bytes(path, ("\n".join(lines) + "\n").encode("utf-8"))
    return tasks[task]
