"""The public bags recorded by other projects (``../shared/bags`` beside the repository, or
``$EGOREC_PUBLIC_BAGS``; see the README) and the rig files written for them (test/data).
A clone without them still runs every other test: the tests that need them skip, saying why."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "test" / "data"
BAGS = Path(os.environ.get("EGOREC_PUBLIC_BAGS", REPO.parent / "shared" / "bags"))

requires_public_bags = pytest.mark.skipif(
    not BAGS.is_dir(), reason=f"public test bags not found at {BAGS}: put them there (see the README, "
                              "'Public test bags') or set EGOREC_PUBLIC_BAGS to their folder")
