"""UMI gripper control board driver end to end through a pty: a simulated board answers
the handshake and the commands with the exact replies, the test writes STATE lines (good,
malformed, out of range, not text); the grip latch rule, the tactile forces and the
output recorded into a task that validates."""
from __future__ import annotations


import numpy as np
import pytest

from helpers.drivers import Published, PtyDevice, record, rig_with_camera, wait_for
from helpers.gripper_board import KEY, REPLIES, SERIAL, SimBoard
from egorec_ros.drivers.gripper import Gripper, GripperConfig
from egorec_ros.drivers.gripper_protocol import GripLatch, State
from egorec_ros.drivers.health import DISCONNECTED, OK
from egorec_ros.drivers.tactile import TactileForces, TactileTopics

STATE_TOPIC = "/gripper_1/state"


@pytest.fixture
def board(tmp_path):
    device = PtyDevice(tmp_path / "usb-Espressif_gripper-if00")
    sim = SimBoard(device)
    published = Published()
    tactile = TactileForces(TactileTopics("/gripper_1/left_force", "/gripper_1/right_force",
                                          "/gripper_1/left_force_matrix", "/gripper_1/right_force_matrix"), published)
    gripper = Gripper(GripperConfig(str(device.link), KEY, STATE_TOPIC), published, tactile).start()
    wait_for(lambda: gripper.health.status == OK, "the handshake and QF")
    yield device, sim, gripper, tactile, published
    gripper.stop()
    device.close()


def state_line(st: int, pct: float, grip: int = 0, raw: int = 1000) -> bytes:
    return f"STATE ST={st} PCT={pct} GRIP={grip} RAW={raw}\r\n".encode()


def test_handshake_identity_and_commands(board):
    _, sim, gripper, _, _ = board
    assert sim.received[0] == "?" and "QF" in sim.received
    assert gripper.serial == SERIAL
    for name in ("C", "I", "F", "S", "E", "R", "G"):
        assert gripper.command(name) == REPLIES[name]
    with pytest.raises(ValueError, match="unknown gripper command"):
        gripper.command("X")


def test_state_lines_latch_and_forces(board):
    device, _, gripper, tactile, published = board
    readings = [  # (st, pct, fz_left, fz_right) -> latched
        (0, 80.0, 0, 0, 0), (1, 60.5, 350, 100, 1), (0, 50.0, 0, 0, 1),      # latched by ST=1 and fz >= 300
        (0, 19.0, 0, 0, 1), (0, 18.0, 0, 0, 1), (0, 17.0, 0, 0, 0),          # released after 3 readings PCT < 20
        (2, 30.0, 100, 299.9, 0), (2, 30.0, 100, 300.0, 1),                  # ST=2 at exactly 300 mN
        (3, 30.0, 900, 900, 1), (0, 10.0, 0, 0, 1), (0, 50.0, 0, 0, 1),      # a high PCT restarts the count
        (0, 10.0, 0, 0, 1), (0, 10.0, 0, 0, 1), (0, 10.0, 0, 0, 0)]
    for k, (st, pct, fl, fr, _) in enumerate(readings):
        tactile.reading("left", [1.0, 2.0, fl])
        tactile.reading("right", [0.0, 0.0, fr])
        device.write(state_line(st, pct))
        wait_for(lambda k=k: len(published.on(STATE_TOPIC)) == k + 1, f"state {k}")
    states = published.on(STATE_TOPIC)
    assert states[0].__msgtype__ == "egorec_ros/msg/GripperState"
    got = [(float(m.open_pct), float(m.gripped), float(m.fz_mn)) for m in states]
    want = [(float(np.float32(pct)), float(lat), float(np.float32(max(fl, fr)))) for _, pct, fl, fr, lat in readings]
    assert got == want
    left = published.on("/gripper_1/left_force")[1]
    assert (left.wrench.force.x, left.wrench.force.y, left.wrench.force.z) == (0.001, 0.002, 0.35)


def test_bad_lines_are_counted_and_skipped(board):
    device, _, gripper, _, published = board
    device.write(b"STATE ST=1 GRIP=0\r\n"                # no PCT
                 + b"STATE ST=1 PCT=250 GRIP=0 RAW=1\r\n"  # out of range
                 + b"STATE ST=1 PCT=-20 GRIP=0 RAW=1\r\n"
                 + b"\xff\xfe garbage\r\n"                 # not text
                 + b"HELLO\r\n"                            # unknown line
                 + b"OK START\r\n"                         # a reply nobody asked for
                 + b"STA" + b"TE ST=0 PCT=42.5 GRIP=0 RAW=7\r\n")
    wait_for(lambda: len(published.on(STATE_TOPIC)) == 1, "the good line")
    assert published.on(STATE_TOPIC)[0].open_pct == np.float32(42.5)
    bad = gripper.health.bad
    assert (bad["state_malformed"], bad["out_of_range"], bad["not_text"], bad["line_unknown"],
            bad["unexpected_reply"]) == (1, 2, 1, 1, 1)


def test_a_board_the_rig_does_not_name_is_reported_not_used(tmp_path):
    device = PtyDevice(tmp_path / "other")
    SimBoard(device, serial="68:EE:8F:C6:0D:BC")
    published = Published()
    gripper = Gripper(GripperConfig(str(device.link), KEY, STATE_TOPIC), published).start()
    try:
        wait_for(lambda: gripper.serial, "QF")
        wait_for(lambda: "the rig names" in gripper.health.detail, "the report")
        device.write(state_line(0, 50.0))
        assert gripper.health.status == DISCONNECTED and published.count() == 0
        assert "gripper:68:EE:8F:C6:0D:BC" in gripper.health.detail
    finally:
        gripper.stop()
        device.close()


def test_unplug_and_replug(board):
    device, _, gripper, _, published = board
    device.unplug()
    wait_for(lambda: gripper.health.status == DISCONNECTED, "disconnected")
    device.plug()
    SimBoard(device)
    wait_for(lambda: gripper.health.status == OK, "the second handshake")
    device.write(state_line(0, 55.0))
    wait_for(lambda: len(published.on(STATE_TOPIC)) == 1, "a state after the replug")
    assert gripper.health.reconnects == 1


def test_latch_rule_alone():
    latch = GripLatch()
    assert not latch.update(State(0, 10.0, 0, 0), 1000.0), "ST 0 never latches"
    assert latch.update(State(1, 10.0, 0, 0), 300.0)


def test_recorded_gripper_output_makes_a_valid_task(board, tmp_path):
    device, _, _, tactile, published = board
    rng = np.random.default_rng(3)
    for k in range(20):
        matrix = rng.random((250, 250, 3), dtype=np.float32) * 100
        tactile.reading("left", [0.0, 0.0, 20.0 * k], matrix)
        tactile.reading("right", [0.0, 0.0, 5.0 * k])
        device.write(state_line(1, 50.0 - k))
        wait_for(lambda k=k: len(published.on(STATE_TOPIC)) == k + 1, "a state")
    rig = rig_with_camera("drivers_gripper_rig")
    task, result = record(tmp_path, rig, published.items, camera="gripper.rgb")
    from egorec_ros.dataset.task import open_task
    episode = open_task(task).episode(result.number.index)
    state = episode.read(["observation.gripper_state"]).to_pydict()["observation.gripper_state"]
    assert any(len(s) == 3 and s[1] == 1.0 for s in state), "latched from k = 15 (fz 300 mN)"
