"""The DDS transport announces each endpoint's ROS type hash (REP 2011) in USER_DATA as
rmw_cyclonedds_cpp does from Jazzy on (``typehash=RIHS01_...;``). Without it every Jazzy ``ros2``
command and node that discovered the DDS recorder warned "Failed to parse type hash ... from
USER_DATA '(null)'" once per endpoint, and ``ros2 topic info -v`` said "Topic type hash: INVALID".
Real Cyclone DDS on loopback; the second test runs the ``ros2`` CLI when a ROS 2 is sourced."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from cyclonedds.builtin import BuiltinDataReader, BuiltinTopicDcpsPublication, BuiltinTopicDcpsSubscription
from cyclonedds.domain import DomainParticipant
from cyclonedds.qos import Policy

from egorec_ros.messages.typestores import ros2_typestore
from egorec_ros.transport.base import DEFAULT
from egorec_ros.transport.dds import DdsTransport
from egorec_ros.transport.dds.loopback import loopback_env
from helpers.dds_domains import domain_for

# sensor_msgs/msg/CompressedImage as Jazzy's rosidl generates it (share/sensor_msgs/msg/CompressedImage.json)
JAZZY_COMPRESSED_IMAGE = "RIHS01_15640771531571185e2efc8a100baf923961a4d15d5569652e6cb6691e8e371a"


@pytest.fixture
def env(monkeypatch) -> dict[str, str]:
    for k, v in loopback_env(domain_for(__name__)).items():
        monkeypatch.setenv(k, v)
    return dict(os.environ)


def _user_data(participant: DomainParticipant, timeout: float = 10.0) -> dict[str, bytes]:
    """{DDS topic name: USER_DATA} of every endpoint discovered within ``timeout``, once 4 are seen."""
    found: dict[str, bytes] = {}
    end = time.monotonic() + timeout
    readers = [BuiltinDataReader(participant, kind) for kind in (BuiltinTopicDcpsPublication,
                                                                 BuiltinTopicDcpsSubscription)]
    while time.monotonic() < end and len(found) < 4:
        for reader in readers:
            for ep in reader.read(N=200):
                if ep.topic_name.startswith(("rt/", "rq/", "rr/")):
                    found[ep.topic_name] = ep.qos[Policy.Userdata].data if Policy.Userdata in ep.qos else b""
        time.sleep(0.1)
    return found


def test_endpoints_carry_the_ros_type_hash(env):
    store = ros2_typestore()
    with DdsTransport() as tr:
        pub = tr.publisher("/th/preview", "sensor_msgs/msg/CompressedImage", DEFAULT)
        tr.subscribe("/th/status", "egorec_ros/msg/RecorderStatus", DEFAULT, lambda _c, _t: None)
        tr.serve("/th/start", "egorec_ros/srv/Start", lambda b: b)
        found = _user_data(DomainParticipant(int(env["ROS_DOMAIN_ID"])))
        del pub
    want = {"rt/th/preview": JAZZY_COMPRESSED_IMAGE,
            "rt/th/status": store.hash_rihs01("egorec_ros/msg/RecorderStatus"),
            "rq/th/startRequest": store.hash_rihs01("egorec_ros/srv/Start_Request"),
            "rr/th/startReply": store.hash_rihs01("egorec_ros/srv/Start_Response")}
    assert found == {k: f"typehash={v};".encode() for k, v in want.items()}


def _installed_hash(ros_type: str) -> str | None:
    """The hash rosidl generated for ``ros_type`` in the sourced ROS 2 (Jazzy on; None on Humble)."""
    pkg, kind, name = ros_type.split("/")
    for prefix in os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep):
        doc = Path(prefix) / "share" / pkg / kind / f"{name}.json"
        if prefix and doc.is_file():
            return next(h["hash_string"] for h in json.loads(doc.read_text())["type_hashes"]
                        if h["type_name"] == ros_type)
    return None


def test_ros2_cli_reads_the_type_hash_without_warnings(env):
    if not os.environ.get("AMENT_PREFIX_PATH") or shutil.which("ros2") is None:
        pytest.skip("no ROS 2 sourced (source /opt/ros/<distro>/setup.bash to check the ros2 CLI)")
    env.update(RMW_IMPLEMENTATION="rmw_cyclonedds_cpp")
    with DdsTransport() as tr:
        pub = tr.publisher("/th/image", "sensor_msgs/msg/Image", DEFAULT)
        tr.serve("/th/stop", "egorec_ros/srv/Stop", lambda b: b)
        out = subprocess.run(["ros2", "topic", "info", "-v", "--no-daemon", "/th/image"], env=env,
                             capture_output=True, text=True, timeout=60)
        del pub
    text = out.stdout + out.stderr
    assert out.returncode == 0, text
    assert "Failed to parse type hash" not in text, text
    installed = _installed_hash("sensor_msgs/msg/Image")
    if installed is None:
        assert "Topic type hash" not in text, "a ROS 2 with type hashes but no type description files?"
        return        # Humble: no type hashes at all; the USER_DATA is ignored
    assert installed == ros2_typestore().hash_rihs01("sensor_msgs/msg/Image")
    assert f"Topic type hash: {installed}" in text, text
