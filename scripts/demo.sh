#!/usr/bin/env bash
# Sets up, then records a few episodes from simulated devices into ./egorec_data and validates them.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
exec .venv/bin/egorec demo --out "${1:-egorec_data}"
