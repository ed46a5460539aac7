"""Tar members as bytes, so episodes written in parallel can be joined into shards by
plain concatenation (a tar is a sequence of 512-byte header + padded data blocks, closed
by two zero blocks). Headers come from ``tarfile.TarInfo.tobuf`` (PAX, UTF-8), exactly what
``tarfile.addfile`` writes."""
from __future__ import annotations

import tarfile

BLOCK = tarfile.BLOCKSIZE
END = b"\0" * (2 * BLOCK)


def member(name: str, data: bytes, mtime: int = 0) -> bytes:
    info = tarfile.TarInfo(name)
    info.size, info.mtime, info.mode = len(data), mtime, 0o644
    pad = -len(data) % BLOCK
    return info.tobuf(tarfile.PAX_FORMAT, "utf-8", "surrogateescape") + data + b"\0" * pad


def closing(size_so_far: int) -> bytes:
    """End-of-archive blocks plus padding to a whole record, as ``TarFile.close`` writes."""
    size = size_so_far + len(END)
    return END + b"\0" * (-size % tarfile.RECORDSIZE)
