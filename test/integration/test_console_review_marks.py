"""The Review timeline in a real browser (Debian chromium via Selenium, headless, without
CAP_SYS_NICE) shows per camera stream WHERE rows were repeated or late (the episode row's
frame_marks), on the x scale of the timeline, and a click there brings the videos to that row.
The episode: two simulated cameras through the real pipeline, one silent for half a second, the
other's frames arriving late for 0.3 s. `egorec console` runs as its own process on loopback DDS
(no recorder needed to review a task folder). Screenshot to $EGOREC_SCREENSHOTS (if set)."""
from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest
from helpers.browser import browser_or_skip, console_process, wait_for
from helpers.dds_recorder import dds_env_for
from helpers.store import START_NS

from egorec_ros.dataset.task import Task
from egorec_ros.recorder.replay import record_samples
from egorec_ros.rig.load import load_rig
from egorec_ros.rig.resize import with_video_sizes
from egorec_ros.sim.flaws import CLEAN
from egorec_ros.sim.replay import simulate
from egorec_ros.store import TaskWriter

pytestmark = pytest.mark.timeout(180)
S = 1_000_000_000
SECONDS = 2.5


def spoiled_episode(task: Path) -> dict:
    """cam0 silent 0.5..1.0 s (rows repeated), cam1's frames of 1.5..1.8 s 400 ms late."""
    rig = with_video_sizes(load_rig("uvc_pair"), (160, 120))
    samples = []
    for s in simulate(rig, SECONDS + 0.5, seed=5, start_ns=START_NS, flaws=CLEAN):
        at = (s.stamp_ns - START_NS) / S
        if s.stream == "cam0.rgb" and 0.5 <= at < 1.0:
            continue
        if s.stream == "cam1.rgb" and 1.5 <= at < 1.8:
            s = dataclasses.replace(s, arrival_ns=s.arrival_ns + 400_000_000)
        samples.append(s)
    samples.sort(key=lambda s: s.arrival_ns)
    with TaskWriter(task) as writer:
        result, _ = record_samples(writer, rig, iter(samples), start_ns=START_NS, stop_ns=START_NS + int(SECONDS * S))
    assert result is not None
    return Task(task).episodes[0].row


# per stream and kind: the pixel colours at each range's middle, and at row 2 (no range covers it)
PIXELS = """
const c = document.querySelector('#r-marks'), g = c.getContext('2d'), L = window.egorec.marksLayout;
const px = (x, y) => Array.from(g.getImageData(Math.round(x), Math.round(y), 1, 1).data.slice(0, 3));
const out = {};
for (const [sid, kinds] of Object.entries(L.lanes)) for (const [kind, y] of Object.entries(kinds)) {
  const ranges = (arguments[0][sid] || {})[kind] || [];
  out[sid + " " + kind] = {marked: ranges.map(([a, b]) => px(L.width * ((a + b) / 2) / L.span, y)),
                           clear: px(L.width * (2 / L.span), y)};
}
return out;"""


def test_review_draws_where_rows_were_repeated_or_late(tmp_path: Path) -> None:
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    row = spoiled_episode(tmp_path / "out" / "t")
    marks = row["frame_marks"]["streams"]
    cam0, cam1 = marks["cam0.rgb"], marks["cam1.rgb"]
    assert cam0["repeated"]["rows"] == row["drop_stats"]["streams"]["cam0.rgb"]["repeated"] >= 14
    assert cam1["late"]["rows"] == row["drop_stats"]["streams"]["cam1.rgb"]["late"] >= 8
    browser = browser_or_skip(tmp_path)
    try:
        console, url = console_process(["--name", "no_recorder", "--out", str(tmp_path / "out")],
                                       dds_env_for(__name__), tmp_path / "console.log")
        try:
            browser.get(url)
            browser.execute_script("openReview(1, 't')")
            wait_for(lambda: browser.execute_script("return window.egorec.reviewReady"), 30, "the review")
            wait_for(lambda: browser.execute_script(
                "return [...document.querySelectorAll('#r-videos video')].every(v => v.readyState >= 2)"),
                30, "the videos to load")
            ranges = {sid: {k: e[k]["ranges"] for k in ("repeated", "late", "invalid") if k in e}
                      for sid, e in marks.items()}
            pixels = browser.execute_script(PIXELS, ranges)
            colours = {"repeated": [255, 68, 68], "late": [238, 187, 68], "invalid": [204, 102, 255]}
            assert set(pixels) == {f"{sid} {k}" for sid in ("cam0.rgb", "cam1.rgb") for k in colours}
            for sid, kinds in ranges.items():
                for kind, rs in kinds.items():
                    assert pixels[f"{sid} {kind}"]["marked"] == [colours[kind]] * len(rs), (sid, kind, pixels)
            assert "late" not in ranges["cam0.rgb"] and len(ranges["cam1.rgb"]["late"]) == 1
            assert all(p["clear"] not in colours.values() for p in pixels.values()), pixels
            labels = browser.find_element(By.ID, "r-marks")
            # a click on cam0's repeated stretch brings every video there, and the cursor with them
            a, b = ranges["cam0.rgb"]["repeated"][0]
            layout = browser.execute_script("return window.egorec.marksLayout")
            width = labels.size["width"]
            x = width * ((a + b) / 2) / layout["span"] - width / 2      # offset from the canvas centre
            ActionChains(browser).move_to_element_with_offset(labels, int(x), 0).click().perform()
            want = (a + b) / 2 / 30
            times = wait_for(lambda: (t := browser.execute_script(
                "return [...document.querySelectorAll('#r-videos video')].map(v => v.currentTime)"))
                and all(abs(v - want) < 0.1 for v in t) and t, 10, f"the videos to seek to {want:.2f} s")
            assert len(times) == 2
            folder = os.environ.get("EGOREC_SCREENSHOTS")
            if folder:
                browser.execute_script("document.querySelector('#review').scrollIntoView()")
                browser.save_screenshot(str(Path(folder) / "timeline-review.png"))
        finally:
            console.terminate()
            console.wait(timeout=20)
    finally:
        browser.quit()
