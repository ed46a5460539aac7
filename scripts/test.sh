#!/usr/bin/env bash
# Sets up, checks the gates (ruff, mypy, import layering; configured in pyproject.toml),
# then runs the whole test suite (extra arguments go to pytest). Any failure fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
echo "ruff:" && .venv/bin/ruff check egorec_ros test bench scripts
echo "mypy:" && .venv/bin/mypy
echo "import layering:" && .venv/bin/lint-imports --no-cache | grep -E "KEPT|BROKEN|Contracts:"
exec .venv/bin/python -m pytest -q "$@"
