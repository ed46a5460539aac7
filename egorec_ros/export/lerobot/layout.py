"""LeRobot v3.0 on-disk rules as lerobot 0.6.1 writes them (lerobot/datasets/utils.py,
io_utils.py, dataset_metadata.py; 0.4.4 reads the same files): file templates, chunking,
the default per-frame features, the tasks index name, our provenance feature."""
from __future__ import annotations

CODEBASE_VERSION = "v3.0"
CHUNKS_SIZE = 1000                 # files per chunk folder
DATA_FILES_SIZE_IN_MB = 100        # a data parquet file grows to about this, then a new one starts
VIDEO_FILES_SIZE_IN_MB = 200       # declared; copied videos stay one file per episode

DATA_PATH = "data/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet"
VIDEO_PATH = "videos/{video_key}/chunk-{chunk_index:03d}/file-{file_index:03d}.mp4"
EPISODES_PATH = "meta/episodes/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet"
TASKS_PATH = "meta/tasks.parquet"
TASKS_INDEX = "task"               # 0.6: pd.Index(tasks, name="task"); 0.4.4 left it unnamed
INFO_PATH = "meta/info.json"
STATS_PATH = "meta/stats.json"

DEFAULT_FEATURES = {
    "timestamp": {"dtype": "float32", "shape": [1], "names": None},
    "frame_index": {"dtype": "int64", "shape": [1], "names": None},
    "episode_index": {"dtype": "int64", "shape": [1], "names": None},
    "index": {"dtype": "int64", "shape": [1], "names": None},
    "task_index": {"dtype": "int64", "shape": [1], "names": None},
}
# Our provenance: a per-frame int64 feature (our 1-based episode number) whose feature dict
# carries the source task in its "info". LeRobot keeps declared features and their data
# columns through lerobot-edit-dataset (delete/split/merge), while it drops unknown
# info.json keys (0.6 also warns about them) and extra episodes-table columns.
PROVENANCE = "egorec.episode_index"

QUANTILES = (0.01, 0.10, 0.50, 0.90, 0.99)   # stats keys q01 q10 q50 q90 q99


def chunk_file(n: int, chunks_size: int = CHUNKS_SIZE) -> tuple[int, int]:
    """(chunk_index, file_index) of the n-th file (0-based) of one kind."""
    return n // chunks_size, n % chunks_size
