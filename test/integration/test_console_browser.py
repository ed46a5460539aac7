"""The console in a real browser (Debian chromium via Selenium, headless, without CAP_SYS_NICE)
against the DDS recorder and simulated devices in their own processes (loopback DDS): start a
recording from the page, see the tiles update, stop, read the verdict, delete that episode (redo),
record another, keep it, open Review and check every video plays in step. The recorder uploads
each committed episode to the test upload server (its own process): the kept episode's upload
state in the Episodes list goes to done with the server's session id, and the header sums the
queue. Screenshots of the live page, the episodes with their upload states, the review page and
the task's HTML report (`egorec inspect --html`) go to $EGOREC_SCREENSHOTS (if set)."""
from __future__ import annotations

import os
import re
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from helpers.browser import browser_or_skip, console_process, wait_for
from helpers.dds_recorder import dds_env_for, running_recorder
from helpers.cli import egorec_ok
from helpers.console_page import live_tiles, record_from_page, review_plays, shot, shown_verdict
from helpers.upload import upload_server

pytestmark = pytest.mark.timeout(180)


def test_console_live_stop_verdict_delete_review(tmp_path):
    from selenium.webdriver.common.by import By
    browser = browser_or_skip(tmp_path)
    try:
        with upload_server(tmp_path / "server") as server, \
                running_recorder(tmp_path, dds_env_for(__name__), name="rec_console", task="t",
                                 recorder_args=("--upload-server", server.url)) as rec:
            console, url = console_process(["--name", rec.name, "--out", str(rec.out)], rec.env, tmp_path / "console.log")
            try:
                # nothing outside the task folder, however encoded; no control without the token
                base = url.split("?")[0]
                for bad in ("files/../meta/info.json", "files/%2e%2e/%2e%2e/etc/passwd",
                            "files/%252e%252e/%252e%252e/etc/passwd", "files/..%2f..%2fetc%2fpasswd"):
                    with pytest.raises(urllib.error.HTTPError) as err:
                        urllib.request.urlopen(base + bad, timeout=10)
                    assert err.value.code == 404, bad
                with pytest.raises(urllib.error.HTTPError) as err:
                    urllib.request.urlopen(urllib.request.Request(base + "api/start", data=b"{}", method="POST"),
                                           timeout=10)
                assert err.value.code == 403

                browser.get(url)
                live_tiles(browser, 2)          # a tile per camera, its preview changing, alive

                record_from_page(browser, "redo me")
                first_index = shown_verdict(browser, "console-live.png")
                browser.find_element(By.ID, "redo").click()
                browser.switch_to.alert.accept()
                wait_for(lambda: not browser.find_element(By.ID, "verdict").is_displayed(), 20, "the verdict to close")
                wait_for(lambda: all(e["episode_index"] != first_index for e in rec.list_episodes()), 20,
                         "the deleted episode to leave the list")
                assert not list(rec.task_dir.glob(f"data/chunk-*/episode-{first_index - 1:03d}.parquet"))

                record_from_page(browser, "keep me", seconds=2.5)
                second = int(browser.find_element(By.ID, "v-index").text)
                assert second == first_index + 1, "a deleted episode's number is never reused"
                browser.find_element(By.ID, "keep").click()
                wait_for(lambda: browser.find_element(By.CSS_SELECTOR, f"tr[data-episode='{second}']"), 20,
                         "the kept episode in the list")
                assert not browser.find_elements(By.CSS_SELECTOR, f"tr[data-episode='{first_index}']")
                # uploaded by the recorder itself: done, with the session id the server gave it
                session = wait_for(lambda: next((x["id"] for x in server.received()
                                                 if x["episode_index"] == str(second - 1)), None), 30,
                                   "the kept episode on the upload server")
                kept = f"tr[data-episode='{second}'] td.upload"    # (the list is redrawn as the queue moves)
                wait_for(lambda: browser.find_element(By.CSS_SELECTOR, kept).text == f"done · session {session}",
                         20, "the kept episode's upload state to be done with the server's session id")
                # (the first episode went too, or was deleted before its turn: 1 or 2 done)
                wait_for(lambda: re.fullmatch(r"upload: 0 pending · 0 uploading · [12] done \([\d.]+ [kMG]B\) · 0 failed · [\d.]+ [kMG]B/s",
                                              browser.find_element(By.ID, "upload").text), 10,
                         "the upload summary to show the queue sent")
                shot(browser, "console-episodes.png", "episodes")
                browser.find_element(By.CSS_SELECTOR, f"tr[data-episode='{second}'] button.review").click()
                review_plays(browser, 2)
                shot(browser, "console-review.png")
                if os.environ.get("EGOREC_SCREENSHOTS"):       # the task's HTML report with its QA badge
                    report = Path(os.environ["EGOREC_SCREENSHOTS"]) / "report.html"
                    egorec_ok("inspect", str(rec.task_dir), "--html", str(report), env=rec.env, timeout=120)
                    browser.get(report.as_uri())
                    shot(browser, "report.png")
            finally:
                console.terminate()
                console.wait(timeout=20)
    finally:
        browser.quit()
