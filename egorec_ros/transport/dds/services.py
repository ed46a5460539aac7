"""ROS 2 services over plain DDS, in rmw_cyclonedds_cpp's request/reply format, so ``ros2 service
call`` reaches a DDS server and a DDS client reaches an rclpy server.

Requests travel on ``rq/<service>Request`` and replies on ``rr/<service>Reply`` (reliable,
keep-last 10, volatile: rmw_qos_profile_services_default). The payload is the request (reply)
message prefixed by rmw_cyclonedds's request header: ``uint64 guid`` (the client's id; rmw uses
its request writer's instance handle and keeps only replies carrying it) and ``int64 seq``;
the server copies both into the reply. See rmw_cyclonedds_cpp ``serdata.hpp``
(``cdds_request_header_t``) and ``Serialization.cpp`` (``serialize_top_level``).

Discovery runs each way on its own: a caller can see our reply writer, and send its request,
before we have seen its reply reader; a volatile reply written then reaches nobody (the caller
waits out its timeout while the call took effect). So a reply waits, up to
``REPLY_MATCH_WAIT_S``, until every participant calling us has a reply reader we matched, as
rmw_cyclonedds_cpp's ``rmw_send_response`` waits for the caller's reader (100 ms there).
"""
from __future__ import annotations

import itertools
import queue
import struct
import sys
import threading
import time
from typing import TYPE_CHECKING

from egorec_ros.transport.base import QoS, ServiceHandler
from egorec_ros.transport.dds.names import REPLY_PREFIX, REQUEST_PREFIX, dds_topic
from egorec_ros.transport.dds.rawio import write_raw
from egorec_ros.transport.dds.types import service_wrapper_type

if TYPE_CHECKING:
    from cyclonedds.builtin import DcpsEndpoint

    from egorec_ros.transport.dds.transport import DdsTransport

SERVICES_QOS = QoS("reliable", 10, "volatile")
REPLY_MATCH_WAIT_S = 2.0
_HEADER = {True: struct.Struct("<Qq"), False: struct.Struct(">Qq")}


def split_request(cdr: bytes) -> tuple[int, int, bytes]:
    """(guid, seq, the message's own CDR) of a wrapped request or reply."""
    if len(cdr) < 4 + 16:
        raise ValueError(f"a service message of {len(cdr)} bytes is shorter than its 16-byte request header")
    little = cdr[1] == 1
    guid, seq = _HEADER[little].unpack_from(cdr, 4)
    return guid, seq, bytes(cdr[:4]) + bytes(cdr[20:])


def _participant(endpoint: DcpsEndpoint | None) -> object:
    """The participant an endpoint belongs to (None: it left between listing and lookup)."""
    return None if endpoint is None else endpoint.participant_key


def wrap(cdr: bytes, guid: int, seq: int) -> bytes:
    """Put the request header between a message's encapsulation header and its body."""
    little = cdr[1] == 1
    return bytes(cdr[:4]) + _HEADER[little].pack(guid, seq) + bytes(cdr[4:])


class DdsService:
    """Answers one service; ``close()`` stops answering. The handler runs on the service's own
    thread, so a slow one (stop: commit an episode) never holds up the transport's readers."""

    def __init__(self, transport: DdsTransport, service: str, srvtype: str, handler: ServiceHandler) -> None:
        self.service, self._handler = service, handler
        self._queue: queue.Queue[tuple[int, int, bytes] | None] = queue.Queue()
        self._thread = threading.Thread(target=self._work, name=f"egorec-srv{service}", daemon=True)
        self._thread.start()
        self._writer = transport.open_writer(dds_topic(service, REPLY_PREFIX, "Reply"),
                                             service_wrapper_type(srvtype, "Response"), SERVICES_QOS)
        self._sub = transport.open_reader(dds_topic(service, REQUEST_PREFIX, "Request"),
                                          service_wrapper_type(srvtype, "Request"), SERVICES_QOS, self._on_request)

    def _on_request(self, cdr: bytes, _arrival_ns: int) -> None:
        try:
            guid, seq, request = split_request(cdr)
        except ValueError as exc:
            print(f"egorec dds: {self.service}: ignored a request: {exc}", file=sys.stderr)
            return
        self._queue.put((guid, seq, request))

    def _work(self) -> None:
        while (job := self._queue.get()) is not None:
            guid, seq, request = job
            try:
                reply = wrap(self._handler(request), guid, seq)
                self._await_callers_readers()
                write_raw(self._writer._ref, reply)
            except Exception as exc:  # noqa: BLE001 - one failed call must not end the service
                print(f"egorec dds: {self.service}: the call failed: {exc!r}", file=sys.stderr)

    def _await_callers_readers(self) -> None:
        deadline = time.monotonic() + REPLY_MATCH_WAIT_S
        while not self._callers_readers_matched() and time.monotonic() < deadline:
            time.sleep(0.01)

    def _callers_readers_matched(self) -> bool:
        """Whether each participant with a request writer matched by our request reader has a
        reply reader matched by our reply writer (see the module docstring)."""
        reader, writer = self._sub.reader, self._writer
        callers = {_participant(reader.get_matched_publication_data(h)) for h in reader.get_matched_publications()}
        heard = {_participant(writer.get_matched_subscription_data(h)) for h in writer.get_matched_subscriptions()}
        return callers - {None} <= heard

    def close(self) -> None:
        self._sub.close()
        self._queue.put(None)
        self._thread.join()


class DdsClient:
    """Calls one service (``call``); use as a context manager or ``close()``."""

    _ids = itertools.count(1)

    def __init__(self, transport: DdsTransport, service: str, srvtype: str) -> None:
        self.service = service
        self._writer = transport.open_writer(dds_topic(service, REQUEST_PREFIX, "Request"),
                                             service_wrapper_type(srvtype, "Request"), SERVICES_QOS)
        self._sub = transport.open_reader(dds_topic(service, REPLY_PREFIX, "Reply"),
                                          service_wrapper_type(srvtype, "Response"), SERVICES_QOS, self._on_reply)
        # as rmw_cyclonedds_cpp's clients do: the request writer's instance handle, as a uint64
        self.guid = self._writer.get_instance_handle() & 0xFFFF_FFFF_FFFF_FFFF
        self._seq = itertools.count(1)
        self._replies: dict[int, bytes] = {}
        self._cond = threading.Condition()

    def call(self, request: bytes, timeout_s: float = 5.0) -> bytes:
        deadline = time.monotonic() + timeout_s
        while not (self._writer.get_matched_subscriptions() and self._sub.reader.get_matched_publications()):
            if time.monotonic() >= deadline:
                raise TimeoutError(f"service {self.service} is not available (no server answered within "
                                   f"{timeout_s:g} s); is the recorder running in this ROS_DOMAIN_ID?")
            time.sleep(0.02)
        seq = next(self._seq)
        write_raw(self._writer._ref, wrap(request, self.guid, seq))
        with self._cond:
            if not self._cond.wait_for(lambda: seq in self._replies, max(0.0, deadline - time.monotonic())):
                raise TimeoutError(f"service {self.service} did not reply within {timeout_s:g} s")
            return self._replies.pop(seq)

    def _on_reply(self, cdr: bytes, _arrival_ns: int) -> None:
        guid, seq, reply = split_request(cdr)
        if guid == self.guid:
            with self._cond:
                self._replies[seq] = reply
                self._cond.notify_all()

    def close(self) -> None:
        self._sub.close()

    def __enter__(self) -> DdsClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
