"""Replay mode: a finished, arrival-ordered stream of samples through the assembler
into one episode (the converter and the tests use this; the live recorder does the
same with the wall clock)."""
from __future__ import annotations

from typing import Iterable

from egorec_ros.assembly.assembler import Assembler, AssemblyConfig, AssemblyReport
from egorec_ros.assembly.sample import Sample
from egorec_ros.recorder.episode_output import EpisodeOutput
from egorec_ros.rig.model import Rig
from egorec_ros.store import EpisodeResult, TaskWriter


def record_samples(writer: TaskWriter, rig: Rig, samples: Iterable[Sample], *, start_ns: int, stop_ns: int,
                   task: str | None = None, config: AssemblyConfig = AssemblyConfig(),
                   created_at: float | None = None) -> tuple[EpisodeResult | None, AssemblyReport]:
    """One episode from ``samples`` (in arrival order) between start_ns and stop_ns.
    Returns (None, report) if no row could be built (e.g. no video stream ever delivered)."""
    output = EpisodeOutput(writer, rig, task=task, created_at=created_at)
    assembler = Assembler(rig, output, start_ns=start_ns, config=config)
    try:
        for sample in samples:
            if sample.arrival_ns > stop_ns + assembler.horizon_ns:
                break
            assembler.push(sample)
        report = assembler.finish(stop_ns)
    except BaseException:
        if output.episode is not None:
            output.episode.abort()
        raise
    if output.episode is None:
        return None, report
    return output.episode.end(report.drop_stats()), report
