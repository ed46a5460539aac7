"""Episode jobs as Ray tasks (``--ray [ADDRESS]``), with the interface of ``runners.py``.

Without an address a local Ray instance is started for the run (and stopped after it);
with one (``auto``, ``HOST:PORT``, ``ray://HOST:10001``) the run joins that cluster.
Workers stage episodes under the output ROOT and the driver commits them, so ROOT must
be on a filesystem every worker node shares with the driver: a probe task checks it
before any job is sent, and every job checks it again on its own node. Workers import
egorec_ros, so the cluster's Python environment needs it (``runtime_env`` or an image).
"""
from __future__ import annotations

from egorec_ros.converter.episode_job import ConvertSettings, EpisodeJob, EpisodeOutcome, convert_episode
from egorec_ros.converter.errors import ConvertOptionError
from egorec_ros.converter.failures import SharedFilesystemError
from egorec_ros.converter.runners import POLL_S, OnProgress, QueueProgress, drain
from egorec_ros.converter.work_dir import check_shared


def _ray():
    try:
        import ray
    except ImportError:
        raise ConvertOptionError("--ray needs the ray package: pip install 'egorec_ros[ray]' (or pip install ray)") from None
    return ray


def _run_on_ray(job: EpisodeJob, settings: ConvertSettings, events) -> EpisodeOutcome:
    return convert_episode(job, settings, QueueProgress(events, job.order))


class RayRunner:
    def __init__(self, settings: ConvertSettings, address: str | None, workers: int | None,
                 probe: tuple[str, str], on_progress: OnProgress) -> None:
        ray = _ray()
        from ray.util.queue import Empty, Queue

        self._ray, self._empty, self._on_progress = ray, Empty, on_progress
        self._owns = not ray.is_initialized()
        if self._owns:
            ray.init(address=address, num_cpus=workers if address is None else None, include_dashboard=False,
                     log_to_driver=False, configure_logging=False)
        self._refs: dict[int, tuple[EpisodeJob, object]] = {}
        try:
            self._events = Queue()
            self._settings = ray.put(settings)
            self._task = ray.remote(num_cpus=1, max_retries=0)(_run_on_ray)
            try:
                ray.get(ray.remote(num_cpus=1)(check_shared).remote(*probe))
            except ray.exceptions.RayTaskError as exc:
                raise exc.cause if isinstance(exc.cause, SharedFilesystemError) else exc from None
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
        except self._ray.exceptions.RayError as exc:      # the worker died, the node went away, ...
            return EpisodeOutcome(job.order, job.bag, job.window,
                                  error=f"{job.bag}: the Ray task converting {job.window.reason} failed: {exc}")
        finally:
            drain(self._events, self._on_progress, self._empty)

    def close(self) -> None:
        """Cancel what still runs (what it staged goes with the run's work folder)."""
        for _, ref in self._refs.values():
            self._ray.cancel(ref, force=True)
        self._refs.clear()
        if self._owns:
            self._ray.shutdown()
