"""Where a camera stream's rows were repeated, late or invalid: the episode row's ``frame_marks``
key (JSON), so a review timeline can show *where*, not only how many (drop_stats has the counts).

    {"max_ranges": 100,
     "streams": {"<stream id>": {"video": "<image key>",
                                 "repeated": {"rows": 60, "ranges": [[120, 179]]},
                                 "late": {"rows": 3, "ranges": [[40, 41], [97, 97]]}}}}

Ranges are inclusive row ranges, sorted and disjoint. ``rows`` is how many rows are marked.
``repeated``: rows that repeat the previous frame (drop_stats ``repeated``). ``late``: the rows
whose frame arrived after the row's deadline (the tick nearest the frame's stamp; drop_stats
``late`` counts frames: ``samples`` says how many when two late frames fell on one row).
``invalid``: the rows nearest the stamps of frames dropped as invalid (``unplaced``: those whose
stamp is outside the episode's rows). At most ``max_ranges`` ranges a stream and kind: beyond,
the ranges closest together are merged (``merged_from`` = how many there were; the merged ranges
then also cover unmarked rows between them, ``rows`` stays exact). A salvage cuts the ranges at
the rows it kept (``cut_at``). "{}" (an older episode): no marks recorded.
"""
from __future__ import annotations

import bisect
from typing import Any, Mapping

import numpy as np

MAX_RANGES = 100
KINDS = ("repeated", "late", "invalid")


class RowRuns:
    """The marked rows of one stream and kind as sorted, disjoint runs ``starts[i]..ends[i]``. Rows
    come almost in order (repeats exactly; a late frame is found a few rows after its own), so adding
    one is O(1) but for the rare out-of-order row. Two int lists, not a list of pairs: a 15 fps camera
    in a 30 fps rig marks every other row, and turning an hour of that (54 000 runs) into the capped
    entry at every checkpoint must stay cheap."""

    def __init__(self) -> None:
        self.starts: list[int] = []
        self.ends: list[int] = []
        self.rows = 0           # distinct rows marked
        self.samples = 0        # marks added (two late frames can fall on one row)
        self.unplaced = 0       # marks that fell on no row of the episode

    @property
    def runs(self) -> list[list[int]]:
        return [[a, b] for a, b in zip(self.starts, self.ends)]

    def add(self, row: int) -> None:
        self.samples += 1
        starts, ends = self.starts, self.ends
        if not ends or row > ends[-1] + 1:
            starts.append(row)
            ends.append(row)
        elif row == ends[-1] + 1:
            ends[-1] = row
        else:
            i = bisect.bisect_right(starts, row)        # first run starting after row
            if i and ends[i - 1] >= row:
                return                                  # already marked
            if i and ends[i - 1] == row - 1:
                ends[i - 1] = row
            else:
                starts.insert(i, row)
                ends.insert(i, row)
                i += 1
            if i < len(starts) and starts[i] == ends[i - 1] + 1:   # now touches the next run: merge
                ends[i - 1] = ends[i]
                del starts[i], ends[i]
        self.rows += 1

    def to_json(self, max_ranges: int = MAX_RANGES) -> dict[str, Any] | None:
        """This kind's entry (None when nothing is marked)."""
        if not self.starts and not self.unplaced:
            return None
        out: dict[str, Any] = {"rows": self.rows, "ranges": capped_arrays(self.starts, self.ends, max_ranges)}
        if len(self.starts) > max_ranges:
            out["merged_from"] = len(self.starts)
        if self.samples - self.unplaced != self.rows:
            out["samples"] = self.samples
        if self.unplaced:
            out["unplaced"] = self.unplaced
        return out


def capped(runs: list[list[int]], max_ranges: int = MAX_RANGES) -> list[list[int]]:
    """``runs`` with at most ``max_ranges`` ranges: the smallest gaps between neighbours are closed
    first, so every marked row stays inside a range and the episode's shape stays visible."""
    return capped_arrays([a for a, _ in runs], [b for _, b in runs], max_ranges)


