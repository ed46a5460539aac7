#!/usr/bin/env bash
# Sets up, checks the gates (ruff, mypy, import layering; configured in pyproject.toml),
# then runs the whole test suite (extra arguments go to pytest). Any failure fails the run.
# PYTHON=python3.12 VENV=.venv-3.12 scripts/test.sh: the same on another interpreter, in its own venv.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
scripts/browser_deps.sh      # chromium for the console's browser test (skips with a reason without it)
VENV=${VENV:-.venv}
# mypy checks for the interpreter in use (pyproject.toml says why)
pyver=$("$VENV/bin/python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
echo "ruff:" && "$VENV/bin/ruff" check egorec_ros test bench scripts
echo "mypy (Python $pyver):" && "$VENV/bin/mypy" --python-version "$pyver"
echo "import layering:" && "$VENV/bin/lint-imports" --no-cache | grep -E "KEPT|BROKEN|Contracts:"
exec "$VENV/bin/python" -m pytest -q "$@"
