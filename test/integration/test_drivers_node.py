"""The drivers node end to end, every process real and DDS pinned to loopback: simulated devices
on their real wires (a USB glove and a UMI board on ptys, two capture-service sockets, a SLAM
process printing pose lines) -> `egorec drivers` -> `egorec recorder` -> `egorec ctl start/stop`
-> `egorec validate` clean; the recorded values are the bytes sent, bad frames and an unplug
show on /diagnostics, a replug brings the glove back."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest
import yaml

from egorec_ros.dataset.task import Task
from egorec_ros.live.diagnostics import DIAGNOSTIC_ARRAY
from egorec_ros.messages.typestores import ros2_typestore
from egorec_ros.rig.load import load_rig
from egorec_ros.transport.base import RECORDER
from egorec_ros.transport.dds import DdsTransport
from egorec_ros.transport.dds.loopback import loopback_env
from helpers.camera_service import Service, frame as camera_frame
from helpers.cli import assert_clean, egorec_ok
from helpers.drivers import DATA, PtyDevice, wait_for
from helpers.fake_s80 import jpeg
from helpers.gripper_board import SimBoard
from helpers import ros2
from helpers.usb_glove_wire import adc_payload, frame as glove_frame, imu_payload
from helpers.dds_domains import domain_for

RIG = DATA / "drivers_node_rig.yaml"
NODE = "egorec_drivers"
STORE = ros2_typestore()
FAKE_SLAM = Path(__file__).parents[1] / "helpers" / "fake_slam.py"
PERIOD_S = 1 / 30
QUAT = np.tile([16384, 0, 0, 0], (16, 1))                  # w=1: valid, stored x,y,z,w = 0,0,0,1


@pytest.fixture
def dds_env(monkeypatch):
    """This process and its children on loopback, in a domain of their own (60..89)."""
    for k, v in loopback_env(domain_for(__name__)).items():
        monkeypatch.setenv(k, v)
    return dict(os.environ, PYTHONUNBUFFERED="1")


class Diagnostics:
    """The latest /diagnostics status of each driver: name -> (level, message, values)."""

    def __init__(self, transport: DdsTransport) -> None:
        self.latest: dict[str, tuple[int, str, dict[str, str]]] = {}
        transport.subscribe("/diagnostics", DIAGNOSTIC_ARRAY, RECORDER, self._on)

    def _on(self, cdr: bytes, _t: int) -> None:
        for s in STORE.deserialize_cdr(cdr, DIAGNOSTIC_ARRAY).status:
            if s.name.startswith(f"{NODE}: "):
                self.latest[s.name[len(NODE) + 2:]] = (s.level, s.message, {v.key: v.value for v in s.values})

    def value(self, driver: str, key: str) -> str | None:
        return self.latest.get(driver, (0, "", {}))[2].get(key)


class Devices:
    """Every device of the rig on its wire, fed at 30 Hz by a thread; keeps what was sent."""

    def __init__(self, tmp: Path) -> None:
        self.glove = PtyDevice(tmp / "usb-STMicro_glove-if00")
        self.board_pty = PtyDevice(tmp / "usb-Espressif_board-if00")
        self.board = SimBoard(self.board_pty)
        self.ego, self.grip_cam = Service(tmp / "ego.sock"), Service(tmp / "gripper_cam.sock")
        self.jpegs = [jpeg(k) for k in range(8)]
        self.pressure: list[np.ndarray] = []         # every ADC matrix sent (u16 counts)
        self.pct: list[float] = []                   # every STATE PCT sent
        self.camera_ts: list[int] = []               # every ego frame stamp sent
        self.glove_on = threading.Event()
        self._glove_lock = threading.Lock()          # no glove write half done when it is unplugged
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self.k = 0

    def start(self) -> None:
        self.glove_on.set()
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(PERIOD_S):
            k = self.k = self.k + 1
            ts = time.time_ns()
            self.ego.send(camera_frame(k, self.jpegs[k % 8], ts))
            self.grip_cam.send(camera_frame(k, self.jpegs[(k + 3) % 8], ts))
            self.camera_ts.append(ts)
            pct = float(k % 90) + 0.5
            os.write(self.board_pty.master, f"STATE ST=0 PCT={pct} GRIP=0 RAW={k}\r\n".encode())
            self.pct.append(pct)
            with self._glove_lock:
                if self.glove_on.is_set():
                    self._glove_frame()

    def _glove_frame(self) -> None:
        g = len(self.pressure) + 1                           # the glove numbers each frame type on its own
        counts = (np.arange(256) * 7 + g * 13) % 4096
        us = (time.monotonic_ns() // 1000) & 0xFFFFFFFF             # the glove's µs clock, stamped at capture
        self.glove.write(glove_frame(2, g, us, imu_payload(QUAT), flags=0xFFFF)
                         + glove_frame(3, g, us + 500, adc_payload(counts)))
        self.pressure.append(counts)

    def unplug_glove(self) -> None:
        with self._glove_lock:
            self.glove_on.clear()
            self.glove.unplug()

    def replug_glove(self) -> None:
        """A new pty behind the same link; frames flow again after ``glove_on.set()``."""
        with self._glove_lock:
            self.glove.plug()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()

    def close(self) -> None:
        self.stop()
        for device in (self.glove, self.board_pty, self.ego, self.grip_cam):
            device.close()


def slam_lines(path: Path, n: int) -> list[tuple[float, ...]]:
    """``n`` pose lines 1/30 s apart (printed with pauses); the values each is recorded as."""
    rows, text = [], ["SLAM banner: ORB-SLAM3 (not a pose)"]
    for k in range(n):
        t, x, y, z = 100.0 + k / 30, 0.01 * k, -0.02 * k, 0.5
        text += [f"[{t:.6f}] XYZ:({x:.6f},{y:.6f},{z:.6f}) Quat:(w=1.000000,x=0.000000,y=0.000000,z=0.000000)",
                 f"SLEEP {PERIOD_S:.4f}"]
        rows.append((round(t - 100.0, 6), x, y, z, 0.0, 0.0, 0.0, 1.0))
    path.write_text("\n".join(text) + "\n")
    return rows


def places(devices: Devices, slam_file: Path) -> list[str]:
    return [f"ego=ipc:{devices.ego.path}", f"gripper.rgb=ipc:{devices.grip_cam.path}",
            f"left_glove={devices.glove.link}", f"gripper={devices.board_pty.link}",
            f"ego.slam={sys.executable} {FAKE_SLAM} {slam_file} wait"]


def background(args: list[str], env: dict, log: Path) -> subprocess.Popen:
    """In its own process group: Ctrl-C reaches `ros2 run`'s child too, as in a terminal."""
    return subprocess.Popen(args, env=env, stdout=log.open("w"), stderr=subprocess.STDOUT, start_new_session=True)


