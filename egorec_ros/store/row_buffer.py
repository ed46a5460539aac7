"""Rows of an episode collected column by column until a row group is flushed.

Appending a row is a handful of list appends (no conversion on the caller's
thread); ``seen`` records which sparse columns have had a real sample (§5.5).
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np

from egorec_ros.codecs import force_matrix as fm
from egorec_ros.schema.columns import ColumnSpec, Layout


class RowBuffer:
    def __init__(self, columns: Sequence[ColumnSpec]) -> None:
        self.columns = tuple(columns)
        self.values: dict[str, list[Any]] = {c.name: [] for c in self.columns}
        self.seen: set[str] = set()
        self.rows = 0
        self.nbytes = 0

    def append(self, row: Mapping[str, Any]) -> None:
        for name, v in row.items():
            if v is not None:
                self.seen.add(name)
                if isinstance(v, np.ndarray):
                    self.nbytes += v.nbytes
        for name, vals in self.values.items():
            vals.append(row.get(name))
        self.rows += 1


class RowError(ValueError):
    """A row value that does not fit its declared column."""


def check_row(row: Mapping[str, Any], specs: Mapping[str, ColumnSpec]) -> None:
    """Cheap shape checks at append time, so a bad value fails on the caller's thread
    (where the caller can count it) and never on the flush thread (where it would
    cost the episode)."""
    for name, v in row.items():
        spec = specs.get(name)
        if spec is None:
            raise RowError(f"column {name!r} is not declared for this episode; declare it in the rig")
        if v is None:
            continue
        if spec.layout is Layout.VECTOR and np.size(v) != spec.width:
            raise RowError(f"column {name!r} takes {spec.width} values per row, got {np.size(v)}")
        if spec.layout is Layout.MATRIX and np.shape(v) != fm.SHAPE:
            raise RowError(f"column {name!r} takes a {fm.SHAPE} matrix, got shape {np.shape(v)}")
        if spec.layout is Layout.NESTED and np.size(v) % spec.width:
            raise RowError(f"column {name!r} takes samples of {spec.width} values, got {np.size(v)} values")
        if spec.layout is Layout.LIST and spec.width:   # trajectory points, and their stamps in lockstep
            if np.size(v) % spec.width:
                raise RowError(f"column {name!r} takes points of {spec.width} values, got {np.size(v)} values")
            stamps = row.get(name + "_ns")
            if stamps is not None and np.size(stamps) * spec.width != np.size(v):
                raise RowError(f"column {name}_ns holds {np.size(stamps)} stamps for {np.size(v) // spec.width} "
                               f"points of {name!r}; stamps and points go in lockstep (§8.1.3)")
