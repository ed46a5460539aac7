"""Cost of the device driver cores: CPU per second of device data at its real rate
(decode + build the ROS message), and the publish latency (device stamp -> message
ready) of the S80 pipe and the camera IPC at 1280x800 MJPEG 30 fps through their real
transports (a subprocess pipe, a Unix socket).

    .venv/bin/python bench/bench_drivers.py [--seconds S]

CPU figures are process CPU time per second of data (ms/s = thousandths of a core), without and
with serializing + publishing each message over DDS to a subscriber process (what `egorec drivers` adds),
measured by feeding pre-built device bytes to each decoder as fast as it takes them.
"""
from __future__ import annotations

import argparse
import os
import socket
import sys
import tempfile
import threading
import time
from fractions import Fraction
from pathlib import Path

import av
import numpy as np

from egorec_ros.drivers import clock
from egorec_ros.drivers.ble_glove import BleGloveDecoder
from egorec_ros.drivers.ble_glove_protocol import encode_frame as ble_frame
from egorec_ros.drivers.camera_ipc import CameraIpc, CameraIpcConfig, CameraIpcDecoder, encode_frame as ipc_frame
from egorec_ros.drivers.gripper import Gripper, GripperConfig
from egorec_ros.drivers.health import Health
from egorec_ros.drivers.s80 import S80, S80Config, S80Decoder, S80Topics
from egorec_ros.drivers.s80_protocol import encode_record
from egorec_ros.drivers.slam_bridge import SlamConfig, SlamLineDecoder
from egorec_ros.drivers.tactile import TactileForces, TactileTopics
from egorec_ros.drivers.usb_glove import UsbGloveDecoder
from egorec_ros.drivers.usb_glove_protocol import encode_adc, encode_frame as usb_frame, encode_imu
from egorec_ros.drivers.uvc import Uvc, UvcConfig
from egorec_ros.messages.typestores import ros2_typestore

W, H = 1280, 800
TOPICS = S80Topics("/l", "/r", "/imu", "/d")


def drop(topic: str, msg: object) -> None:
    """The publish callback of the CPU runs: messages are built, then dropped."""


def textured_jpeg(k: int, size=(W, H)) -> bytes:
    """A camera-like 1280x800 JPEG (noise + gradients: ~100-200 KB, like a real MJPEG frame)."""
    rng = np.random.default_rng(k)
    y, x = np.mgrid[0:size[1], 0:size[0]]
    rgb = np.stack([(x + k * 7) % 256, (y + k * 3) % 256, (x ^ y) % 256], -1).astype(np.uint8)
    rgb = np.clip(rgb.astype(np.int16) + rng.integers(-20, 20, rgb.shape), 0, 255).astype(np.uint8)
    ctx = av.CodecContext.create("mjpeg", "w")
    ctx.width, ctx.height, ctx.pix_fmt, ctx.time_base = size[0], size[1], "yuvj422p", Fraction(1, 30)
    frame = av.VideoFrame.from_ndarray(rgb, format="rgb24").reformat(format="yuvj422p")
    return b"".join(bytes(p) for p in ctx.encode(frame) + ctx.encode(None))


def cpu_per_second(feed, chunks: list, seconds: float) -> float:
    """ms of process CPU per second of device data."""
    t0 = time.process_time()
    for chunk in chunks:
        feed(chunk)
    return (time.process_time() - t0) * 1e3 / seconds


def split(data: bytes, size: int) -> list[bytes]:
    return [data[k:k + size] for k in range(0, len(data), size)]


