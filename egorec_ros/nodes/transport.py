"""The Transport interface over rclpy: raw CDR subscriptions (``raw=True``), raw publishing
(``Publisher.publish(bytes)`` -> ``publish_raw``), services, graph info.

Messages never become Python message objects on the hot path: the recorder decodes the
CDR with rosbags exactly as it decodes bags. A subscription's executor callback only queues
the sample (``CallbackQueue``): the executor keeps taking while the recorder is busy, so the
keep-last reader histories are not overwritten. Services are the exception (rclpy hands them
over as objects): they are converted with ``serialize_message`` / ``deserialize_message``,
a few bytes per call.
"""
from __future__ import annotations

import threading
import time
from typing import Any

from rclpy.callback_groups import MutuallyExclusiveCallbackGroup, ReentrantCallbackGroup
from rclpy.exceptions import InvalidHandle
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from rclpy.serialization import deserialize_message, serialize_message
from rclpy.subscription import Subscription
from rosidl_runtime_py.utilities import get_message, get_service

from egorec_ros.transport.base import QoS, RawCallback, ServiceHandler
from egorec_ros.transport.callback_queue import STALE_NS, CallbackQueue, Target


_DRAIN_MAX = 1000      # messages taken in one callback at most (the executor's other work goes on)


def _drain(sub: Subscription, target: Target, callbacks: CallbackQueue) -> None:
    """Queue what else is waiting in ``sub``'s reader now.

    rclpy's executor takes one message per subscription per wait cycle. A topic faster than
    the cycle rate (a 200 Hz IMU beside 20 camera topics on a busy robot PC) then overflows its
    keep-last history: the bench lost 18 % of the IMU with a bare rclpy subscriber, 0 % of the
    30 Hz topics. Taking the rest here, as the executor itself takes (``handle.take_message``),
    keeps up at any rate.

    The executor runs this callback after it took the message, outside its hold on the handle: the
    subscription may have been destroyed in between (the node closing): then there is nothing to take."""
    try:
        with sub.handle:
            for _ in range(_DRAIN_MAX):
                taken = sub.handle.take_message(sub.msg_type, True)
                if taken is None:
                    return
                callbacks.put(target, taken[0], time.time_ns())
    except InvalidHandle:
        return


def ros_qos(qos: QoS) -> QoSProfile:
    return QoSProfile(
        history=HistoryPolicy.KEEP_LAST, depth=qos.depth,
        reliability=ReliabilityPolicy.RELIABLE if qos.reliability == "reliable" else ReliabilityPolicy.BEST_EFFORT,
        durability=(DurabilityPolicy.TRANSIENT_LOCAL if qos.durability == "transient_local"
                    else DurabilityPolicy.VOLATILE))


class _RawPublisher:
    def __init__(self, publisher: Any) -> None:
        self._pub = publisher

    def publish(self, cdr: bytes) -> None:
        self._pub.publish(cdr if isinstance(cdr, bytes) else bytes(cdr))

    def subscription_count(self) -> int:
        return int(self._pub.get_subscription_count())


class _Handle:
    def __init__(self, destroy: Any, entity: Any, target: Target | None = None) -> None:
        self._destroy, self._entity, self._target = destroy, entity, target

    def close(self) -> None:
        if self._target is not None:
            self._target.closed = True
        self._destroy(self._entity)


class RclpyTransport:
    """Entities are created on ``node``; spin it with a MultiThreadedExecutor (service handlers
    may block while an episode commits, subscriptions must keep flowing)."""

    def __init__(self, node: Node) -> None:
        self.node = node
        self._group = ReentrantCallbackGroup()
        self._callbacks = CallbackQueue(name="egorec-rclpy-callbacks")

    def subscribe(self, topic: str, msgtype: str, qos: QoS, callback: RawCallback) -> _Handle:
        target = Target(topic, callback, stale_ns=STALE_NS)
        subscription: list[Subscription] = []

        def on_message(data: bytes) -> None:
            self._callbacks.put(target, data, time.time_ns())
            _drain(subscription[0], target, self._callbacks)

        # A group of its own: one callback of this subscription at a time, so the drain keeps the order.
        sub = self.node.create_subscription(get_message(msgtype), topic, on_message, ros_qos(qos), raw=True,
                                            callback_group=MutuallyExclusiveCallbackGroup())
        subscription.append(sub)
        return _Handle(self.node.destroy_subscription, sub, target)

    def pending(self) -> int:
        """Samples received and not yet handed to their callback."""
        return self._callbacks.pending()

    def callback_drops(self) -> int:
        """Samples taken but never handed on: the queue was full, or they went stale there."""
        return self._callbacks.dropped

    def publisher(self, topic: str, msgtype: str, qos: QoS) -> _RawPublisher:
        return _RawPublisher(self.node.create_publisher(get_message(msgtype), topic, ros_qos(qos)))

    def serve(self, service: str, srvtype: str, handler: ServiceHandler) -> _Handle:
        """The handle's close() does not destroy the service: the executor sends a reply after
        the handler returns, and destroying the service in between lost the reply of a stop that
        was committing when Ctrl-C came (the client waited forever). The node's destroy_node(),
        after the executor's shutdown() has waited for running callbacks, destroys it."""
        cls = get_service(srvtype)

        def answer(request, _response):
            return deserialize_message(handler(serialize_message(request)), cls.Response)

        self.node.create_service(cls, service, answer, callback_group=self._group)
        return _Handle(lambda _: None, None)

    def call(self, service: str, srvtype: str, request: bytes, timeout_s: float = 5.0) -> bytes:
        """Needs the node spun by an executor in another thread."""
        cls = get_service(srvtype)
        client = self.node.create_client(cls, service, callback_group=self._group)
        try:
            if not client.wait_for_service(timeout_sec=timeout_s):
                raise TimeoutError(f"service {service} is not available within {timeout_s:g} s")
            done = threading.Event()
            future = client.call_async(deserialize_message(request, cls.Request))
            future.add_done_callback(lambda _f: done.set())
            if not done.wait(timeout_s):
                raise TimeoutError(f"service {service} did not reply within {timeout_s:g} s")
            return serialize_message(future.result())
        finally:
            self.node.destroy_client(client)

    def topics(self) -> dict[str, list[str]]:
        return {name: sorted(types) for name, types in self.node.get_topic_names_and_types()}

    def close(self) -> None:
        """Stops handing samples on; the entities go with the node (``node.destroy_node()``)."""
        self._callbacks.close()
