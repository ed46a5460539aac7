"""One line per committed episode of a task (the recorder's ``~/list_episodes``, ``egorec ctl list``
and the console): number, rows, duration, instruction, QA verdict. Reads only the episode rows and
tasks.jsonl, never the data, so it stays fast for a task of hundreds of episodes."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from egorec_ros.dataset.task import Task
from egorec_ros.qa.verdict import from_row
from egorec_ros.schema.tasks import read_tasks


def episode_summaries(task_dir: str | Path) -> list[dict[str, Any]]:
    """Ascending episode_index; [] for a folder that holds no task yet."""
    root = Path(task_dir)
    if not (root / "meta" / "info.json").exists():
        return []
    task = Task(root)
    texts = {index: text for text, index in read_tasks(task.paths.tasks).items()}
    out = []
    for episode in task.episodes:
        row, _problem = episode.row_or_default()
        verdict, reasons = from_row(row.get("qa"))
        out.append({"episode_index": episode.index, "rows": int(row.get("length") or 0),
                    "duration_s": round(float(row.get("duration_sec") or 0.0), 3),
                    "created_at": float(row.get("created_at") or 0.0),
                    "instruction": texts.get(int(row.get("task_index") or 0), ""),
                    "verdict": verdict, "reasons": reasons})
    return out