def cpu_rows(seconds: int, jpegs: list[bytes], drop=drop) -> list[tuple[str, str, float]]:
    now = clock.now_ns()
    rows = []

    usb = UsbGloveDecoder("/g", Health("usb"), drop)
    q = np.tile([16384, 0, 0, 0], (16, 1))
    frames = b"".join(usb_frame(2, k, k * 16_667, encode_imu(q), 0xFFFF)
                      + usb_frame(3, k, k * 16_667 + 50, encode_adc(np.full(256, k % 4096)))
                      for k in range(60 * seconds))
    rows.append(("USB glove", "60 Hz IMU + 60 Hz ADC, 64-byte USB reads",
                 cpu_per_second(lambda c: usb.feed(c, now), split(frames, 64), seconds)))

    ble = BleGloveDecoder("/g", Health("ble"), drop)
    frames = b"".join(ble_frame(np.full(256, k)) for k in range(60 * seconds))
    rows.append(("BLE glove", "60 Hz, 244-byte notifications",
                 cpu_per_second(lambda c: ble.feed(c, now), split(frames, 244), seconds)))

    gripper = Gripper(GripperConfig("/dev/null", "", "/s"), drop)
    gripper.health.connected()
    lines = [f"STATE ST=1 PCT={50 + k % 10}.5 GRIP=0 RAW={k % 16384}" for k in range(100 * seconds)]
    rows.append(("UMI gripper board", "100 Hz STATE lines",
                 cpu_per_second(lambda line: gripper.line(line, now), lines, seconds)))

    tactile = TactileForces(TactileTopics("/lf", "/rf", "/lm", "/rm"), drop)
    matrix = np.random.default_rng(0).random((250, 250, 3), dtype=np.float32)
    readings = [(side, np.array([0, 0, k], np.float32), matrix if k % 10 < 3 else None)
                for k in range(100 * seconds) for side in ("left", "right")]
    rows.append(("tactile forces", "2 x 100 Hz wrench + 2 x 30 Hz 250x250x3 matrix",
                 cpu_per_second(lambda r: tactile.reading(r[0], r[1], r[2], now), readings, seconds)))

    slam = SlamLineDecoder(SlamConfig(["x"], "/slam", "ego_cam_optical"), Health("slam"), drop)
    lines = [f"[{100 + k / 30:.6f}] XYZ:({k * 0.001:.6f},0.5,-0.25) Quat:(w=1,x=0,y=0,z=0) Host:({now + k})"
             for k in range(30 * seconds)]
    rows.append(("SLAM bridge", "30 Hz pose lines", cpu_per_second(lambda line: slam.line(line, now), lines, seconds)))

    for with_depth in (False, True):
        s80 = S80Decoder(S80Config(["x"], TOPICS, with_depth=with_depth), Health("s80"), drop)
        depth = np.random.default_rng(1).integers(300, 5000, (H, W)).astype(np.uint16)
        records = [encode_record(k * 20_000_000, jpegs[k % len(jpegs)], k * 20_000_000 + 1000,
                                 jpegs[(k + 1) % len(jpegs)],
                                 np.column_stack([k * 20_000_000 + np.arange(4) * 5_000_000, np.ones((4, 6))]),
                                 depth=(k * 20_000_000, depth) if with_depth else None)
                   for k in range(50 * seconds)]
        chunks = [c for r in records for c in split(r, 1 << 16)]
        rows.append(("S80 pipe" + (" + depth" if with_depth else ""),
                     f"50 fps in (2 x {W}x{H} JPEG{' + depth' if with_depth else ''}, 200 Hz IMU) -> 30 out",
                     cpu_per_second(lambda c, s80=s80: s80.feed(c, now), chunks, seconds)))

    ipc = CameraIpcDecoder("/cam", Health("ipc"), drop)
    frames = [ipc_frame(k, W, H, jpegs[k % len(jpegs)], now) for k in range(30 * seconds)]
    rows.append(("camera IPC", f"30 fps {W}x{H} MJPEG, 64 KB socket reads",
                 cpu_per_second(lambda c: ipc.feed(c, now), [c for f in frames for c in split(f, 1 << 16)], seconds)))

    rows.append(("UVC (PyAV, MJPEG file)", f"30 fps {W}x{H} MJPEG passed through", uvc_cpu(seconds, jpegs, drop)))
    return rows


