"""The console against the rclpy recorder, as a ROS 2 user runs both (skipped without a sourced ROS 2
and colcon, or without chromium): the checkout built with colcon, ``ros2 launch egorec_ros
record.launch.py ... sim:=true`` (the rclpy recorder and simulated devices), ``ros2 run egorec_ros
console`` (the console over rclpy), headless chromium: start from the page, the tiles update from the
recorder's preview topics, stop, the verdict, delete (redo), record again (the number is not reused),
keep, Review plays every video in step; the recorder's /diagnostics reach the page; the task validates.
Loopback only (the Cyclone loopback config, a private ROS_DOMAIN_ID). Screenshots to $EGOREC_SCREENSHOTS."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from helpers import ros2
from helpers.browser import browser_or_skip, wait_for
from helpers.console_page import console_url, first_event, live_tiles, record_from_page, review_plays, shot, shown_verdict
from helpers.dds_domains import domain_for

# the colcon build (shared with the other rclpy tests: the first of them pays it) + ~60 s of test
pytestmark = pytest.mark.timeout(420)

RIG, SIZE = "uvc_pair", "320x240"


def _start(args: list[str], env: dict, log: Path) -> subprocess.Popen:
    """In its own process group (Ctrl-C goes to the group, as in a terminal), output to ``log``."""
    return subprocess.Popen(args, env=env, start_new_session=True, stdout=log.open("w"), stderr=subprocess.STDOUT)


def _interrupt(proc: subprocess.Popen, log: Path, timeout: float = 120) -> str:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGINT)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
    return log.read_text(errors="replace")


def _episodes(base: str) -> list[int]:
    with urllib.request.urlopen(base + "api/episodes", timeout=60) as resp:
        return [e["episode_index"] for e in json.load(resp)["episodes"]]


def test_console_over_rclpy_live_stop_verdict_delete_review(ros2_install, tmp_path):
    from selenium.webdriver.common.by import By
    browser = browser_or_skip(tmp_path)
    env = ros2.sourced_env(ros2_install, domain_for(__name__))
    out, task = tmp_path / "out", "t"
    launch_log, console_log = tmp_path / "launch.log", tmp_path / "console.log"
    launch = _start(["ros2", "launch", "egorec_ros", "record.launch.py", f"rig:={RIG}", "sim:=true", f"size:={SIZE}",
                     f"out:={out}", f"task:={task}"], env, launch_log)
    console = _start(["ros2", "run", "egorec_ros", "console", "--ros-args", "-p", "recorder:=egorec_recorder",
                      "-p", f"out:={out}", "-p", "port:=0"], env, console_log)
    try:
        url = console_url(console_log, console)
        base = url.split("?")[0]
        # the console sees the rclpy recorder: its status and its /diagnostics entries (named by the
        # node's full name, /egorec_recorder: ...); previews are subscribed only while a page listens
        snap = wait_for(lambda: (s := first_event(url)) and s["connected"] and s["diagnostics"] and s, 60,
                        "status and /diagnostics in the console's events")
        assert {"recorder", "cam0.rgb", "cam1.rgb"} <= {d["name"] for d in snap["diagnostics"]}, snap["diagnostics"]
        assert snap["status"]["state"] == "idle", snap["status"]
        with pytest.raises(urllib.error.HTTPError) as err:     # no control without the token
            urllib.request.urlopen(urllib.request.Request(base + "api/start", data=b"{}", method="POST"), timeout=10)
        assert err.value.code == 403

        browser.get(url)
        live_tiles(browser, 2)

        record_from_page(browser, "redo me")
        first_index = shown_verdict(browser, "console-live-rclpy.png")
        assert first_index in _episodes(base)
        browser.find_element(By.ID, "redo").click()
        browser.switch_to.alert.accept()
        wait_for(lambda: not browser.find_element(By.ID, "verdict").is_displayed(), 20, "the verdict to close")
        wait_for(lambda: first_index not in _episodes(base), 20, "the deleted episode to leave ~/list_episodes")
        assert not list((out / task).glob(f"data/chunk-*/episode-{first_index - 1:03d}.parquet"))

        record_from_page(browser, "keep me", seconds=2.5)
        second = int(browser.find_element(By.ID, "v-index").text)
        assert second == first_index + 1, "a deleted episode's number is never reused"
        browser.find_element(By.ID, "keep").click()
        row = wait_for(lambda: browser.find_element(By.CSS_SELECTOR, f"tr[data-episode='{second}']"), 20,
                       "the kept episode in the list")
        assert not browser.find_elements(By.CSS_SELECTOR, f"tr[data-episode='{first_index}']")
        row.find_element(By.CSS_SELECTOR, "button.review").click()
        review_plays(browser, 2)
        shot(browser, "console-review-rclpy.png")
    finally:
        browser.quit()
        console_out = _interrupt(console, console_log)
        launch_out = _interrupt(launch, launch_log)
    assert console.returncode == 0 and "Traceback" not in console_out, console_out
    assert "Traceback" not in launch_out and "process has died" not in launch_out, launch_out
    done = subprocess.run(["ros2", "run", "egorec_ros", "egorec", "validate", str(out / task)], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "clean" in done.stdout, done.stdout + done.stderr
