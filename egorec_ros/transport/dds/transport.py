"""Transport over Cyclone DDS (cyclonedds-python), wire-compatible with ROS 2's rmw_cyclonedds_cpp.

Topics are ``rt/<topic>``, types ``pkg::msg::dds_::Type_`` derived from the message
definitions, samples plain CDR (XCDR1), the domain is ``ROS_DOMAIN_ID`` and the Cyclone
configuration comes from ``CYCLONEDDS_URI`` as for ROS. One thread waits on every
reader and takes the serialized samples with their arrival time into a ``CallbackQueue``,
whose thread hands them to the callbacks: taking never waits for a callback (see there why).
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any

from cyclonedds.builtin import BuiltinDataReader, BuiltinTopicDcpsPublication
from cyclonedds.core import GuardCondition, InstanceState, ReadCondition, WaitSet
from cyclonedds.domain import DomainParticipant
from cyclonedds.pub import DataWriter
from cyclonedds.qos import Policy, Qos
from cyclonedds.sub import DataReader
from cyclonedds.topic import Topic
from cyclonedds.util import duration

from egorec_ros.transport.base import QoS, RawCallback, ServiceHandler
from egorec_ros.transport.callback_queue import STALE_NS, CallbackQueue, Target
from egorec_ros.transport.dds.names import dds_topic, domain_id, ros_topic, ros_type
from egorec_ros.transport.dds.rawio import ANY, take_raw, write_raw
from egorec_ros.transport.dds.services import DdsClient, DdsService
from egorec_ros.transport.dds.types import idl_type, type_hash_user_data

WAIT_NS = 200_000_000        # the reader thread re-checks for new readers / close this often


def dds_qos(qos: QoS, idl: Any = None) -> Qos:
    """ROS QoS -> Cyclone QoS, set as rmw_cyclonedds_cpp sets it (plain CDR representation; for an
    endpoint of type ``idl``, its ROS type hash in USER_DATA: see ``type_hash_user_data``)."""
    reliability = (Policy.Reliability.Reliable(max_blocking_time=duration(milliseconds=100))
                   if qos.reliability == "reliable" else Policy.Reliability.BestEffort)
    durability = Policy.Durability.TransientLocal if qos.durability == "transient_local" else Policy.Durability.Volatile
    policies = [reliability, durability, Policy.History.KeepLast(qos.depth),
                Policy.DataRepresentation(use_cdrv0_representation=True)]
    user_data = type_hash_user_data(idl.__idl_typename__) if idl is not None else b""
    if user_data:
        policies.append(Policy.Userdata(user_data))
    return Qos(*policies)


class DdsPublisher:
    def __init__(self, writer: DataWriter) -> None:
        self._writer = writer

    def publish(self, cdr: bytes) -> None:
        write_raw(self._writer._ref, cdr)

    def subscription_count(self) -> int:
        """Readers matched right now (publish only what someone reads: the previews)."""
        return len(self._writer.get_matched_subscriptions())


@dataclass(eq=False)
class DdsSubscription:
    reader: DataReader
    condition: ReadCondition
    target: Target
    owner: DdsTransport

    def close(self) -> None:
        self.owner._unsubscribe(self)


class DdsTransport:
    """See ``egorec_ros.transport``. ``domain``: DDS domain (default ``ROS_DOMAIN_ID``)."""

    def __init__(self, domain: int | None = None) -> None:
        self.participant = DomainParticipant(domain_id() if domain is None else domain)
        self._topics: dict[tuple[str, str], Topic] = {}
        self._subs: list[DdsSubscription] = []
        self._lock = threading.Lock()
        self._waitset = WaitSet(self.participant)
        self._wake = GuardCondition(self.participant)
        self._waitset.attach(self._wake)
        self._graph: BuiltinDataReader | None = None
        self._running = True
        self._callbacks = CallbackQueue(name="egorec-dds-callbacks")
        self._thread = threading.Thread(target=self._loop, name="egorec-dds", daemon=True)
        self._thread.start()

    # ---- interface ---------------------------------------------------------------------

    def subscribe(self, topic: str, msgtype: str, qos: QoS, callback: RawCallback) -> DdsSubscription:
        return self.open_reader(dds_topic(topic), idl_type(msgtype), qos, callback, stale_ns=STALE_NS)

    def publisher(self, topic: str, msgtype: str, qos: QoS) -> DdsPublisher:
        return DdsPublisher(self.open_writer(dds_topic(topic), idl_type(msgtype), qos))

    def serve(self, service: str, srvtype: str, handler: ServiceHandler) -> DdsService:
        return DdsService(self, service, srvtype, handler)

    def call(self, service: str, srvtype: str, request: bytes, timeout_s: float = 5.0) -> bytes:
        with DdsClient(self, service, srvtype) as client:
            return client.call(request, timeout_s)

    def topics(self) -> dict[str, list[str]]:
        if self._graph is None:
            self._graph = BuiltinDataReader(self.participant, BuiltinTopicDcpsPublication)
        found: dict[str, set[str]] = {}
        for ep in self._graph.read(N=100_000):
            if getattr(ep, "sample_info", None) is not None and ep.sample_info.instance_state != InstanceState.Alive:
                continue
            name, typ = ros_topic(getattr(ep, "topic_name", "") or ""), ros_type(getattr(ep, "type_name", "") or "")
            if name and typ:
                found.setdefault(name, set()).add(typ)
        return {k: sorted(v) for k, v in sorted(found.items())}

    def pending(self) -> int:
        """Samples taken from DDS and not yet handed to their callback."""
        return self._callbacks.pending()

    def callback_drops(self) -> int:
        """Samples taken but never handed on: the queue was full, or they went stale there."""
        return self._callbacks.dropped

    def close(self) -> None:
        if not self._running:
            return
        self._running = False
        self._wake.set(True)
        self._thread.join()
        self._callbacks.close()

    def __enter__(self) -> DdsTransport:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- internals ---------------------------------------------------------------------

    def open_reader(self, dds_name: str, idl: type, qos: QoS, callback: RawCallback,
                    stale_ns: int | None = None) -> DdsSubscription:
        """A reader of a DDS topic by its wire name; samples go to ``callback`` from the callback
        thread (``stale_ns``: see ``CallbackQueue``; None for service traffic)."""
        reader = DataReader(self.participant, self._topic(dds_name, idl), qos=dds_qos(qos, idl))
        sub = DdsSubscription(reader, ReadCondition(reader, ANY), Target(dds_name, callback, stale_ns=stale_ns), self)
        with self._lock:
            self._subs.append(sub)
            self._waitset.attach(sub.condition)
        return sub

    def open_writer(self, dds_name: str, idl: type, qos: QoS) -> DataWriter:
        return DataWriter(self.participant, self._topic(dds_name, idl), qos=dds_qos(qos, idl))

    def _topic(self, name: str, idl: Any) -> Topic:   # an IdlStruct class
        key = (name, idl.__idl_typename__)
        with self._lock:
            if key not in self._topics:
                self._topics[key] = Topic(self.participant, name, idl)
            return self._topics[key]

    def _unsubscribe(self, sub: DdsSubscription) -> None:
        with self._lock:
            if sub.target.closed:
                return
            sub.target.closed = True
            self._subs.remove(sub)
            self._waitset.detach(sub.condition)

    def _loop(self) -> None:
        while self._running:
            self._waitset.wait(WAIT_NS)
            with self._lock:
                subs = list(self._subs)
            for sub in subs:
                samples = take_raw(sub.reader._ref)
                now = time.time_ns()
                for cdr in samples:
                    self._callbacks.put(sub.target, cdr, now)
