"""zstd-compressed mcap chunks decompressed without holding the GIL.

Why: rosbags decompresses mcap chunks with ``compression.zstd`` (``backports.zstd``
before Python 3.14), which holds the GIL for a whole chunk: 3 ms for a 1.8 MB chunk of
camera images, ~2700 such chunks in a minute of three raw 640x480 cameras, and every
other Python thread (the assembler, the encoder threads handing frames to FFmpeg) waits
meanwhile. python-zstandard releases the GIL (alone it is also faster, 2.2 against 3.1 ms
a chunk; inside a busy conversion the CPU is about the same, the gain is the GIL).
rosbag2's mcap plugin writes zstd chunks by default, so this is most bags.

rosbags keeps its own checks around the function we register (decompressed size,
CRC), and a chunk that does not decompress still ends as rosbags' ReaderError, which
``Bag.messages`` turns into a BagError. ``DECOMPRESSORS`` is rosbags' private table (the
version range is in setup.py; test_zstd_chunks guards it): if a rosbags release drops
it, bags are read as before, only slower. A chunk of several zstd frames (zstandard
reads only the first) goes to rosbags' own decompressor, which reads them all.
"""
from __future__ import annotations

import threading
from collections.abc import Callable

import zstandard
from rosbags.rosbag2 import storage_mcap

Decompressor = Callable[[bytes, int], bytes]

_contexts = threading.local()   # a ZstdDecompressor serves one thread at a time
_rosbags_own: Decompressor | None = None


def decompress_chunk(data: bytes, size: int) -> bytes:
    """``data`` decompressed; ``size`` is the uncompressed size the chunk record states."""
    context = getattr(_contexts, "zstd", None)
    if context is None:
        context = _contexts.zstd = zstandard.ZstdDecompressor()
    out = context.decompress(data, max_output_size=size)
    if len(out) != size and _rosbags_own is not None:   # more frames than the first
        return _rosbags_own(data, size)
    return out


def register() -> bool:
    """Make rosbags' mcap reader use ``decompress_chunk``; False if its table is not there."""
    global _rosbags_own
    table = getattr(storage_mcap, "DECOMPRESSORS", None)
    if not isinstance(table, dict) or "zstd" not in table:
        return False
    if table["zstd"] is not decompress_chunk:
        _rosbags_own = table["zstd"]
        table["zstd"] = decompress_chunk
    return True
