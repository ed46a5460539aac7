"""Headless Debian chromium driven by Selenium, launched WITHOUT CAP_SYS_NICE (setpriv): as root,
chromium once put its zygotes at SCHED_FIFO 99 and froze the machine. ``browser_or_skip`` says why
a test cannot have one (no chromium, no chromedriver, no selenium, no setpriv)."""
from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

import pytest

CHROMEDRIVER_CANDIDATES = ("chromedriver", "/usr/lib/chromium/chromedriver")


def _find(names) -> str | None:
    for name in names:
        found = shutil.which(name) or (name if Path(name).is_file() else None)
        if found:
            return found
    return None


def browser_or_skip(tmp: Path, width: int = 1400, height: int = 1000):
    """A selenium Chrome WebDriver (headless chromium); pytest.skip with the reason when impossible."""
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        pytest.skip("selenium is not installed (pip install -e .[test])")
    chromium, driver, setpriv = _find(("chromium", "chromium-browser")), _find(CHROMEDRIVER_CANDIDATES), \
        shutil.which("setpriv")
    if not (chromium and driver and setpriv):
        pytest.skip("chromium / chromium-driver / setpriv missing (scripts/browser_deps.sh installs them on "
                    "Debian/Ubuntu as root)")
    wrapper = tmp / "chromedriver-nosysnice"
    wrapper.write_text(f"#!/bin/sh\nexec {setpriv} --bounding-set=-sys_nice --inh-caps=-sys_nice {driver} \"$@\"\n")
    wrapper.chmod(0o755)
    opts = webdriver.ChromeOptions()
    opts.binary_location = chromium
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--mute-audio",
                f"--window-size={width},{height}", "--autoplay-policy=no-user-gesture-required",
                "--disable-background-networking", "--no-first-run", f"--user-data-dir={tmp / 'chromium-profile'}"):
        opts.add_argument(arg)
    try:
        browser = webdriver.Chrome(service=Service(str(wrapper), log_output=str(tmp / "chromedriver.log")),
                                   options=opts)
    except Exception as exc:  # noqa: BLE001 - a browser that cannot start here is a skip with its reason
        pytest.skip(f"chromium did not start under chromedriver: {str(exc).splitlines()[0]}")
    browser.set_page_load_timeout(30)
    browser.set_script_timeout(20)
    return browser


def wait_for(pred, timeout: float, what: str, poll: float = 0.1):
    """pred()'s first truthy value within ``timeout`` s; AssertionError naming ``what`` otherwise."""
    end = time.monotonic() + timeout
    last_exc: Exception | None = None
    while time.monotonic() < end:
        try:
            value = pred()
            if value:
                return value
        except Exception as exc:  # noqa: BLE001 - the page may be between states
            last_exc = exc
        time.sleep(poll)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}" + (f" (last error: {last_exc})"
                                                                              if last_exc else ""))


def console_process(args: list[str], env: dict, log: Path) -> tuple[subprocess.Popen, str]:
    """`egorec console ARGS --port 0` in the background; (process, its printed URL with the token)."""
    import re
    import sys
    proc = subprocess.Popen([sys.executable, "-m", "egorec_ros.cli", "console", *args, "--port", "0"], env=env,
                            stdout=subprocess.DEVNULL, stderr=log.open("w"))
    url = wait_for(lambda: (m := re.search(r"(http://\S+\?token=\S+)", log.read_text())) and m.group(1), 30,
                   "the console's URL")
    return proc, url