def uvc_cpu(seconds: int, jpegs: list[bytes], then=drop) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "cam.mkv"
        with av.open(str(path), "w") as out:
            stream = out.add_stream("mjpeg", rate=30)
            stream.width, stream.height, stream.time_base, stream.pix_fmt = W, H, Fraction(1, 30), "yuvj422p"
            for k in range(30 * seconds):
                packet = av.Packet(jpegs[k % len(jpegs)])
                packet.stream, packet.pts, packet.dts, packet.time_base = stream, k, k, Fraction(1, 30)
                out.mux(packet)
        count = [0]
        done = threading.Event()

        def publish(topic: str, msg: object) -> None:
            then(topic, msg)
            count[0] += 1
            if count[0] == 30 * seconds:
                done.set()
        driver = Uvc(UvcConfig(str(path), "/cam", input_format=None), publish)
        t0 = time.process_time()
        driver.start()
        done.wait(60)
        ms = (time.process_time() - t0) * 1e3 / seconds
        driver.stop()
        return ms


# ---- publishing over DDS (what `egorec drivers` adds) ------------------------------------------

BENCH_TOPICS = {"/g": "egorec_ros/msg/GloveFrame", "/s": "egorec_ros/msg/GripperState",
                "/lf": "geometry_msgs/msg/WrenchStamped", "/rf": "geometry_msgs/msg/WrenchStamped",
                "/lm": "egorec_ros/msg/ForceMatrix", "/rm": "egorec_ros/msg/ForceMatrix",
                "/slam": "egorec_ros/msg/SlamPose", "/l": "sensor_msgs/msg/CompressedImage",
                "/r": "sensor_msgs/msg/CompressedImage", "/imu": "sensor_msgs/msg/Imu", "/d": "sensor_msgs/msg/Image",
                "/cam": "sensor_msgs/msg/CompressedImage"}


def subscriber(seconds: float) -> None:
    """Another process reading every bench topic (as the recorder would), so DDS really sends."""
    from egorec_ros.transport.base import RECORDER
    from egorec_ros.transport.dds import DdsTransport

    import signal

    got = [0]
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    with DdsTransport() as transport:
        for topic, msgtype in BENCH_TOPICS.items():
            transport.subscribe(topic, msgtype, RECORDER, lambda cdr, t: got.__setitem__(0, got[0] + 1))
        try:
            time.sleep(seconds)
        except KeyboardInterrupt:
            pass
    print(got[0], flush=True)


def dds_rows(seconds: int, jpegs: list[bytes]) -> tuple[list[tuple[str, str, float]], str]:
    """cpu_rows with each message serialized and published over DDS to a subscriber process."""
    import subprocess

    from egorec_ros.live.driver_publish import TransportPublish
    from egorec_ros.transport.dds import DdsTransport
    from egorec_ros.transport.dds.loopback import loopback_env

    os.environ.update(loopback_env(90 + os.getpid() % 10))
    sub = subprocess.Popen([sys.executable, __file__, "--subscriber", str(60 * seconds)], stdout=subprocess.PIPE,
                           text=True)
    try:
        with DdsTransport() as transport:
            publish = TransportPublish(transport)
            for topic, msgtype in BENCH_TOPICS.items():      # publishers made and matched before measuring
                publish.publisher(topic, msgtype)
            time.sleep(3.0)
            rows = cpu_rows(seconds, jpegs, publish)
    finally:
        sub.terminate()
        out, _ = sub.communicate(timeout=30)
    return rows, out.strip()


# ---- latency through the real transports ------------------------------------------------------

def latency_stats(lat_ns: list[int]) -> tuple[float, float, int]:
    a = np.array(lat_ns) / 1e6
    return float(np.percentile(a, 50)), float(np.percentile(a, 99)), len(a)


def ipc_latency(seconds: float, jpegs: list[bytes]) -> tuple[float, float, int]:
    lat: list[int] = []
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "cam.sock")
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(path)
        server.listen(1)
        driver = CameraIpc(CameraIpcConfig(path, "/cam"),
                           lambda t, m: lat.append(clock.now_ns() - (m.header.stamp.sec * 10**9 + m.header.stamp.nanosec)))
        driver.start()
        conn, _ = server.accept()
        start = time.monotonic()
        for k in range(int(30 * seconds)):
            delay = start + k / 30 - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            conn.sendall(ipc_frame(k, W, H, jpegs[k % len(jpegs)], clock.now_ns()))   # stamped at "capture"
        time.sleep(0.2)
        driver.stop()
        conn.close()
        server.close()
    return latency_stats(lat)


