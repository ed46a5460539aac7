"""Serialized bytes straight in and out of Cyclone DDS.

cyclonedds-python's ``DataWriter.write`` / ``DataReader.take`` serialise through the
IdlStruct, which costs ~50 ms for a VGA ``uint8[]`` image. The C layer underneath
takes and gives the serialized sample (CDR with its encapsulation header) as bytes;
these two functions call it directly (~0.2 ms per VGA image). That layer is private
API: setup.py pins cyclonedds, and test_transport_dds.py checks the bytes against
rosbags' ``serialize_cdr`` in both directions.
"""
from __future__ import annotations

from cyclonedds._clayer import ddspy_take, ddspy_write  # private, see module docstring
from cyclonedds.core import DDSException, InstanceState, SampleState, ViewState

ANY = SampleState.Any | ViewState.Any | InstanceState.Any
TAKE_BATCH = 64


def write_raw(writer_ref: int, cdr: bytes | memoryview) -> None:
    """Write one serialized sample; Cyclone wants the size padded to 4 bytes (as cyclonedds-python does)."""
    pad = -len(cdr) % 4
    data = bytes(cdr) + b"\0" * pad if pad or not isinstance(cdr, bytes) else cdr
    ret = ddspy_write(writer_ref, data)
    if ret < 0:
        raise DDSException(ret, "while writing a serialized sample")


def take_raw(reader_ref: int) -> list[bytes]:
    """Every serialized sample waiting in the reader (valid data only), oldest first."""
    out: list[bytes] = []
    while True:
        ret = ddspy_take(reader_ref, ANY, TAKE_BATCH)
        if isinstance(ret, int):
            raise DDSException(ret, "while taking serialized samples")
        out.extend(data for data, info in ret if info.valid_data)
        if len(ret) < TAKE_BATCH:
            return out
