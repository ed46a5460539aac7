"""Head pose interpolation, frame axes -> camera-optical w2c, and hand keypoints given in the
head camera's frame through a keypoints_output file (§1.4)."""
from __future__ import annotations

import io
import tarfile
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from egorec_ros.dataset import open_task
from egorec_ros.export.egosmith.axes import FrameError, body_from_optical, world_to_camera
from egorec_ros.export.egosmith.head_pose import interpolate
from egorec_ros.export.egosmith.run import export
from egorec_ros.rig.frames import FRAMES


def z_quat(angle: float) -> list[float]:
    return [0.0, 0.0, np.sin(angle / 2), np.cos(angle / 2)]


def test_poses_are_interpolated_at_frame_stamps_within_the_tolerance() -> None:
    ms = 1_000_000
    points = np.array([[0.0, 0, 0, 0, *z_quat(0.0)], [0.1, 1, 2, 3, *z_quat(np.pi / 2)],
                       [0.2, 1, 2, 3, *z_quat(np.pi / 2)]])
    ns = np.array([1000 * ms, 1033 * ms, 1400 * ms])
    frames = np.array([1000 * ms, 1022 * ms, 1033 * ms, 1200 * ms, 900 * ms, 1500 * ms, 0])
    p = interpolate(points, ns, frames, tolerance_ns=100 * ms)
    assert p.valid.tolist() == [True, True, True, False, False, False, False]
    np.testing.assert_allclose(p.translation[1], np.array([1, 2, 3]) * 22 / 33)
    angle = np.pi / 2 * 22 / 33                                   # slerp: the angle is linear in time
    np.testing.assert_allclose(p.rotation[1], [[np.cos(angle), -np.sin(angle), 0], [np.sin(angle), np.cos(angle), 0],
                                               [0, 0, 1]], atol=1e-12)
    np.testing.assert_allclose(p.rotation[2], [[0, -1, 0], [1, 0, 0], [0, 0, 1]], atol=1e-12)
    assert "SLAM gap" in p.why[3] and "outside" in p.why[4] and "outside" in p.why[5] and "no stamp" in p.why[6]


def test_points_without_a_host_stamp_are_never_used() -> None:
    p = interpolate(np.zeros((2, 8)) + [0, 0, 0, 0, 0, 0, 0, 1], np.array([0, 0]), np.array([5]))
    assert not p.valid.any() and "no SLAM point" in p.why[0]


def test_frame_axes_become_camera_optical_by_direction_words() -> None:
    r = body_from_optical(FRAMES["down_left_forward"], where="t")
    assert (r @ [1, 0, 0]).tolist() == [0, -1, 0]                  # right = -left
    assert (r @ [0, 1, 0]).tolist() == [1, 0, 0]                   # down = +X
    assert (r @ [0, 0, 1]).tolist() == [0, 0, 1]                   # forward = +Z
    np.testing.assert_array_equal(body_from_optical(FRAMES["ego_cam_optical"], where="t"), np.eye(3))
    # a body at the world origin, unrotated: the camera looks along the body's forward axis
    w2c = world_to_camera(np.eye(3)[None], np.array([[1.0, 2.0, 3.0]]), r)[0]
    np.testing.assert_allclose(w2c[:3, :3] @ [0, 0, 1], [0, 0, 1])  # world +Z (forward) = camera +Z
    np.testing.assert_allclose(w2c[:3, :3] @ [1, 0, 0], [0, 1, 0])  # world +X (down) = camera +Y (down)
    np.testing.assert_allclose(w2c @ [1, 2, 3, 1], [0, 0, 0, 1])
    with pytest.raises(FrameError, match="right/left"):
        body_from_optical(FRAMES["enu"], where="t")
    with pytest.raises(FrameError, match="right-handed"):
        body_from_optical({"+X": "right", "+Y": "up", "+Z": "forward"}, where="t")


def lowdims(out: Path) -> dict[int, np.ndarray]:
    with tarfile.open(next(out.glob("shard-*.tar"))) as tar:
        return {int(m.name.split(".")[0][-6:]): np.load(io.BytesIO(tar.extractfile(m).read()))
                for m in tar.getmembers() if m.name.endswith(".lowdim.npy")}


def test_camera_frame_keypoints_from_keypoints_output_land_in_the_world(appendix_b_copy: Path, tmp_path: Path) -> None:
    """Episode 1's hands re-expressed in the head camera frame, in keypoints_output/<task>/episode_000001/:
    the export puts them back in the SLAM world (float32 round-off only)."""
    world = export(appendix_b_copy, tmp_path / "world", name="w", episodes=[1])
    assert world["hand_frame"] == "ego_slam_world"
    ep = open_task(appendix_b_copy).episode(1)
    t = ep.read(["frame_index", "hardware_ns", "observation.left_hand_pose", "observation.right_hand_pose"])
    traj = ep.trajectory("observation.ego_slam_trajectory")
    poses = interpolate(traj.points, traj.ns, t.column("hardware_ns").to_numpy())
    w2c = world_to_camera(poses.rotation, poses.translation, np.eye(3))
    columns = {"frame_index": t.column("frame_index")}
    for h in ("left", "right"):
        joints = np.array(t.column(f"observation.{h}_hand_pose").to_pylist()).reshape(-1, 21, 3)
        cam = np.einsum("nij,nkj->nki", w2c[:, :3, :3], joints) + w2c[:, None, :3, 3]
        columns[f"observation.{h}_hand_pose"] = pa.array(list(cam.reshape(-1, 63).astype(np.float32)),
                                                         pa.list_(pa.float32()))
    folder = tmp_path / "keypoints_output" / appendix_b_copy.name / "episode_000001"
    folder.mkdir(parents=True)
    pq.write_table(pa.table(columns).replace_schema_metadata({"frame": "ego_cam_optical"}),
                   folder / "hand_keypoints.parquet")
    cam = export(appendix_b_copy, tmp_path / "cam", name="w", episodes=[1])
    assert cam["hand_frame"] == "ego_cam_optical"
    a, b = lowdims(tmp_path / "world"), lowdims(tmp_path / "cam")
    assert a.keys() == b.keys()
    for f in a:
        np.testing.assert_allclose(b[f][:96], a[f][:96], atol=2e-5)
        np.testing.assert_array_equal(b[f][96:], a[f][96:])


def test_the_rig_declares_the_hand_keypoint_frame_and_refuses_unknown_ones() -> None:
    from egorec_ros.rig.compile import RigError, compile_rig
    doc = {"name": "g", "fps": 30, "devices": {"g": {"kind": "usb_glove", "sensor": "left_glove", "streams": {
        "pressure": {}, "hand_pose": {"frame": "ego_slam_world"}}}}}
    rig = compile_rig(doc)
    assert next(c for c in rig.columns if c.name == "observation.left_hand_pose").feature["frame"] == "ego_slam_world"
    doc["devices"]["g"]["streams"]["hand_pose"]["frame"] = "glove_world"
    with pytest.raises(RigError, match="hand_pose frame 'glove_world' is unknown"):
        compile_rig(doc)
