"""Writing pooled_episodes_v1 task directories (TaskWriter -> EpisodeWriter)."""
from egorec_ros.store.episode_writer import EmptyEpisodeError, EpisodeResult, EpisodeWriter
from egorec_ros.store.task_writer import TaskWriter, UnfinishedEpisodesError

__all__ = ["EmptyEpisodeError", "EpisodeResult", "EpisodeWriter", "TaskWriter", "UnfinishedEpisodesError"]
