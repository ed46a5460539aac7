#!/usr/bin/env bash
# Creates ./.venv with egorec_ros and its test tools; cheap to rerun.
# Works on a fresh Debian/Ubuntu machine: installs python3-venv with apt if it is missing.
# PYTHON=/path/to/python3.12 VENV=.venv-3.12 scripts/bootstrap.sh: another interpreter, its own venv.
set -euo pipefail
cd "$(dirname "$0")/.."

PY=${PYTHON:-python3}
if ! command -v "$PY" >/dev/null; then
  echo "bootstrap: $PY not found; install Python >= 3.10 (apt-get install python3 python3-venv)" >&2
  exit 1
fi
if ! "$PY" -c 'import sys; sys.exit(sys.version_info < (3, 10))'; then
  echo "bootstrap: $("$PY" --version) is too old; egorec_ros needs Python >= 3.10" >&2
  exit 1
fi
if ! "$PY" -c 'import ensurepip, venv' 2>/dev/null; then
  pkg="python3-venv"
  ver=$("$PY" -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')
  echo "bootstrap: the venv module is missing; installing python$ver-venv with apt" >&2
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq && ($sudo apt-get install -y -qq "python$ver-venv" || $sudo apt-get install -y -qq "$pkg")
fi

VENV=${VENV:-.venv}
[ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
want_ver=$("$PY" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
have_ver=$("$VENV/bin/python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
if [ "$want_ver" != "$have_ver" ]; then
  echo "bootstrap: $VENV holds Python $have_ver, not $PY's $want_ver; use VENV=.venv-$want_ver (or remove $VENV)" >&2
  exit 1
fi
stamp=$VENV/.egorec-installed
want=$(cat setup.py pyproject.toml | sha1sum | cut -c1-40)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  "$VENV/bin/python" -m pip install -q --upgrade pip
  "$VENV/bin/python" -m pip install -q -e ".[test,dev,ray]"
  echo "$want" > "$stamp"
fi
