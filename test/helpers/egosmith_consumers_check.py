"""Run inside .venv-consumers (by test_export_egosmith_consumers.py) with the consumers' own code
checked out beside this repository (never copied into it): read EgoSmith shards with
EgoSmith's ``iter_shard_samples`` and ``quality/wds_sanity.analyze_webdataset``, then with
EgoSteer's ``VLALowLevelWdsDataset`` + ``get_normalizer`` (the normaliser fitted on these
shards) and ``VLAWdsDataset`` (val mode, relative actions, the shape_meta and sanity_checks of
src/config/data/unified_wds.yaml, no world model), counting what its ``DataChecker`` drops.
Prints one JSON object.

usage: python egosmith_consumers_check.py SHARD_DIR EGOSMITH_CHECKOUT EGOSTEER_CHECKOUT"""
from __future__ import annotations

import json
import logging
import os
import re
import sys

SANITY = {"rot6d": {"orthogonality_threshold": 0.1},
          "state_action_delta": {"wrist_translation_threshold": 2.5, "wrist_rotation_threshold": 10.0,
                                 "fingertips_displacement_threshold": 2.5}}
SHAPE_META = {
    "history_pad_mode": "repeat",
    "obs": {"rgb": {"type": "rgb", "horizon": 6, "stride": 30},
            "depth": {"shape": [224, 224], "type": "depth", "horizon": 0, "stride": 1},
            "state": {"wrist": {"shape": [18]}, "hand": {"shape": [30]}, "shape": [48], "type": "fingertips",
                      "horizon": 6, "stride": 30}},
    "action": {"shape": [48], "type": "fingertips", "horizon": 32, "stride": 1, "pad_mode": "truncate"},
    "future_frame": {"horizon": 0, "stride": 1, "pad_mode": "repeat"},
}


class Skips(logging.Handler):
    """DataChecker.log_skip records: (worker, reason class, context with key=..., msg, ...)."""

    def __init__(self) -> None:
        super().__init__()
        self.skips: list[tuple[str, str]] = []

    def emit(self, record: logging.LogRecord) -> None:
        if str(record.msg).startswith("DATA_SKIP") and record.args:
            args = record.args if isinstance(record.args, tuple) else (record.args,)
            key = re.search(r"key=([^,]+)", str(args[2]))
            self.skips.append((key.group(1) if key else "?", str(args[1])))


def egosmith(shards: str, checkout: str) -> dict:
    sys.path.insert(0, os.path.join(checkout, "src"))
    from lib.pipeline.exporters.webdataset_rewriter import iter_shard_paths, iter_shard_samples
    from lib.pipeline.quality.wds_sanity import analyze_webdataset

    keys = [s["key"] for p in iter_shard_paths(shards) for s in iter_shard_samples(p)]
    report = analyze_webdataset(source_shard_dir=shards, decode_images=True)
    return {"samples_read": len(keys), "summary": report["summary"],
            "hard_filter_reason_counts": report["hard_filter_reason_counts"], "checks": report["checks"]}


def egosteer(shards: str, checkout: str) -> dict:
    sys.path.insert(0, checkout)
    from src.dataset.normalizer_utils import get_normalizer
    from src.dataset.sanity_checks import get_data_logger
    from src.dataset.vla_dataset import VLALowLevelWdsDataset, VLAWdsDataset

    handler = Skips()
    get_data_logger().addHandler(handler)
    get_data_logger().handlers = [h for h in get_data_logger().handlers if h is handler]   # no stdout noise
    datasets = [{"shard_urls": os.path.join(shards, "shard-*.tar"), "name": "export"}]
    low = VLALowLevelWdsDataset(wds_datasets=datasets, shape_meta=SHAPE_META, use_relative_action=True,
                                mode="val", sanity_checks=SANITY)
    normaliser = get_normalizer({"batch_size": 64, "num_workers": 0}, low)
    fit_skips = list(handler.skips)
    handler.skips.clear()
    ds = VLAWdsDataset(wds_datasets=datasets, shape_meta=SHAPE_META, use_relative_action=True, mode="val",
                       depth_clip_range=[0.0, 5.0], shuffle_buffer=0, target_image_size=[384, 384],
                       sanity_checks=SANITY)
    ds.set_normalizer(normaliser)
    emitted = sum(1 for _ in ds)
    return {"seen": ds.checker.seen, "skipped": ds.checker.skipped, "emitted": emitted,
            "skips": handler.skips, "normaliser_fit_seen": low.checker.seen, "normaliser_fit_skips": fit_skips}


if __name__ == "__main__":
    logging.disable(logging.NOTSET)
    shard_dir, smith, steer = sys.argv[1:4]
    out = {"egosmith": egosmith(shard_dir, smith), "egosteer": egosteer(shard_dir, steer)}
    print(json.dumps(out))
