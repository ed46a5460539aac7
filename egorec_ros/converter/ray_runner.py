"""Episode jobs as Ray tasks (``--ray [ADDRESS]``), with the interface of ``runners.py``.

Without an address a local Ray instance is started for the run (and stopped after it);
with one (``auto``, ``HOST:PORT``, ``ray://HOST:10001``) the run joins that cluster.
Workers read the bag and stage episodes under the output ROOT; the driver commits them in
run order, so ROOT and the bags must be on storage every worker node shares with the
driver: a probe on every node checks both before any job is sent (a node that cannot see
them is named in a one-line error), and every job checks ROOT again where it runs.
A task whose worker process or node dies is re-run by Ray (``TASK_RETRIES``); the new
attempt discards the dead one's staging (``episode_job._attempt_dir``), so each episode is
committed once. Tasks return an ``EpisodeOutcome`` (counts, lines), never frames. Workers
import egorec_ros, so the cluster's Python environment needs it (``runtime_env`` or an image).
"""
from __future__ import annotations

from collections.abc import Sequence

from egorec_ros.cluster.errors import ClusterError
from egorec_ros.cluster.session import TASK_RETRIES, RaySession, check_paths_visible, node_label
from egorec_ros.converter.episode_job import ConvertSettings, EpisodeJob, EpisodeOutcome, convert_episode
from egorec_ros.converter.failures import SharedFilesystemError
from egorec_ros.converter.runners import POLL_S, OnProgress, QueueProgress, drain
from egorec_ros.converter.work_dir import check_shared


def _run_on_ray(job: EpisodeJob, settings: ConvertSettings, events) -> EpisodeOutcome:
    outcome = convert_episode(job, settings, QueueProgress(events, job.order))
    outcome.node = node_label()
    if outcome.error is not None:
        outcome.error = f"on node {outcome.node}: {outcome.error}"
    return outcome


def _probe(probe: tuple[str, str], bags: Sequence[str]) -> None:
    check_paths_visible(*bags)
    check_shared(*probe)


class RayRunner:
    def __init__(self, settings: ConvertSettings, address: str | None, workers: int | None,
                 probe: tuple[str, str], on_progress: OnProgress, bags: Sequence[str] = ()) -> None:
        self._session = RaySession(address, workers)
        ray = self._ray = self._session.ray
        from ray.util.queue import Empty, Queue
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        self._empty, self._on_progress = Empty, on_progress
        self._refs: dict[int, tuple[EpisodeJob, object]] = {}
        try:
            try:
                self._session.on_every_node(_probe, probe, list(bags), what="the output root and the bags")
            except ClusterError as exc:
                raise SharedFilesystemError(str(exc)) from None
            # the progress queue lives with the driver: losing a worker node must not lose it
            here = NodeAffinitySchedulingStrategy(self._session.driver_node(), soft=False)
            self._events = Queue(actor_options={"num_cpus": 0, "scheduling_strategy": here})
            self._settings = ray.put(settings)
            self._task = ray.remote(num_cpus=1, max_retries=TASK_RETRIES)(_run_on_ray)
        except BaseException:
            self.close()
            raise

    def submit(self, job: EpisodeJob) -> None:
        self._refs[job.order] = (job, self._task.remote(job, self._settings, self._events))

    def outcome(self, order: int) -> EpisodeOutcome:
        job, ref = self._refs.pop(order)
        try:
            while not self._ray.wait([ref], timeout=POLL_S)[0]:
                drain(self._events, self._on_progress, self._empty)
            return self._ray.get(ref)
        except self._ray.exceptions.RayError as exc:      # retries used up: workers or nodes kept dying
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            return EpisodeOutcome(job.order, job.bag, job.window, error=(
                f"{job.bag}: the Ray task converting {job.window.reason} failed {TASK_RETRIES + 1} times: {first}"))
        finally:
            drain(self._events, self._on_progress, self._empty)

    def close(self) -> None:
        """Cancel what still runs (what it staged goes with the run's work folder)."""
        for _, ref in self._refs.values():
            self._ray.cancel(ref, force=True)
        self._refs.clear()
        self._session.close()
