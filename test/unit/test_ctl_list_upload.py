"""`egorec ctl list` prints each episode's upload as the console's Episodes column does, so an
operator on a terminal sees which takes the server has (issue 22)."""
from __future__ import annotations

import pytest

from egorec_ros.cli.ctl_cmd import _print_list, upload_text


@pytest.mark.parametrize("upload, text", [
    ({"state": "off"}, ""),
    ({"state": "not queued"}, "not queued"),
    ({"state": "pending", "attempts": 0, "last_error": ""}, "pending"),
    ({"state": "pending", "attempts": 2, "last_error": "HTTP 503", "retry_in_s": 3.2},
     "pending (2 attempts failed, retry in 4 s): HTTP 503"),
    ({"state": "uploading", "attempts": 0, "sent": 512, "size": 2048}, "uploading 25 %"),
    ({"state": "done", "attempts": 1, "session_id": "ab12", "size": 9}, "done · session ab12"),
    ({"state": "failed", "attempts": 1, "last_error": "HTTP 401: bad token"},
     "failed after 1 attempt: HTTP 401: bad token (`egorec upload` queues it again)"),
    ({"state": "gone", "attempts": 0, "last_error": "deleted"}, "gone (deleted before it was sent)"),
])
def test_upload_text_says_what_the_page_says(upload: dict, text: str) -> None:
    assert upload_text(upload) == text


def test_the_list_shows_upload_only_when_the_recorder_uploads(capsys: pytest.CaptureFixture[str]) -> None:
    ep = {"episode_index": 3, "rows": 90, "duration_s": 3.0, "verdict": "ok", "instruction": "pick", "reasons": []}
    _print_list("t", [{**ep, "upload": {"state": "done", "attempts": 1, "session_id": "s1"}}], as_json=False)
    _print_list("t", [{**ep, "upload": {"state": "off"}}], as_json=False)
    with_upload, without = capsys.readouterr().out.split("task t: 1 episode(s)\n")[1:]
    assert with_upload.rstrip().endswith("ok    pick  [upload done · session s1]")
    assert without.rstrip().endswith("ok    pick")