def interrupt(proc: subprocess.Popen, log: Path) -> str:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGINT)
    try:
        proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        raise AssertionError(f"{proc.args[:4]} did not stop on Ctrl-C:\n{log.read_text()}") from None
    return log.read_text()


def all_ok(diag: Diagnostics, drivers: tuple[str, ...]) -> bool:
    return all(diag.value(d, "status") == "ok" for d in drivers)


DRIVERS = ("ego.rgb", "ego.slam", "left_glove", "gripper", "gripper.rgb")


def record_and_check(tmp_path: Path, env: dict, drivers_cmd: Callable[[list[str]], list[str]],
                     recorder_cmd: list[str] | None = None) -> None:
    """Run the devices, the drivers node (``drivers_cmd(device places)``) and `egorec recorder`
    (``recorder_cmd=[]``: the drivers command starts a recorder too); record one episode into
    tmp_path/out, unplug and replug the glove, check the episode against the bytes sent."""
    devices = Devices(tmp_path)
    slam_rows = slam_lines(tmp_path / "slam.txt", 600)
    out = tmp_path / "out"
    rec_log, drv_log = tmp_path / "recorder.log", tmp_path / "drivers.log"
    drivers = background(drivers_cmd(places(devices, tmp_path / "slam.txt")), env, drv_log)
    if recorder_cmd is None:
        recorder_cmd = [sys.executable, "-m", "egorec_ros.cli", "recorder", "--rig", str(RIG), "--out", str(out)]
    recorder = background(recorder_cmd, env, rec_log) if recorder_cmd else None
    try:
        with DdsTransport() as transport:
            diag = Diagnostics(transport)
            wait_for(lambda: all_ok(diag, DRIVERS[:2] + DRIVERS[3:]) and diag.value("left_glove", "status") == "ok",
                     "every driver ok on /diagnostics", timeout=60)
            # a glove frame with a CRC error before the stream: dropped, counted, on /diagnostics
            devices.glove.write(glove_frame(3, 0, 0, adc_payload(np.zeros(256)), crc_xor=0x0100))
            devices.start()
            wait_for(lambda: diag.value("left_glove", "bad.crc") == "1", "the CRC error on /diagnostics", timeout=30)
            wait_for(lambda: int(diag.value("left_glove", "published") or 0) > 10, "glove frames published")

            egorec_ok("ctl", "start", "--instruction", "drivers end to end", env=env, timeout=120)
            time.sleep(2.0)
            assert "rows committed" in egorec_ok("ctl", "stop", env=env, timeout=120)

            # unplug the glove: disconnected on /diagnostics; replug: ok again, frames flow again
            devices.unplug_glove()
            wait_for(lambda: diag.value("left_glove", "status") == "disconnected", "disconnected", timeout=30)
            assert diag.latest["left_glove"][0] == 2                            # ERROR
            assert all_ok(diag, ("ego.rgb", "gripper"))                         # the others keep running
            devices.replug_glove()
            wait_for(lambda: diag.value("left_glove", "status") == "ok", "the glove back after replug", timeout=30)
            assert int(diag.value("left_glove", "reconnects")) >= 1
            published = int(diag.value("left_glove", "published"))
            devices.glove_on.set()
            wait_for(lambda: int(diag.value("left_glove", "published")) > published, "frames after replug")
            assert diag.value("left_glove", "bad.seq_gap") is None and diag.value("gripper", "bad.line_unknown") is None
    except AssertionError as exc:      # what the node said and logged, for a failure seen once in CI
        raise AssertionError(f"{exc}\n/diagnostics: {diag.latest}\ndrivers log:\n{drv_log.read_text()[-6000:]}") from exc
    finally:
        devices.stop()
        rec_out = interrupt(recorder, rec_log) if recorder else ""
        drv_out = interrupt(drivers, drv_log)
        devices.close()
    assert recorder is None or recorder.returncode == 0, rec_out
    assert drivers.returncode == 0, drv_out
    # logged when they happen: the CRC error, the unplug, the replug
    assert "left_glove: disconnected (SerialException" in drv_out and "bad frames (crc 1," in drv_out, drv_out
    assert drv_out.count("left_glove: ok (") == 2, drv_out

    task = out / "drivers_node"
    assert_clean(task, env=env)
    (episode,) = Task(task).episodes
    rig = load_rig(RIG)
    cols = {s.id: s.columns for s in rig.streams.values()}
    table = episode.read(["hardware_ns", cols["left_glove.pressure"]["pressure"],
                          cols["left_glove.pressure"]["imu_quat"], cols["gripper.state"]["state"],
                          cols["ego.slam"]["points"]]).to_pydict()
    assert len(episode) >= 30, len(episode)
    # every camera stamp of a row is one the capture service sent, bit-exactly
    assert set(table["hardware_ns"]) <= set(devices.camera_ts)
    # glove matrices: u16 counts sent -> float32 in the episode, exactly, with the IMU of the same
    # frame (a tick whose 1/30 s got no glove frame is a zero row: latest-wins per tick). The feeding
    # thread sends a glove frame with each camera frame: about as many rows have one as camera frames
    # were recorded, however late a loaded machine ran that thread.
    frames = len(set(table["hardware_ns"]))
    sent = {tuple(p.tolist()) for p in devices.pressure}
    glove = [np.asarray(r, np.float32).reshape(-1) for r in table[cols["left_glove.pressure"]["pressure"]]]
    filled = [i for i, r in enumerate(glove) if r.any()]
    assert len(filled) >= 0.5 * frames, f"{len(filled)} rows have a glove frame, {frames} a new camera frame"
    assert all(tuple(int(v) for v in glove[i]) in sent and glove[i].dtype == np.float32 for i in filled)
    for i in filled:
        quat = np.asarray(table[cols["left_glove.pressure"]["imu_quat"]][i], np.float32).reshape(16, 4)
        assert np.array_equal(quat, np.tile(np.float32([0, 0, 0, 1]), (16, 1)))
    # gripper state: [PCT sent, latch 0, fz 0]
    states = [np.asarray(r, np.float32).reshape(-1) for r in table[cols["gripper.state"]["state"]]]
    assert sum(s.any() for s in states) >= 0.5 * frames
    assert all(s[0] in np.float32(devices.pct) and s[1] == 0 and s[2] == 0 for s in states if s.any())
    # SLAM points: (sensor time from the first pose, x, y, z, qx, qy, qz, qw) as printed
    printed = {tuple(np.float64(v).round(6) for v in r) for r in slam_rows}
    points = [p for row in table[cols["ego.slam"]["points"]] for p in np.asarray(row, np.float64).reshape(-1, 8)]
    assert points and all(tuple(p.round(6)) in printed for p in points)


