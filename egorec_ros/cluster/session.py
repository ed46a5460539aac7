"""Joining a Ray cluster for one run, and checking every node before any work is sent.

``--ray`` without an address starts a local Ray instance for the run (stopped after it);
``--ray ADDRESS`` (``auto``, ``HOST:PORT``, ``ray://HOST:10001``) joins that cluster and
leaves it running. Tasks are retried by Ray when their worker process or node dies
(``TASK_RETRIES``); what a dead attempt left on shared storage is the task's to discard.
"""
from __future__ import annotations

import os
import socket
from collections.abc import Callable
from types import ModuleType, TracebackType
from typing import Any

from egorec_ros.cluster.errors import ClusterError

TASK_RETRIES = 3            # a worker or node lost mid-task: Ray re-runs it, elsewhere if the node is gone
PROBE_TIMEOUT_S = 60.0      # a node that cannot even run a 1-line probe in this time is reported, not waited for


def ray_module() -> ModuleType:
    try:
        import ray
    except ImportError:
        raise ClusterError("--ray needs the ray package: pip install 'egorec_ros[ray]' (or pip install ray)") from None
    return ray


def node_label() -> str:
    """Where the calling process runs: ``IP/node-id`` inside a Ray worker, else the host name."""
    try:
        import ray
        if ray.is_initialized():
            ctx = ray.get_runtime_context()
            return f"{ray.util.get_node_ip_address()}/{ctx.get_node_id()[:8]}"
    except ImportError:
        pass
    return socket.gethostname()


class RaySession:
    """``with RaySession(address, cpus) as ray:`` joined (or started) for the block."""

    def __init__(self, address: str | None, cpus: int | None = None) -> None:
        self.ray = ray_module()
        self._owns = not self.ray.is_initialized()
        if self._owns:
            # a cluster on loopback (tests, one machine): the driver stays on loopback too, else Ray
            # would announce it under the machine's network address
            here = {"_node_ip_address": "127.0.0.1"} if _loopback(address) else {}
            try:
                self.ray.init(address=address, num_cpus=cpus if address is None else None, include_dashboard=False,
                              log_to_driver=False, configure_logging=False, **here)
            except (ConnectionError, ValueError, RuntimeError) as exc:
                raise ClusterError(f"cannot join the Ray cluster at {address or '(local)'}: {exc}; is it running "
                                   "(ray status), and is the address the head's GCS address (HOST:6379)?") from None

    def driver_node(self) -> str:
        return self.ray.get_runtime_context().get_node_id()

    def worker_nodes(self) -> list[str]:
        """Node ids of the alive nodes that can run a 1-CPU task."""
        return [n["NodeID"] for n in self.ray.nodes() if n.get("Alive") and n.get("Resources", {}).get("CPU", 0) >= 1]

    def on_every_node(self, fn: Callable[..., Any], *args: Any, what: str) -> None:
        """Run ``fn(*args)`` once on every worker node; the first failure is raised as a one-line
        ClusterError naming the node (``fn`` raising a UserError keeps its message)."""
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        nodes = self.worker_nodes()
        if not nodes:
            raise ClusterError("the Ray cluster has no alive node with a CPU to run work on (ray status)")
        remote = self.ray.remote(num_cpus=1, max_retries=0)(_labelled)
        refs = {remote.options(scheduling_strategy=NodeAffinitySchedulingStrategy(n, soft=False)).remote(fn, *args): n
                for n in nodes}
        done, late = self.ray.wait(list(refs), num_returns=len(refs), timeout=PROBE_TIMEOUT_S)
        for ref in late:
            self.ray.cancel(ref, force=True)
        if late:
            raise ClusterError(f"node {refs[late[0]][:8]} did not run the check of {what} within "
                               f"{PROBE_TIMEOUT_S:.0f} s (busy, or without a working Python environment?)")
        for ref in done:
            label, error = self.ray.get(ref)
            if error:
                raise ClusterError(f"node {label}: {error}")

    def close(self) -> None:
        if self._owns and self.ray.is_initialized():
            self.ray.shutdown()

    def __enter__(self) -> RaySession:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


def _loopback(address: str | None) -> bool:
    host = (address or "").rsplit("://", 1)[-1].rsplit(":", 1)[0]
    return host in ("127.0.0.1", "localhost")


def _labelled(fn: Callable[..., Any], *args: Any) -> tuple[str, str | None]:
    """A probe's result: (node label, one-line error or None)."""
    try:
        fn(*args)
    except Exception as exc:        # reported to the driver as a one-liner naming this node
        return node_label(), str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return node_label(), None


def check_paths_visible(*paths: str) -> None:
    """A probe: every path exists here (a bag, the output root)."""
    for path in paths:
        if not os.path.exists(path):
            raise ClusterError(f"cannot see {path}: inputs (bags, task dirs) and outputs must be on storage every "
                               "node mounts at the same path (NFS, ...)")
