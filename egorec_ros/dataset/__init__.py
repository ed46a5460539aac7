"""Read pooled_episodes_v1 task directories::

    from egorec_ros.dataset import open_task
    task = open_task("data/recordings/pick_cup")
    for ep in task:
        table = ep.read(["frame_index", "observation.gripper_left_force"])
        rows, matrices = ep.force_matrices("observation.gripper_left_force_matrix")
        traj = ep.trajectory("observation.slam_trajectory")
"""
from egorec_ros.dataset.episode import Episode, Trajectory
from egorec_ros.dataset.pairing import nearest
from egorec_ros.dataset.task import DatasetError, Task, open_task

__all__ = ["DatasetError", "Episode", "Task", "Trajectory", "nearest", "open_task"]
