"""Preview topics (issue 21 §2): a small JPEG per camera, depth false-coloured, published only
while someone subscribes, stamped with the frame's own stamp. Real Cyclone DDS on loopback."""
from __future__ import annotations

import io
import time

import numpy as np
import pytest
from PIL import Image

from egorec_ros.assembly.sample import Sample
from egorec_ros.live.preview import COMPRESSED_IMAGE, Previews, preview_topic
from egorec_ros.messages.typestores import ros2_typestore
from egorec_ros.rig.load import load_rig
from egorec_ros.transport.base import SENSOR_DATA
from egorec_ros.transport.dds import DdsTransport
from egorec_ros.transport.dds.loopback import loopback_env
from helpers.polling import until
from helpers.dds_domains import domain_for

STORE = ros2_typestore()


@pytest.fixture
def transport(monkeypatch):
    for k, v in loopback_env(domain_for(__name__)).items():
        monkeypatch.setenv(k, v)
    with DdsTransport() as t:
        yield t


def test_previews_only_while_subscribed_depth_coloured(transport):
    rig = load_rig("d435_single")
    rgb_id, depth_id = "head.rgb", "head.depth"
    previews = Previews(rig, transport, "/rec_prev", hz=20.0)
    try:
        assert set(previews.topics) == {rgb_id, depth_id}
        rgb = np.zeros((720, 1280, 3), np.uint8)
        rgb[:, :640] = (200, 30, 30)
        depth = np.zeros((480, 848), np.uint16)
        depth[:, 424:] = np.linspace(500, 3000, 424, dtype=np.uint16)   # left half invalid (0)
        previews.offer(Sample(rgb_id, 1_000_000_123, 1_000_000_200, rgb))
        previews.offer(Sample(depth_id, 1_000_000_456, 1_000_000_500, depth))
        time.sleep(0.5)
        assert previews.published == 0, "nothing may be encoded or sent while nobody subscribes"

        got: dict[str, object] = {}
        for sid in (rgb_id, depth_id):
            transport.subscribe(preview_topic("/rec_prev", sid), COMPRESSED_IMAGE, SENSOR_DATA,
                                lambda cdr, _t, sid=sid: got.setdefault(sid, STORE.deserialize_cdr(cdr, COMPRESSED_IMAGE)))
        assert until(lambda: len(got) == 2), f"previews received: {sorted(got)}"
        for sid, stamp, width in ((rgb_id, 1_000_000_123, 320), (depth_id, 1_000_000_456, 283)):
            msg = got[sid]
            assert msg.format == "jpeg" and msg.header.frame_id == sid
            assert msg.header.stamp.sec * 10**9 + msg.header.stamp.nanosec == stamp
            img = np.asarray(Image.open(io.BytesIO(bytes(msg.data))).convert("RGB"))
            assert img.shape[1] == width, img.shape
            if sid == rgb_id:
                assert abs(int(img[10, 10, 0]) - 200) < 20 and img[10, -10].max() < 20
            else:   # invalid depth black, valid depth coloured: near red .. far blue
                assert img[10, 10].max() < 20
                near, far = img[10, img.shape[1] // 2 + 5].astype(int), img[10, -5].astype(int)
                assert near[0] > near[2] + 100 and far[2] > far[0] + 100
        sent = previews.published
        time.sleep(0.4)
        assert previews.published == sent, "an unchanged frame is not sent again"
    finally:
        previews.close()
