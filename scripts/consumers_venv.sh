#!/usr/bin/env bash
# Creates ./.venv-consumers (gitignored) with what EgoSmith's shard reader + quality/wds_sanity
# and EgoSteer's VLAWdsDataset + DataChecker import, for test_export_egosmith_consumers.py.
# Installs PyPI packages only: the consumers' own code is never copied into this repository;
# put their checkouts beside it yourself (EGOSMITH_SRC / EGOSTEER_SRC, default /work/ext/...).
# Cheap to rerun.
#
# torch 2.13.0: on this kind of machine a CPU build of it lies on disk for Python 3.11 and
# pip takes it from there; elsewhere pip downloads a (large) build from PyPI.
set -euo pipefail
cd "$(dirname "$0")/.."

TORCH=2.13.0
VENV=${CONSUMERS_VENV:-.venv-consumers}
PY=${PYTHON:-python3}

[ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
stamp="$VENV/.egorec-consumers-installed"
want="torch=$TORCH $(sha1sum "$0" | cut -c1-12)"
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  pip="$VENV/bin/python -m pip"
  $pip install -q --upgrade pip
  $pip install -q "torch==$TORCH"
  # EgoSteer src/dataset imports: webdataset, cv2, albumentations, einops, PIL (+ torch);
  # EgoSmith quality/wds_sanity + exporters/webdataset_rewriter: numpy only.
  $pip install -q "numpy<3" "webdataset>=0.2.100,<2" opencv-python-headless albumentations einops pillow tqdm
  "$VENV/bin/python" -c "import torch, webdataset, cv2, albumentations, einops, PIL, tqdm"
  echo "$want" > "$stamp"
fi
echo "$VENV: ready"
