"""Uploading episodes to a real HTTP server in its own process (test/helpers/upload_server.py):
what arrives is the local slice member by member, and faults never make an episode arrive
twice or not at all."""
from __future__ import annotations

import zipfile
from pathlib import Path

import pytest
from helpers.upload import local_slice, make_task, members_of, upload_server

from egorec_ros.upload.queue import DONE, FAILED, GONE, QUEUE_FILE, UploadQueue
from egorec_ros.upload.uploader import Uploader, UploadSettings

FAST = dict(backoff_s=0.05, backoff_max_s=0.2, read_timeout_s=1.5)


@pytest.fixture(scope="module")
def task_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A task with episodes on both sides of the chunk boundary (N = 999, 1000, 1001) and N = 1."""
    root = tmp_path_factory.mktemp("recordings")
    make_task(root, "pick_cup", [1, 999, 1000, 1001])
    return root


def copy_root(task_root: Path, tmp_path: Path) -> Path:
    import shutil
    root = tmp_path / "recordings"
    shutil.copytree(task_root, root)
    return root


def send(root: Path, url: str, numbers: list[int], **settings) -> list:
    up = Uploader(root, UploadSettings(server=url, **{**FAST, **settings}))
    try:
        ids = {up.enqueue("pick_cup", n).id for n in numbers}
        up.connect()
        return up.run(ids)
    finally:
        up.close()


def assert_once_each(server, task: Path, numbers: list[int]) -> None:
    """Every episode on the server exactly once, its zip equal to the local slice."""
    received = {int(_n_of(server, r)): r for r in server.received()}
    assert len(received) == len(server.received())                 # no episode twice
    assert sorted(received) == sorted(numbers)                      # none missing
    for n, r in received.items():
        assert members_of(server.zip_of(r["id"])) == local_slice(task, n)


def _n_of(server, record: dict) -> str:
    """The 1-based number of the episode in a received zip (its data file's path)."""
    names = [m for m in members_of(server.zip_of(record["id"])) if m.startswith("data/")]
    (name,) = names
    chunk, file = int(name.split("/")[1][6:]), int(name.split("/")[2][8:11])
    return str(chunk * 1000 + file + 1)


def test_the_zip_is_the_local_slice_across_the_chunk_boundary(task_root: Path, tmp_path: Path) -> None:
    root = copy_root(task_root, tmp_path)
    task = root / "pick_cup"
    with upload_server(tmp_path / "server") as server:
        entries = send(root, server.url, [999, 1000, 1001])
        assert [e.state for e in entries] == [DONE] * 3
        received = {r["id"]: r for r in server.received()}
        for e, n, chunk, file in zip(entries, (999, 1000, 1001), (0, 0, 1), (998, 999, 0)):
            record = received[e.session_id]
            # the form: the task folder's name, an empty project, the 0-based file number
            assert (record["name"], record["project_id"], record["episode_index"]) == ("pick_cup", "", str(file))
            assert record["filename"] == "pick_cup.zip"
            got = members_of(server.zip_of(e.session_id))
            assert got == local_slice(task, n)                      # names and bytes, member by member
            assert sorted(got) == sorted([
                f"data/chunk-{chunk:03d}/episode-{file:03d}.parquet",
                f"meta/episodes/chunk-{chunk:03d}/episode-{file:03d}.parquet",
                f"videos/chunk-{chunk:03d}/gripper_rgb/episode-{file:03d}.mp4",
                f"videos/chunk-{chunk:03d}/gripper_depth/episode-{file:03d}.mp4",
                "meta/info.json", "meta/stats.json", "meta/tasks.jsonl"])
            with zipfile.ZipFile(server.zip_of(e.session_id)) as zf:
                assert {i.compress_type for i in zf.infolist()} == {zipfile.ZIP_STORED}
        # the queue is a dotfile in the recordings root, slices are gone once sent
        assert (root / QUEUE_FILE).is_file()
        assert not any((root / ".egorec-upload").glob("*.zip"))


def test_dropped_connections_and_500s_are_retried_and_land_once(task_root: Path, tmp_path: Path) -> None:
    root = copy_root(task_root, tmp_path)
    with upload_server(tmp_path / "server") as server:
        server.faults("drop", "500", "drop", "500")
        entries = send(root, server.url, [1, 1000])
        assert [e.state for e in entries] == [DONE, DONE]
        assert entries[0].attempts + entries[1].attempts == 6     # four faults, two successes
        assert_once_each(server, root / "pick_cup", [1, 1000])


def test_a_server_that_stores_but_never_answers_gets_no_duplicate(task_root: Path, tmp_path: Path) -> None:
    root = copy_root(task_root, tmp_path)
    with upload_server(tmp_path / "server") as server:
        server.faults("silent", "slow:0.5", "silent")
        entries = send(root, server.url, [1, 999, 1001])
        assert [e.state for e in entries] == [DONE, DONE, DONE]
        # the silent ones were sent once: the retry found their session on the server instead
        assert [e.attempts for e in entries] == [1, 1, 1]
        assert_once_each(server, root / "pick_cup", [1, 999, 1001])
        with UploadQueue(root) as queue:
            assert {e.session_id for e in queue.entries()} == {r["id"] for r in server.received()}


def test_a_server_that_keeps_failing_leaves_the_episode_failed_then_a_rerun_sends_it(task_root: Path,
                                                                                      tmp_path: Path) -> None:
    root = copy_root(task_root, tmp_path)
    with upload_server(tmp_path / "server") as server:
        server.faults("500", "500", "500")
        (entry,) = send(root, server.url, [1], max_attempts=3)
        assert (entry.state, entry.attempts) == (FAILED, 3)
        assert "HTTP 500" in entry.last_error
        (entry,) = send(root, server.url, [1])              # queued again: pending, and it goes
        assert entry.state == DONE
        assert_once_each(server, root / "pick_cup", [1])


def test_an_episode_deleted_before_its_turn_is_never_sent(task_root: Path, tmp_path: Path) -> None:
    from egorec_ros.store import TaskWriter

    root = copy_root(task_root, tmp_path)
    with upload_server(tmp_path / "server") as server:
        up = Uploader(root, UploadSettings(server=server.url, **FAST))
        try:
            up.enqueue("pick_cup", 999)
            with TaskWriter(root / "pick_cup") as writer:
                writer.delete(999)
            (entry,) = up.run()
        finally:
            up.close()
        assert entry.state == GONE and "not there" in entry.last_error
        assert server.received() == []


def test_an_episode_deleted_between_a_failed_attempt_and_the_retry_is_not_sent(task_root: Path, tmp_path: Path) -> None:
    from egorec_ros.store import TaskWriter

    root = copy_root(task_root, tmp_path)
    with upload_server(tmp_path / "server") as server:
        server.faults("500")
        up = Uploader(root, UploadSettings(server=server.url, **FAST))
        try:
            entry = up.process(up.enqueue("pick_cup", 1000))         # the slice is built, the POST fails
            assert entry.state == "pending" and Path(entry.slice).is_file()
            with TaskWriter(root / "pick_cup") as writer:
                writer.delete(1000)
            (entry,) = up.run()
        finally:
            up.close()
        assert entry.state == GONE and "deleted before it was sent" in entry.last_error
        assert server.received() == [] and not Path(entry.slice).exists()
