#!/usr/bin/env bash
# Creates a venv with the real `lerobot` from PyPI (pinned) + egorec_ros, for the LeRobot
# round-trip test (test/integration/test_export_lerobot_roundtrip.py). Kept apart from .venv
# because it pulls in torch. Cheap to rerun.
#
#   scripts/lerobot_venv.sh [0.6.1|0.4.4]     (default 0.6.1)
#     0.6.1 -> .venv-lerobot-0.6 (Python >= 3.12: $PYTHON, else python3.12/3.13 on PATH or
#              pyenv, else `uv python find 3.12`), about 6 GB (PyPI's torch is a CUDA build)
#     0.4.4 -> .venv-lerobot     (Python 3.11: $PYTHON, else python3)
#   LEROBOT_VENV overrides the folder.
#
# lerobot 0.6.1 (the current release; needs Python >= 3.12): installed with its own pins,
# `lerobot[dataset,viz]` (viz: rerun-sdk for lerobot-dataset-viz).
#
# lerobot 0.4.4 (the newest release for Python 3.11; 0.5+ needs 3.12):
# * it asks for torch<2.11, but torch 2.10 from PyPI is a CUDA build of several GB.
# * torchvision is imported by lerobot.datasets, and PyPI's torchvision does not import
#   beside the CPU-only torch 2.13.0 file of this machine; torch 2.14.1 + torchvision
#   0.29.1 do, and both lie on this machine's disk (pip takes them from there). So lerobot
#   is installed with --no-deps and its dataset-side dependencies are listed below.
# * torchvision 0.29 has no video reader any more, so frames are decoded by torchcodec
#   (lerobot's default backend), which needs the system FFmpeg libraries (apt: ffmpeg).
# * depth: lerobot 0.4.4 has no depth feature; it decodes our depth videos as RGB.
set -euo pipefail
cd "$(dirname "$0")/.."

LEROBOT=${1:-0.6.1}
case "$LEROBOT" in
  0.6.1) VENV=${LEROBOT_VENV:-.venv-lerobot-0.6} ;;
  0.4.4) VENV=${LEROBOT_VENV:-.venv-lerobot} ;;
  *) echo "lerobot_venv: version $LEROBOT is not one we test; use 0.6.1 or 0.4.4" >&2; exit 2 ;;
esac

python_for() {   # a Python for lerobot $1
  if [ -n "${PYTHON:-}" ]; then echo "$PYTHON"; return; fi
  if [ "$1" = 0.4.4 ]; then command -v python3; return; fi
  for py in python3.12 python3.13; do
    if command -v "$py" >/dev/null; then command -v "$py"; return; fi
  done
  for py in "$(pyenv root 2>/dev/null || echo "$HOME/.pyenv")"/versions/3.1[23].*/bin/python3; do
    if [ -x "$py" ]; then echo "$py"; return; fi
  done
  if command -v uv >/dev/null && uv python find 3.12 2>/dev/null; then return; fi
  echo "lerobot_venv: lerobot $1 needs Python >= 3.12; none found (set PYTHON=/path/to/python3.12," \
       "or install one: pyenv install 3.12 / uv python install 3.12)" >&2
  exit 1
}

if ! ldconfig -p | grep -q 'libavcodec\.so\.'; then
  echo "lerobot_venv: torchcodec needs the FFmpeg libraries; installing them with apt" >&2
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq && $sudo apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends ffmpeg
fi

[ -x "$VENV/bin/python" ] || "$(python_for "$LEROBOT")" -m venv "$VENV"
stamp="$VENV/.egorec-lerobot-installed"
want="lerobot=$LEROBOT $(sha1sum "$0" | cut -c1-12)"
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  pip="$VENV/bin/python -m pip"
  $pip install -q --upgrade pip
  if [ "$LEROBOT" = 0.6.1 ]; then
    echo "lerobot_venv: installing lerobot[dataset,viz]==0.6.1 (torch etc., several GB)" >&2
    $pip install -q "lerobot[dataset,viz]==0.6.1"
  else
    $pip install -q "torch==2.14.1" "torchvision==0.29.1"
    $pip install -q --no-deps "lerobot==0.4.4" "torchcodec==0.14.0"
    # lerobot 0.4.4's own pins for what lerobot.datasets and its dataset scripts import
    # (robots, policies, logging left out; rerun-sdk for lerobot-dataset-viz)
    $pip install -q "datasets>=4.0.0,<5.0.0" "huggingface-hub>=0.34.2,<0.36.0" "av>=15.0.0,<16.0.0" \
      "jsonlines>=4.0.0,<5.0.0" "packaging>=24.2,<26.0" "draccus==0.10.0" "einops>=0.8.0,<0.9.0" \
      "deepdiff>=7.0.1,<9.0.0" "termcolor>=2.4.0,<4.0.0" "gymnasium>=1.1.1,<2.0.0" \
      "imageio[ffmpeg]>=2.34.0,<3.0.0" "setuptools>=71.0.0,<81.0.0" "accelerate>=1.10.0,<2.0.0" \
      "rerun-sdk>=0.24.0,<0.27.0" pandas pillow
  fi
  # our package without its pins (its av>=17 conflicts with lerobot's av<16; the
  # round-trip script only imports lerobot)
  $pip install -q --no-deps -e .
  "$VENV/bin/python" -c "import lerobot.datasets.lerobot_dataset, torchcodec.decoders, rerun"
  echo "$want" > "$stamp"
fi
echo "$VENV: lerobot $LEROBOT ready"