def s80_writer(seconds: float, jpeg_dir: str) -> None:
    """Subprocess side: the SDK writing 50 fps records stamped with CLOCK_MONOTONIC at capture."""
    jpegs = [p.read_bytes() for p in sorted(Path(jpeg_dir).glob("*.jpg"))]
    out = sys.stdout.buffer
    start = time.monotonic()
    for k in range(int(50 * seconds)):
        delay = start + k / 50 - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        ts = time.monotonic_ns()
        imu = np.column_stack([ts - 15_000_000 + np.arange(4) * 5_000_000, np.ones((4, 6))])
        out.write(encode_record(ts, jpegs[k % len(jpegs)], ts, jpegs[(k + 1) % len(jpegs)], imu))
        out.flush()


def s80_latency(seconds: float, jpegs: list[bytes]) -> tuple[float, float, int]:
    lat: list[int] = []
    with tempfile.TemporaryDirectory() as tmp:
        for k, j in enumerate(jpegs):
            Path(tmp, f"{k:03d}.jpg").write_bytes(j)

        def publish(topic: str, msg: object) -> None:
            if topic == "/l":
                lat.append(clock.now_ns() - (msg.header.stamp.sec * 10**9 + msg.header.stamp.nanosec))
        command = [sys.executable, __file__, "--s80-writer", str(seconds), tmp]
        driver = S80(S80Config(command, S80Topics("/l", "/r", "/imu")), publish)
        driver.start()
        deadline = time.monotonic() + seconds + 10
        while driver.health.published == 0 or (driver.health.status == "ok" and time.monotonic() < deadline
                                               and driver.decoder.kept + driver.decoder.dropped < int(50 * seconds)):
            time.sleep(0.05)
        driver.stop()
    return latency_stats(lat)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=int, default=3, help="seconds of device data per driver")
    parser.add_argument("--s80-writer", nargs=2, help=argparse.SUPPRESS)
    parser.add_argument("--subscriber", type=float, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.subscriber:
        subscriber(args.subscriber)
        return
    if args.s80_writer:
        s80_writer(float(args.s80_writer[0]), args.s80_writer[1])
        return
    print(f"load average {os.getloadavg()}, {os.cpu_count()} CPUs")
    ros2_typestore()                     # built once per process: not a per-message cost
    jpegs = [textured_jpeg(k) for k in range(8)]
    print(f"JPEG {W}x{H}: {np.mean([len(j) for j in jpegs]) / 1024:.0f} KB on average")
    print(f"\nCPU per second of device data ({args.seconds} s of data each)")
    print(f"{'driver':<24} {'device data':<62} {'ms CPU/s':>9} {'% core':>7}")
    plain = cpu_rows(args.seconds, jpegs)
    for name, what, ms in plain:
        print(f"{name:<24} {what:<62} {ms:>9.1f} {ms / 10:>6.1f}%")
    with_dds, received = dds_rows(args.seconds, jpegs)
    print("\nthe same, each message also serialized (CDR) and published over DDS to a subscriber process"
          f" (egorec drivers; the subscriber got {received} messages)")
    print(f"{'driver':<24} {'ms CPU/s':>9} {'% core':>7} {'x of decode only':>17}")
    for (name, _, ms), (_, _, base) in zip(with_dds, plain):
        print(f"{name:<24} {ms:>9.1f} {ms / 10:>6.1f}% {ms / max(base, 1e-3):>16.1f}x")
    print(f"\npublish latency, device stamp -> message ready ({W}x{H} MJPEG, {args.seconds} s, real transport)")
    for name, fn in (("camera IPC (Unix socket, 30 fps)", ipc_latency), ("S80 pipe (subprocess, 50 -> 30 fps)", s80_latency)):
        p50, p99, n = fn(args.seconds, jpegs)
        print(f"{name:<40} p50 {p50:6.2f} ms   p99 {p99:6.2f} ms   ({n} frames)")


if __name__ == "__main__":
    main()
