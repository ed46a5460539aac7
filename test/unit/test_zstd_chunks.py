"""mcap chunks go through python-zstandard (GIL released) and message bytes are not copied
to deserialise them; the messages read are the ones rosbags' own path reads."""
from __future__ import annotations

import numpy as np
import pytest
import zstandard
from rosbags.rosbag2 import storage_mcap

from egorec_ros.assembly.sample import Sample
from egorec_ros.bags.bagfile import open_bag
from egorec_ros.bags.bagwrite import write_bag
from egorec_ros.bags.errors import BagError
from egorec_ros.bags.zstd_chunks import decompress_chunk
from egorec_ros.rig.load import load_rig

RIG = load_rig("uvc_pair")
CAM = next(s for s in RIG.streams.values() if s.topic)
T0 = 1_700_000_000_000_000_000
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


@pytest.fixture(scope="module")
def chunked_bag(tmp_path_factory):
    """A rosbag2 mcap bag of raw 64x48 images in zstd-compressed chunks."""
    rng = np.random.default_rng(3)
    frames = [(rng.integers(0, 40, (48, 64, 3)) + i).astype(np.uint8) for i in range(40)]
    samples = [Sample(CAM.id, T0 + i * 33_333_333, T0 + i * 33_333_333 + 1000, f) for i, f in enumerate(frames)]
    return write_bag(tmp_path_factory.mktemp("bags") / "chunks", samples, [CAM], storage="rosbag2/mcap",
                     compression="storage")


def _messages(path) -> list[tuple[str, int, bytes]]:
    with open_bag(path) as bag:
        return [(m.topic, m.log_ns, bytes(m.data)) for m in bag.messages()]


def test_rosbags_mcap_reader_uses_our_decompressor():
    # guards rosbags' private table: a release without it would read bags, only slower
    assert storage_mcap.DECOMPRESSORS["zstd"] is decompress_chunk


def test_chunks_read_the_same_as_with_rosbags_own_decompressor(chunked_bag, monkeypatch):
    (mcap,) = chunked_bag.glob("*.mcap")
    assert mcap.read_bytes().count(ZSTD_MAGIC) >= 1          # the chunks are compressed
    ours = _messages(chunked_bag)
    monkeypatch.setitem(storage_mcap.DECOMPRESSORS, "zstd", lambda data, _: storage_mcap.zstd.decompress(data))
    assert ours == _messages(chunked_bag)
    assert len(ours) == 40


def test_a_chunk_of_several_zstd_frames_decompresses_whole():
    # zstandard stops after the first frame; rosbags' own decompressor reads on
    first, second = b"first frame " * 100, b"second frame " * 50
    data = zstandard.ZstdCompressor().compress(first) + zstandard.ZstdCompressor().compress(second)
    assert decompress_chunk(data, len(first) + len(second)) == first + second


def test_a_corrupt_chunk_is_a_bag_error_naming_the_bag(chunked_bag, tmp_path):
    broken = tmp_path / "broken"
    broken.mkdir()
    for f in chunked_bag.iterdir():
        data = bytearray(f.read_bytes())
        if f.suffix == ".mcap":
            at = data.index(ZSTD_MAGIC) + 64
            data[at:at + 256] = bytes(256)
        (broken / f.name).write_bytes(bytes(data))
    with pytest.raises(BagError, match="broken.*reading failed"):
        _messages(broken)


def test_decoded_images_are_views_of_the_message_bytes(chunked_bag):
    with open_bag(chunked_bag) as bag:
        raw = next(bag.messages())
        msg = bag.decode(raw)
    assert np.shares_memory(np.frombuffer(raw.data, np.uint8), msg.data)
    assert bytes(msg.data) == bytes(raw.data)[-msg.data.size:]
