#!/usr/bin/env bash
# Creates ./.venv-lerobot: the real `lerobot` from PyPI (pinned) + egorec_ros, for the
# LeRobot round-trip test (test/test_export_lerobot_roundtrip.py). Kept apart from .venv
# because it pulls in torch. Cheap to rerun.
#
# Why these versions (Python 3.11 here):
# * lerobot 0.4.4 is the newest release for Python 3.11 (0.5+ needs 3.12); it asks for
#   torch<2.11, but torch 2.10 from PyPI is a CUDA build of several GB to download.
# * torchvision is imported by lerobot.datasets, and PyPI's torchvision does not import
#   beside the CPU-only torch 2.13.0 file of this machine; torch 2.14.1 + torchvision
#   0.29.1 do, and both lie on this machine's disk (pip takes them from there). So lerobot
#   is installed with --no-deps and its dataset-side dependencies are listed below.
# * torchvision 0.29 has no video reader any more, so frames are decoded by torchcodec
#   (lerobot's default backend), which needs the system FFmpeg libraries (apt: ffmpeg).
# * depth: lerobot 0.4.4 has no depth features (they came after 0.6), nothing to install.
set -euo pipefail
cd "$(dirname "$0")/.."

LEROBOT=0.4.4
TORCH=2.14.1
TORCHVISION=0.29.1
TORCHCODEC=0.14.0
VENV=${LEROBOT_VENV:-.venv-lerobot}
PY=${PYTHON:-python3}

if ! ldconfig -p | grep -q 'libavcodec\.so\.'; then
  echo "lerobot_venv: torchcodec needs the FFmpeg libraries; installing them with apt" >&2
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq && $sudo apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends ffmpeg
fi

[ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
stamp="$VENV/.egorec-lerobot-installed"
want="lerobot=$LEROBOT torch=$TORCH torchvision=$TORCHVISION torchcodec=$TORCHCODEC $(sha1sum "$0" | cut -c1-12)"
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  pip="$VENV/bin/python -m pip"
  $pip install -q --upgrade pip
  $pip install -q "torch==$TORCH" "torchvision==$TORCHVISION"
  $pip install -q --no-deps "lerobot==$LEROBOT" "torchcodec==$TORCHCODEC"
  # lerobot 0.4.4's own pins for what lerobot.datasets imports (robots, policies, logging left out)
  $pip install -q "datasets>=4.0.0,<5.0.0" "huggingface-hub>=0.34.2,<0.36.0" "av>=15.0.0,<16.0.0" \
    "jsonlines>=4.0.0,<5.0.0" "packaging>=24.2,<26.0" "draccus==0.10.0" "einops>=0.8.0,<0.9.0" \
    "deepdiff>=7.0.1,<9.0.0" "termcolor>=2.4.0,<4.0.0" "gymnasium>=1.1.1,<2.0.0" \
    "imageio[ffmpeg]>=2.34.0,<3.0.0" "setuptools>=71.0.0,<81.0.0" "accelerate>=1.10.0,<2.0.0" pandas pillow
  # our package without its pins (its av>=17 conflicts with lerobot's av<16; the
  # round-trip script only imports lerobot)
  $pip install -q --no-deps -e .
  "$VENV/bin/python" -c "import lerobot.datasets.lerobot_dataset, torchcodec.decoders"
  echo "$want" > "$stamp"
fi
echo "$VENV: lerobot $LEROBOT ready"
