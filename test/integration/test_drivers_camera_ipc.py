"""Camera IPC driver end to end through a real Unix socket: a simulated capture service
sends 40-byte headers + JPEGs (split writes, wrong magic, wrong fourcc, broken JPEG,
a sequence gap), closes the socket (unplug) and comes back; a recorded valid task."""
from __future__ import annotations

import time


from helpers.fake_s80 import jpeg
from helpers.camera_service import Service, frame
from helpers.drivers import Published, record, rig_with_camera, wait_for
from egorec_ros.drivers import clock
from egorec_ros.drivers.camera_ipc import CameraIpc, CameraIpcConfig
from egorec_ros.drivers.health import DISCONNECTED, OK

TOPIC = "/cam/image_raw"


def test_frames_bit_exact_bad_headers_counted_and_reconnect(tmp_path):
    path = tmp_path / "cam.sock"
    service = Service(path)
    published = Published()
    statuses = []
    driver = CameraIpc(CameraIpcConfig(str(path), TOPIC), published, on_status=lambda s, d: statuses.append(s)).start()
    try:
        wait_for(lambda: driver.health.status == OK, "connected")
        now = clock.now_ns()
        jpegs = [jpeg(k) for k in range(4)]
        mono = time.monotonic_ns()
        stream = (frame(1, jpegs[0], now - 5_000_000)
                  + b"\x01\x02junk"
                  + frame(2, jpegs[1], now, magic=0x12345678)
                  + frame(3, jpegs[1], now, fourcc=b"YUYV")
                  + frame(4, jpegs[1][:-2], now)                    # broken JPEG
                  + frame(5, jpegs[1], mono)                        # monotonic stamp
                  + frame(9, jpegs[2], now + 1_000))                # seq 6..8 never came
        service.send(stream, pieces=23)
        wait_for(lambda: published.count() == 3, "three good frames")
        msgs = published.on(TOPIC)
        assert [bytes(m.data) for m in msgs] == [jpegs[0], jpegs[1], jpegs[2]]
        assert msgs[0].format == "jpeg" and msgs[0].__msgtype__ == "sensor_msgs/msg/CompressedImage"
        stamps = [m.header.stamp.sec * 10**9 + m.header.stamp.nanosec for m in msgs]
        assert stamps[0] == now - 5_000_000 and stamps[2] == now + 1_000
        assert abs(stamps[1] - clock.unix_ns(mono)) == 0
        bad = driver.health.bad
        # one resync skips the junk and the frame without magic (whose seq 2 is then a gap, as 6..8)
        assert (bad["magic"], bad["fourcc"], bad["jpeg_marker"], bad["seq_gap"]) == (1, 1, 1, 4)
        assert bad["resync_bytes"] >= 6
        assert driver.decoder.size == (64, 48)

        service.close()                                            # the service stops: unplug
        wait_for(lambda: driver.health.status == DISCONNECTED, "disconnected")
        wait_for(lambda: len(driver.loop.delays) >= 2, "retries while the socket is gone")
        service = Service(path)
        wait_for(lambda: driver.health.status == OK, "reconnected")
        service.send(frame(1, jpegs[3], clock.now_ns()))
        wait_for(lambda: published.count() == 4, "a frame after the reconnect")
        assert bytes(published.on(TOPIC)[-1].data) == jpegs[3]
        assert statuses[:3] == [OK, DISCONNECTED, OK] and driver.health.reconnects == 1
        assert driver.health.bad["seq_gap"] == 4, "the sequence restarts with the connection"
    finally:
        driver.stop()
        service.close()


def test_recorded_camera_frames_make_a_valid_task(tmp_path):
    path = tmp_path / "cam.sock"
    service = Service(path)
    published = Published()
    driver = CameraIpc(CameraIpcConfig(str(path), TOPIC), published).start()
    try:
        wait_for(lambda: driver.health.status == OK, "connected")
        for k in range(30):
            service.send(frame(k, jpeg(k), clock.now_ns()))
            time.sleep(1 / 30)
        wait_for(lambda: published.count() == 30, "the frames")
    finally:
        driver.stop()
        service.close()
    task, result = record(tmp_path, rig_with_camera("drivers_camera_rig"), published.items)
    assert result.rows >= 25


def test_a_junk_run_counts_once_however_the_socket_splits_it():
    """Bad-frame counters must not depend on read sizes: a run of junk before the next magic is
    one bad header, read in one piece or byte by byte (it counted once per read before)."""
    from egorec_ros.drivers.camera_ipc import CameraIpcDecoder, encode_frame
    from egorec_ros.drivers.health import Health

    now = clock.now_ns()
    good = jpeg(0)
    stream = (encode_frame(1, 64, 48, good, now) + b"\x00" * 90 + encode_frame(2, 64, 48, good, now + 1)
              + encode_frame(3, 64, 48, good, now + 2, magic=0x12345678) + encode_frame(4, 64, 48, good, now + 3))
    for piece in (len(stream), 7, 1):
        health, published = Health("cam"), Published()
        decoder = CameraIpcDecoder(TOPIC, health, published, "cam")
        for i in range(0, len(stream), piece):
            decoder.feed(stream[i:i + piece], clock.now_ns())
        assert published.count() == 3, piece
        assert health.bad["magic"] == 2, (piece, dict(health.bad))
