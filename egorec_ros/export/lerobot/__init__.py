"""Export a pooled_episodes_v1 task directory as a LeRobot v3.0 dataset
(``egorec export lerobot``); see ``export.export_lerobot``."""
