"""A tqdm bar for reading one bag, counted in messages of the mapped topics."""
from __future__ import annotations

from tqdm import tqdm

from egorec_ros.converter.bagfile import Bag
from egorec_ros.converter.plan import TopicPlan
from egorec_ros.converter.split import EpisodeWindow


def progress_bar(bag: Bag, plan: TopicPlan, window: EpisodeWindow | None = None, **kwargs) -> tqdm:
    """Its ``update`` is the ``progress`` callback of ``iter_samples``. The total is known for a
    whole bag; for a part of it the bar shows the rate only."""
    whole = window is None or (window.start_ns <= bag.start_ns and window.end_ns >= bag.end_ns)
    total = sum(bag.topics[t].count for t in plan.topics) if whole else None
    return tqdm(total=total, unit="msg", desc=bag.path.name, **kwargs)
