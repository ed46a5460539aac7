"""A clone without ../shared/bags runs the suite: the public-bag tests skip and say where
the bags are expected (issue 10 item 22), instead of stopping collection."""
from __future__ import annotations

import os
import subprocess
import sys

from helpers.bags import REPO

FILES = ["test/integration/test_converter_public_bags.py", "test/integration/test_convert_public_bags.py"]


def test_without_the_public_bags_their_tests_skip_with_the_reason(tmp_path):
    missing = tmp_path / "no_bags_here"
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", *FILES],
                          cwd=REPO, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "EGOREC_PUBLIC_BAGS": str(missing)})
    assert done.returncode == 0, done.stdout[-3000:]
    assert " passed" not in done.stdout and "error" not in done.stdout.lower()
    assert f"public test bags not found at {missing}" in done.stdout
    assert "set EGOREC_PUBLIC_BAGS to their folder" in done.stdout
