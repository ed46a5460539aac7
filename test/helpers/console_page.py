"""Driving the console's page in a real browser (see helpers.browser): record an episode from the
page and read its verdict, open Review and check every video plays in step. Shared by the
browser tests of the DDS and the rclpy recorder."""
from __future__ import annotations

import json
import os
import re
import subprocess
import time
import urllib.request
from pathlib import Path

from helpers.browser import wait_for


def shot(browser, name: str, scroll_to: str = "") -> None:
    """A screenshot into $EGOREC_SCREENSHOTS (if set), scrolled to element ``scroll_to`` if given."""
    folder = os.environ.get("EGOREC_SCREENSHOTS")
    if folder:
        if scroll_to:
            browser.execute_script(f"document.getElementById('{scroll_to}').scrollIntoView()")
        browser.save_screenshot(str(Path(folder) / name))


def console_url(log: Path, proc: subprocess.Popen, timeout: float = 60) -> str:
    """The URL with the token a console printed to ``log`` (AssertionError with the log if it died)."""
    def found():
        if proc.poll() is not None:
            raise AssertionError(f"the console ended with {proc.returncode}:\n{log.read_text(errors='replace')}")
        m = re.search(r"(http://\S+\?token=\S+)", log.read_text(errors="replace"))
        return m and m.group(1)
    try:
        return wait_for(found, timeout, "the console's URL")
    except AssertionError as exc:
        raise AssertionError(f"{exc}\n{log.read_text(errors='replace')}") from None


def first_event(url: str, timeout: float = 10) -> dict:
    """The first snapshot the page's event stream (/events) sends."""
    with urllib.request.urlopen(url.split("?")[0] + "events", timeout=timeout) as resp:
        for raw in resp:
            line = raw.decode().strip()
            if line.startswith("data: "):
                return json.loads(line[len("data: "):])
    raise AssertionError("the event stream ended without a snapshot")


def record_from_page(browser, instruction: str, seconds: float = 1.5) -> None:
    """Type the instruction, Start, wait ``seconds`` while recording, Stop; returns once the verdict shows."""
    from selenium.webdriver.common.by import By
    box = browser.find_element(By.ID, "instruction")
    box.clear()
    box.send_keys(instruction)
    # Start is enabled once the page's status says the recorder is idle (a status from before the last
    # stop can still be on its way)
    wait_for(lambda: browser.find_element(By.ID, "start").is_enabled(), 20, "Start to be enabled")
    browser.find_element(By.ID, "start").click()
    try:
        wait_for(lambda: browser.find_element(By.ID, "state").text == "recording", 20, "the recorder to be recording")
    except AssertionError as exc:
        raise AssertionError(f"{exc}; the page says: {browser.find_element(By.ID, 'message').text!r}") from None
    wait_for(lambda: int(browser.execute_script("return window.egorec.snapshots")) > 0, 5, "live events")
    time.sleep(seconds)
    browser.find_element(By.ID, "stop").click()
    wait_for(lambda: browser.find_element(By.ID, "verdict").is_displayed(), 60, "the verdict after stop")


def shown_verdict(browser, screenshot: str) -> int:
    """Check the verdict panel after a stop (a verdict; reasons exactly when it is not ok; thumbnails)
    and return the episode number it is about."""
    from selenium.webdriver.common.by import By
    verdict = browser.find_element(By.ID, "v-verdict").text
    assert verdict in ("ok", "warn", "redo"), verdict
    reasons = [li.text for li in browser.find_elements(By.CSS_SELECTOR, "#v-reasons li")]
    assert (verdict == "ok") == (not reasons), (verdict, reasons)
    wait_for(lambda: browser.find_elements(By.CSS_SELECTOR, "#v-thumbs img"), 30, "the thumbnail strip")
    shot(browser, screenshot)
    return int(browser.find_element(By.ID, "v-index").text)


def live_tiles(browser, count: int) -> list:
    """Wait for ``count`` camera tiles whose previews change; their colours say alive (ok / warn)."""
    from selenium.webdriver.common.by import By
    # (a tile's canvas gets data-seq once a preview is drawn in it)
    tiles = wait_for(lambda: len(browser.find_elements(By.CSS_SELECTOR, "#tiles .tile canvas[data-seq]")) == count
                     and browser.find_elements(By.CSS_SELECTOR, "#tiles .tile"), 30, f"{count} live tiles")
    first = [t.find_element(By.TAG_NAME, "canvas").get_attribute("data-seq") for t in tiles]
    wait_for(lambda: all(t.find_element(By.TAG_NAME, "canvas").get_attribute("data-seq") != s
                         for t, s in zip(tiles, first)), 10, "the previews to update")
    # alive streams: green, or yellow when the recorder counted drops; never red/grey (silent)
    classes = [t.get_attribute("class") for t in tiles]
    assert all(" ok" in c or " warn" in c for c in classes), classes
    return tiles


def review_plays(browser, videos: int) -> list[float]:
    """Open nothing (Review is already clicked): wait for the review, play, check every video's
    currentTime advances past 0.8 s and they stay within 0.35 s of each other; their times."""
    from selenium.webdriver.common.by import By
    wait_for(lambda: browser.execute_script("return window.egorec.reviewReady"), 30, "the review")
    found = browser.find_elements(By.CSS_SELECTOR, "#r-videos video")
    assert len(found) == videos, f"{len(found)} video elements, expected {videos}"
    wait_for(lambda: browser.execute_script(
        "return [...document.querySelectorAll('#r-videos video')].every(v => v.readyState >= 3)"),
        30, "the videos to load")
    browser.find_element(By.ID, "r-play").click()
    times = wait_for(lambda: (t := browser.execute_script(
        "return [...document.querySelectorAll('#r-videos video')].map(v => v.currentTime)"))
        and min(t) > 0.8 and t, 20, "every video to play")
    assert max(times) - min(times) < 0.35, f"videos out of step: {times}"
    return times
