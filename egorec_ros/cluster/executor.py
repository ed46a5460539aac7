"""Episodes exported in parallel: local worker processes (``--jobs N``) or Ray tasks
(``--ray ADDRESS``), both behind the ``concurrent.futures`` executor interface, so an
exporter's dispatch code does not know which. Ray tasks return what the function returns
(a small summary); the bytes go to files on storage every node sees."""
from __future__ import annotations

import multiprocessing
from collections.abc import Callable
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from typing import Any

from egorec_ros.cluster.session import TASK_RETRIES, RaySession


class RayExecutor(Executor):
    def __init__(self, address: str | None, check: Callable[..., Any] | None = None, check_args: tuple = (),
                 what: str = "") -> None:
        self._session = RaySession(address)
        self._refs: list = []
        try:
            if check is not None:
                self._session.on_every_node(check, *check_args, what=what)
        except BaseException:
            self._session.close()
            raise

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future:
        ray = self._session.ray
        ref = ray.remote(num_cpus=1, max_retries=TASK_RETRIES)(fn).remote(*args, **kwargs)
        self._refs.append(ref)
        return ref.future()

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        if cancel_futures or not wait:
            for ref in self._refs:
                self._session.ray.cancel(ref, force=True)
        self._refs.clear()
        self._session.close()


def executor(jobs: int, ray_address: str | None = None, *, ray: bool = False,
             check: Callable[..., Any] | None = None, check_args: tuple = (), what: str = "") -> Executor:
    """``jobs`` local processes, or (``ray``) tasks on the cluster at ``ray_address`` (None: a local
    instance), after ``check(*check_args)`` passed on every node."""
    if ray:
        return RayExecutor(ray_address, check, check_args, what)
    # spawned, never forked: the parent may already run decoder threads (PyAV/FFmpeg) whose locks
    # a forked child would inherit held, and hang in
    return ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("spawn"))
