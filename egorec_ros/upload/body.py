"""The multipart/form-data body of an upload, streamed from the slice file in 1 MiB pieces with
its exact length announced (no chunked encoding), so memory stays flat for any size; optionally
held to a bandwidth, and stoppable between pieces."""
from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

PIECE = 1 << 20


@dataclass
class MultipartFile:
    """``fields`` as form fields, then ``path`` as the file part ``file`` named ``filename``."""

    fields: dict[str, str]
    path: Path
    filename: str
    limit_bytes_s: float = 0.0                                   # 0: as fast as the network goes
    progress: Callable[[int], None] = lambda n: None             # bytes of the file sent since the last call
    stop: threading.Event = field(default_factory=threading.Event)   # set: the upload is abandoned
    boundary: str = field(default_factory=lambda: uuid.uuid4().hex)

    def _head(self) -> bytes:
        parts = []
        for name, value in self.fields.items():
            parts.append(f'--{self.boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n')
        quoted = self.filename.replace('"', "%22")
        parts.append(f'--{self.boundary}\r\nContent-Disposition: form-data; name="file"; filename="{quoted}"\r\n'
                     "Content-Type: application/zip\r\n\r\n")
        return "".join(parts).encode("utf-8")

    def _tail(self) -> bytes:
        return f"\r\n--{self.boundary}--\r\n".encode()

    @property
    def content_type(self) -> str:
        return f"multipart/form-data; boundary={self.boundary}"

    def __len__(self) -> int:
        return len(self._head()) + self.path.stat().st_size + len(self._tail())

    def __iter__(self) -> Iterator[bytes]:
        yield self._head()
        piece = PIECE if not self.limit_bytes_s else max(16384, min(PIECE, int(self.limit_bytes_s / 10)))
        start, sent = time.monotonic(), 0
        with open(self.path, "rb") as f:
            while data := f.read(piece):
                if self.stop.is_set():
                    raise UploadStopped(f"upload of {self.filename} stopped")
                yield data
                sent += len(data)
                self.progress(len(data))
                if self.limit_bytes_s:
                    ahead = sent / self.limit_bytes_s - (time.monotonic() - start)
                    if ahead > 0:
                        self.stop.wait(ahead)
        yield self._tail()


class UploadStopped(Exception):
    """The uploader is shutting down in the middle of a body (the entry is retried next run)."""