def capped_arrays(starts: list[int], ends: list[int], max_ranges: int = MAX_RANGES) -> list[list[int]]:
    """``capped`` of the runs ``starts[i]..ends[i]``."""
    if len(starts) <= max_ranges:
        return [[a, b] for a, b in zip(starts, ends)]
    a, b = np.array(starts, dtype=np.int64), np.array(ends, dtype=np.int64)
    gaps = a[1:] - b[:-1]
    close = np.zeros(len(gaps), bool)
    close[np.argsort(gaps, kind="stable")[: len(starts) - max_ranges]] = True
    first = np.concatenate(([0], np.flatnonzero(~close) + 1))          # runs that begin a merged range
    last = np.concatenate((first[1:] - 1, [len(starts) - 1]))
    return [[int(x), int(y)] for x, y in zip(a[first], b[last])]


def stream_marks(video_key: str, runs: Mapping[str, RowRuns], max_ranges: int = MAX_RANGES) -> dict[str, Any]:
    """One stream's entry: its image key and every kind with marks."""
    out: dict[str, Any] = {"video": video_key}
    for kind in KINDS:
        entry = runs[kind].to_json(max_ranges) if kind in runs else None
        if entry:
            out[kind] = entry
    return out


def document(streams: Mapping[str, Mapping[str, Any]], max_ranges: int = MAX_RANGES) -> dict[str, Any]:
    """The row's ``frame_marks`` value from the stream entries."""
    return {"max_ranges": max_ranges, "streams": {sid: dict(e) for sid, e in sorted(streams.items())}}


def cut(doc: Mapping[str, Any], rows: int) -> dict[str, Any]:
    """``doc`` with every range cut at ``rows`` (a salvage keeps the first rows only)."""
    if not doc:
        return {}
    streams: dict[str, Any] = {}
    for sid, entry in (doc.get("streams") or {}).items():
        out = {"video": entry.get("video", "")}
        for kind in KINDS:
            e = entry.get(kind)
            if not isinstance(e, Mapping):
                continue
            ranges = [[a, min(b, rows - 1)] for a, b in e.get("ranges", []) if a < rows]
            if ranges == e.get("ranges"):
                out[kind] = dict(e)
                continue
            kept = sum(b - a + 1 for a, b in ranges)
            if ranges:
                out[kind] = {"rows": kept if "merged_from" not in e else min(kept, e.get("rows", kept)),
                             "ranges": ranges, "cut_at": rows}
        streams[sid] = out
    return {**doc, "streams": streams}


def shape_problems(doc: Any, rows: int) -> list[str]:
    """What is wrong with a ``frame_marks`` value for an episode of ``rows`` rows ([] when fine)."""
    if doc == {}:
        return []
    if not isinstance(doc, Mapping) or not isinstance(doc.get("streams"), Mapping):
        return ["is not {max_ranges, streams: {stream: {video, repeated|late|invalid: {rows, ranges}}}}"]
    limit = doc.get("max_ranges")
    if not isinstance(limit, int) or limit < 1:
        return [f"max_ranges is {limit!r}, expected a positive integer"]
    out = []
    for sid, entry in doc["streams"].items():
        if not isinstance(entry, Mapping):
            out.append(f"{sid}: is not an object")
            continue
        for kind in KINDS:
            e = entry.get(kind)
            if e is None:
                continue
            ranges = e.get("ranges") if isinstance(e, Mapping) else None
            if not isinstance(ranges, list) or not all(
                    isinstance(r, list) and len(r) == 2 and all(isinstance(v, int) for v in r) for r in ranges):
                out.append(f"{sid}.{kind}: ranges are not a list of [first_row, last_row]")
                continue
            if len(ranges) > limit:
                out.append(f"{sid}.{kind}: {len(ranges)} ranges, more than max_ranges {limit}")
            flat = [v for r in ranges for v in r]
            if any(a > b for a, b in ranges) or any(b >= a for b, a in zip(flat[1::2], flat[2::2])):
                out.append(f"{sid}.{kind}: ranges are not sorted and disjoint")
            elif ranges and (ranges[0][0] < 0 or ranges[-1][1] >= rows):
                out.append(f"{sid}.{kind}: ranges reach row {ranges[-1][1] if ranges[0][0] >= 0 else ranges[0][0]} "
                           f"outside the episode's {rows} rows")
            elif "merged_from" not in e and e.get("rows") != sum(b - a + 1 for a, b in ranges):
                out.append(f"{sid}.{kind}: rows {e.get('rows')} differs from the rows its ranges cover")
    return out
