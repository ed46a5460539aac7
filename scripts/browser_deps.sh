#!/usr/bin/env bash
# Debian's chromium + chromium-driver for the console's browser test (test/integration/test_console_browser.py).
# Best effort: without root or apt the test skips and says why. Chromium is always launched without
# CAP_SYS_NICE (setpriv), see the test: as root it once put its zygotes at SCHED_FIFO 99.
set -u
if command -v chromium >/dev/null && command -v chromedriver >/dev/null; then
  exit 0
fi
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
  echo "browser_deps: chromium/chromedriver missing and cannot apt-get install them (not root or no apt); the browser test will skip" >&2
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
timeout 600 apt-get install -y --no-install-recommends chromium chromium-driver >/dev/null 2>&1 \
  || { timeout 300 apt-get update >/dev/null 2>&1 && timeout 600 apt-get install -y --no-install-recommends chromium chromium-driver >/dev/null 2>&1; } \
  || echo "browser_deps: apt-get install chromium chromium-driver failed; the browser test will skip" >&2
exit 0