def test_drivers_over_dds_into_the_recorder(tmp_path, dds_env):
    record_and_check(tmp_path, dds_env, lambda devices: [
        sys.executable, "-m", "egorec_ros.cli", "drivers", "--rig", str(RIG), "--no-discover",
        *(arg for place in devices for arg in ("--device", place))])


def test_devices_not_plugged_in_are_reported_on_diagnostics(tmp_path, dds_env):
    """Nothing of appendix_b is plugged in: each device says why on /diagnostics (ERROR) and in the
    log, and the node keeps running; a RealSense-only rig has nothing for it to do."""
    log = tmp_path / "drivers.log"
    drivers = background([sys.executable, "-m", "egorec_ros.cli", "drivers", "--rig", "appendix_b", "--no-discover",
                          "--device", "gripper_a=/nonexistent/tty"], dds_env, log)
    try:
        with DdsTransport() as transport:
            diag = Diagnostics(transport)
            wait_for(lambda: {"left_glove", "ego", "gripper_a"} <= set(diag.latest), "diagnostics", timeout=60)
            level, message, values = diag.latest["left_glove"]
            assert level == 2 and "not plugged in" in message and "left_glove=/dev/ttyACM0" in message
            assert "cmd:" in diag.latest["ego"][1] and "not running" in diag.latest["gripper_a.slam"][1]
            # placed but absent: the driver runs and waits for it (reconnect loop), reported disconnected
            assert diag.latest["gripper_a"][2]["status"] == "disconnected"
    finally:
        out = interrupt(drivers, log)
    assert drivers.returncode == 0 and "right_glove: NOT RUNNING: usb_glove usbglove:364133593535 is not plugged in" in out

    only_realsense = subprocess.run([sys.executable, "-m", "egorec_ros.cli", "drivers", "--rig", "d435_single",
                                     "--no-discover"], env=dds_env, capture_output=True, text=True, timeout=60)
    assert only_realsense.returncode == 0 and "driven by realsense2_camera" in only_realsense.stderr


