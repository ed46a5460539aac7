"""The console serves nothing outside the task folder (``../``, ``%2e%2e``, double-encoded, absolute,
symlinks out), videos with HTTP Range, and refuses state changes without the token (and everything
without it when listening beyond loopback). Real files, the real app over a real DDS transport."""
from __future__ import annotations


import pytest
from starlette.testclient import TestClient

from egorec_ros.console.app import TOKEN_HEADER, ConsoleState, build_app
from egorec_ros.console.link import RecorderLink
from egorec_ros.console.paths import PathRefused, task_file
from egorec_ros.console.server import is_loopback
from egorec_ros.transport.dds import DdsTransport
from egorec_ros.transport.dds.loopback import loopback_env
from helpers.polling import until
from helpers.dds_domains import domain_for

VIDEO = "videos/chunk-000/cam/episode-000.mp4"


@pytest.fixture
def out(tmp_path):
    video = tmp_path / "out" / "t" / VIDEO
    video.parent.mkdir(parents=True)
    video.write_bytes(bytes(range(256)) * 40)
    (tmp_path / "out" / "secret.mp4").write_bytes(b"secret")
    (tmp_path / "out" / "t" / "meta").mkdir()
    (tmp_path / "out" / "t" / "meta" / "info.json").write_text("{}")
    (tmp_path / "out" / "t" / "videos" / "escape.mp4").symlink_to(tmp_path / "out" / "secret.mp4")
    return tmp_path / "out"


@pytest.fixture
def transport(monkeypatch):
    for k, v in loopback_env(domain_for(__name__)).items():
        monkeypatch.setenv(k, v)
    with DdsTransport() as t:
        yield t


BAD = ["../secret.mp4", "%2e%2e/secret.mp4", "%252e%252e/secret.mp4", "..%2fsecret.mp4", "..%252fsecret.mp4",
       "/etc/passwd", "videos/escape.mp4", "meta/info.json", "videos/../../secret.mp4", ""]


@pytest.mark.parametrize("relative", BAD)
def test_task_file_refuses_paths_outside_the_task(out, relative):
    with pytest.raises(PathRefused):
        task_file(out / "t", relative)


def test_task_file_gives_a_video_inside(out):
    assert task_file(out / "t", VIDEO) == (out / "t" / VIDEO).resolve()


def test_app_paths_range_and_token(out, transport):
    link = RecorderLink(transport, "nobody_here")
    try:
        client = TestClient(build_app(ConsoleState(link, out, "s3cret", open_reads=True)))
        ok = client.get(f"/files/{VIDEO}?task=t", headers={"Range": "bytes=100-199"})
        assert ok.status_code == 206 and ok.content == (bytes(range(256)) * 40)[100:200]
        for bad in BAD[:5] + ["videos/escape.mp4"]:
            assert client.get(f"/files/{bad}?task=t").status_code == 404, bad
        assert client.get(f"/files/{VIDEO}?task=..").status_code == 404
        assert client.get("/static/../app.py").status_code == 404
        assert client.post("/api/start", json={}).status_code == 403
        assert client.post("/api/delete", json={"episode_index": 1}, headers={TOKEN_HEADER: "wrong"}).status_code == 403
        page = client.get("/")
        assert page.status_code == 200 and "s3cret" not in page.text and "http" not in page.text.split("<body>")[1]
        closed = TestClient(build_app(ConsoleState(link, out, "s3cret", open_reads=False)))
        assert closed.get(f"/files/{VIDEO}?task=t").status_code == 403
        assert closed.get(f"/files/{VIDEO}?task=t&token=s3cret").status_code == 200
        assert closed.get("/").status_code == 200       # the page itself; it asks for the token
    finally:
        link.close()


def test_loopback_detection():
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.5")


def test_live_topics_only_while_a_page_listens(transport):
    """Preview, glove and force topics are subscribed only while a page has the live events open
    (no preview encoded, no sensor stream taken for a console nobody watches)."""
    import threading
    import time

    from egorec_ros.messages.payloads.stamps import header_message
    from egorec_ros.messages.typestores import ros2_typestore
    from egorec_ros.transport.base import SENSOR_DATA

    store, wrench = ros2_typestore(), "geometry_msgs/msg/WrenchStamped"
    vec = store.types["geometry_msgs/msg/Vector3"]
    pub = transport.publisher("/gripper_9/left_force", wrench, SENSOR_DATA)
    stop = threading.Event()

    def publish() -> None:
        while not stop.wait(0.02):
            msg = store.types[wrench](header=header_message(store, time.time_ns(), "g"), wrench=store.types[
                "geometry_msgs/msg/Wrench"](force=vec(x=3.0, y=4.0, z=0.0), torque=vec(x=0.0, y=0.0, z=0.0)))
            pub.publish(bytes(store.serialize_cdr(msg, wrench)))

    def sensors() -> dict:
        return link.snapshot()["sensors"]

    thread = threading.Thread(target=publish, daemon=True)
    thread.start()
    link = RecorderLink(transport, "nobody_here")
    try:
        assert not until(sensors, 2.5), "a force topic was taken while no page listens"
        link.listening(True)
        assert until(lambda: sensors().get("/gripper_9/left_force", {}).get("values") == [3.0, 4.0, 0.0], 10), sensors()
        link.listening(False)
        assert until(lambda: not sensors(), 5), "the force topic was kept after the last page left"
        assert not until(sensors, 1.5), "a force message came after unsubscribing"
    finally:
        stop.set()
        thread.join(timeout=5)
        link.close()
