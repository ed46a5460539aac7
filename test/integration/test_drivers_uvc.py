"""UVC driver through PyAV with video files standing in for the V4L2 device: MJPEG
packets passed through bit-exactly as CompressedImage, YUYV passed through as Image,
another codec decoded to rgb8; the end of the file is an unplug (reopened); a recorded
valid task."""
from __future__ import annotations

from fractions import Fraction

import av
import numpy as np

from helpers.drivers import Published, record, rig_with_camera, wait_for
from egorec_ros.drivers import clock
from egorec_ros.drivers.health import DISCONNECTED, OK
from egorec_ros.drivers.uvc import Uvc, UvcConfig, packet_host_ns

TOPIC = "/cam/image_raw"
W, H = 64, 48


def write_video(path, codec: str, pix_fmt: str, n: int, container: str | None = None) -> list[np.ndarray]:
    frames = []
    with av.open(str(path), "w", format=container) as out:
        stream = out.add_stream(codec, rate=30)
        stream.width, stream.height, stream.pix_fmt = W, H, pix_fmt
        stream.time_base = Fraction(1, 30)
        for k in range(n):
            rgb = np.zeros((H, W, 3), np.uint8)
            rgb[:, : 2 * k + 1] = (200, 30 + 5 * k, 90)
            frame = av.VideoFrame.from_ndarray(rgb, format="rgb24").reformat(format=pix_fmt)
            frame.pts = k
            frames.append(frame)
            for packet in stream.encode(frame):
                out.mux(packet)
        for packet in stream.encode(None):
            out.mux(packet)
    return frames


def packets_of(path) -> list[bytes]:
    with av.open(str(path)) as f:
        return [bytes(p) for p in f.demux(f.streams.video[0]) if p.size]


def run(config: UvcConfig, n: int) -> tuple[Uvc, Published]:
    published = Published()
    driver = Uvc(config, published).start()
    try:
        wait_for(lambda: published.count() >= n, f"{n} frames")
    finally:
        driver.stop()
    return driver, published


def test_mjpeg_packets_pass_through_bit_exactly(tmp_path):
    path = tmp_path / "cam.mkv"
    write_video(path, "mjpeg", "yuvj420p", 12)
    driver, published = run(UvcConfig(str(path), TOPIC, input_format=None, pace=True), 12)
    msgs = published.on(TOPIC)[:12]
    assert [bytes(m.data) for m in msgs] == packets_of(path)
    assert all(m.format == "jpeg" for m in msgs) and driver.codec == "mjpeg"
    stamps = np.array([m.header.stamp.sec * 10**9 + m.header.stamp.nanosec for m in msgs])
    assert np.all(np.diff(stamps) > 0)


def test_yuyv_passes_through_and_other_codecs_are_decoded(tmp_path):
    raw = tmp_path / "raw.nut"
    frames = write_video(raw, "rawvideo", "yuyv422", 3)
    _, published = run(UvcConfig(str(raw), TOPIC, input_format=None), 3)
    msg = published.on(TOPIC)[0]
    assert (msg.encoding, msg.width, msg.height) == ("yuv422_yuy2", W, H)
    assert bytes(msg.data)[: W * 2 * H] == bytes(frames[0].planes[0])[: W * 2 * H]

    h264 = tmp_path / "h264.mp4"
    write_video(h264, "libx264", "yuv420p", 10)
    _, published = run(UvcConfig(str(h264), TOPIC, input_format=None), 10)
    with av.open(str(h264)) as f:
        want = [fr.to_ndarray(format="rgb24") for fr in f.decode(video=0)]
    msgs = published.on(TOPIC)[:10]
    assert all(m.encoding == "rgb8" for m in msgs)
    assert all(np.array_equal(np.frombuffer(bytes(m.data), np.uint8).reshape(H, W, 3), w) for m, w in zip(msgs, want))


def test_end_of_file_is_an_unplug_and_a_missing_device_is_retried(tmp_path):
    path = tmp_path / "cam.mkv"
    write_video(path, "mjpeg", "yuvj420p", 3)
    statuses = []
    published = Published()
    driver = Uvc(UvcConfig(str(path), TOPIC, input_format=None), published,
                 on_status=lambda s, d: statuses.append(s)).start()
    try:
        wait_for(lambda: published.count() >= 6, "the file twice")
    finally:
        driver.stop()
    assert statuses[:3] == [OK, DISCONNECTED, OK] and driver.health.reconnects >= 1
    missing = Uvc(UvcConfig(str(tmp_path / "video9"), TOPIC), Published()).start()
    try:
        wait_for(lambda: len(missing.loop.delays) >= 2, "two retries")
    finally:
        missing.stop()
    assert missing.health.status == DISCONNECTED and missing.loop.delays[:2] == [0.2, 0.4]


def test_packet_times_on_a_host_clock_are_kept():
    now = clock.now_ns()
    mono = now - clock.offset_ns()
    assert packet_host_ns(now - 1000, now, mono) == now - 1000
    assert packet_host_ns(mono - 1000, now, mono) == now - 1000
    assert packet_host_ns(5_000_000, now, mono) == now
    assert packet_host_ns(None, now, mono) == now


def test_recorded_uvc_frames_make_a_valid_task(tmp_path):
    path = tmp_path / "cam.mkv"
    write_video(path, "mjpeg", "yuvj420p", 30)
    _, published = run(UvcConfig(str(path), TOPIC, input_format=None, pace=True), 30)
    task, result = record(tmp_path, rig_with_camera("drivers_camera_rig"), published.items[:30])
    assert result.rows >= 25