@pytest.fixture(scope="module")
def ros_env() -> Iterator[dict[str, str]]:
    reason = ros2.missing()
    if reason:
        pytest.skip(reason)
    import tempfile
    with tempfile.TemporaryDirectory() as base:
        env = ros2.sourced_env(ros2.build(Path(base)), domain_for(__name__))
        yield env
        subprocess.run(["ros2", "daemon", "stop"], env=env, capture_output=True, timeout=60)


def test_drivers_node_over_rclpy_into_the_dds_recorder(tmp_path, ros_env, monkeypatch):
    """`ros2 run egorec_ros drivers` (rclpy, rmw_cyclonedds_cpp, parameters from a YAML file)
    publishing into the DDS recorder."""
    for k in ("CYCLONEDDS_URI", "ROS_DOMAIN_ID", "ROS_LOCALHOST_ONLY"):
        monkeypatch.setenv(k, ros_env[k])

    def ros2_run(devices: list[str]) -> list[str]:
        params = tmp_path / "drivers.yaml"
        params.write_text(yaml.safe_dump({"egorec_drivers": {"ros__parameters": {
            "rig": str(RIG), "discover": False, "devices": devices}}}))
        return ["ros2", "run", "egorec_ros", "drivers", "--ros-args", "--params-file", str(params)]

    record_and_check(tmp_path, ros_env, ros2_run)


def test_launch_without_sim_starts_the_drivers_node(tmp_path, ros_env, monkeypatch):
    """`ros2 launch egorec_ros record.launch.py rig:=RIG devices:=…` (no sim): the launch starts the
    drivers node beside the rclpy recorder; the same episode and checks."""
    for k in ("CYCLONEDDS_URI", "ROS_DOMAIN_ID", "ROS_LOCALHOST_ONLY"):
        monkeypatch.setenv(k, ros_env[k])

    def ros2_launch(devices: list[str]) -> list[str]:
        return ["ros2", "launch", "egorec_ros", "record.launch.py", f"rig:={RIG}", f"out:={tmp_path / 'out'}",
                f"devices:={';'.join(devices)}"]

    record_and_check(tmp_path, ros_env, ros2_launch, recorder_cmd=[])


@pytest.mark.parametrize("node, params, says", [
    ("drivers", ["-p", "rig:=no_such_rig"], "no rig file or built-in rig named 'no_such_rig'"),
    ("drivers", ["-p", f"rig:={RIG}", "-p", "devices:=['nobody=/dev/ttyACM0']"], "has no device 'nobody'"),
    ("recorder", ["-p", "rig:=appendix_b", "-p", "size:=big"], "a video size looks like 640x480, got 'big'"),
    ("recorder", [], "parameter `rig` is required"),
])
def test_a_bad_node_parameter_ends_with_its_message(ros_env, node, params, says):
    """`ros2 run` with a parameter the user got wrong: the message and exit status 1, as the
    egorec CLI gives, not a Python traceback."""
    proc = subprocess.run(["ros2", "run", "egorec_ros", node, "--ros-args", *params], env=ros_env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert says in proc.stderr and f"egorec_ros {node}:" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stderr
