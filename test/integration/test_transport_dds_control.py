"""The recorder node over DDS, in its own process, driven like a user drives it: `egorec ctl`,
a marker topic, a publisher killed and restarted mid-episode, SIGTERM. Loopback only."""
from __future__ import annotations

import json
import signal
import time

import pytest

from egorec_ros.dataset.task import Task
from egorec_ros.messages.typestores import ros2_typestore
from egorec_ros.live.diagnostics import ERROR, OK
from egorec_ros.transport.base import DEFAULT
from egorec_ros.transport.dds import DdsTransport
from egorec_ros.transport.dds.loopback import loopback_env
from helpers.cli import assert_clean, egorec_ok
from helpers.dds_recorder import Watch, dds_env_for, egorec_bg, streams_fresh

RIG, SIZE, NAME, MARKER = "uvc_pair", "320x240", "rec_t8", "/t8/marker"   # light: the machine may be shared
STORE = ros2_typestore()


@pytest.fixture
def dds_env(monkeypatch):
    env = dds_env_for(__name__)
    for k in loopback_env(0):
        monkeypatch.setenv(k, env[k])
    return env


def ctl(env: dict, *args: str) -> str:
    return egorec_ok("ctl", *args, "--name", NAME, env=env, timeout=120)


def test_recorder_node_over_dds(tmp_path, dds_env):
    out = tmp_path / "out"
    publisher = egorec_bg(["sim-devices", "--rig", RIG, "--size", SIZE, "--clean"], dds_env, tmp_path / "pub1.log")
    recorder = egorec_bg(["recorder", "--rig", RIG, "--size", SIZE, "--out", str(out), "--task", "t",
                          "--name", NAME, "--marker", MARKER], dds_env, tmp_path / "rec.log")
    try:
        with DdsTransport() as transport:
            watch = Watch(transport, NAME)
            assert watch.wait(streams_fresh), (tmp_path / "rec.log").read_text()

            # services: start / stop commits; start / abort frees the number; start reuses it
            assert "episode_index 1" in ctl(dds_env, "start", "--instruction", "pick the cup")
            assert watch.wait(lambda s: s.state == "recording" and s.rows > 20)
            assert "rows committed" in ctl(dds_env, "stop")
            assert watch.wait(streams_fresh)
            recorder_entry = watch.diagnostics[-1][1].status[0]     # the kernel's drops on its DDS sockets
            values = {kv.key: kv.value for kv in recorder_entry.values}
            assert int(values["udp_drops"]) >= 0 and int(values["callback_drops"]) >= 0   # both reported
            assert "episode_index 2" in ctl(dds_env, "start")
            time.sleep(1.0)
            assert "discarded" in ctl(dds_env, "abort")
            assert json.loads((out / "t" / "meta" / "recycled_episode.json").read_text())["episode_index"] == 2
            assert watch.wait(streams_fresh)
            assert "episode_index 2" in ctl(dds_env, "start", "--instruction", "place the cup")
            assert watch.wait(lambda s: s.rows > 20)

            # the publisher dies mid-episode: diagnostics say so within 1.5 s
            publisher.kill()
            killed = time.monotonic()
            publisher.wait()
            assert watch.wait(lambda s: all(x.last_sample_age_s > 0.5 for x in s.streams), timeout=10)
            silent_at = watch.first_array(lambda arr: arr.status[1:-1] and all(d.level == ERROR for d in arr.status[1:-1]),
                                                after=killed)   # [0] the recorder, [-1] the live QA alarms
            assert silent_at - killed <= 1.5, f"silence reported after {silent_at - killed:.2f} s"
            # ... and restarting it resumes the streams
            publisher = egorec_bg(["sim-devices", "--rig", RIG, "--size", SIZE, "--clean", "--seed", "1"],
                                  dds_env, tmp_path / "pub2.log")
            assert watch.wait(streams_fresh)
            assert watch.diagnostics[-1][1].status[1].level == OK or watch.wait(streams_fresh)
            assert "rows committed" in ctl(dds_env, "stop")

            # marker topic: the converter's start/stop words
            marker = transport.publisher(MARKER, "std_msgs/msg/String", DEFAULT)
            assert watch.wait(streams_fresh)

            def say(word: str, until) -> bool:
                """Publish the word until the recorder shows it took it (the first one may go out
                before discovery matched the new publisher; repeating a word changes nothing)."""
                cdr = STORE.serialize_cdr(STORE.types["std_msgs/msg/String"](data=word), "std_msgs/msg/String")
                for _ in range(60):
                    marker.publish(cdr)
                    if watch.wait(until, timeout=1.0):
                        return True
                return False

            assert say("START", lambda s: s.state == "recording" and s.episode_index == 3)
            assert watch.wait(lambda s: s.rows > 20)
            assert say("stop", lambda s: s.state == "idle")

            # SIGTERM (as launch sends it) commits the running episode
            assert watch.wait(streams_fresh)
            ctl(dds_env, "start")
            assert watch.wait(lambda s: s.rows > 20)
        recorder.send_signal(signal.SIGTERM)
        assert recorder.wait(timeout=120) == 0, (tmp_path / "rec.log").read_text()
    finally:
        for proc in (publisher, recorder):
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert_clean(out / "t")
    tasks = [json.loads(line)["task"] for line in (out / "t" / "meta" / "tasks.jsonl").read_text().splitlines()]
    assert "pick the cup" in tasks and "place the cup" in tasks
    assert [e.index for e in Task(out / "t").episodes] == [1, 2, 3, 4]
