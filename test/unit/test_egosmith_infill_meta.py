"""EgoSmith export rules that need no consumer: the infill of a hand out of view (EgoSmith's
``_interp_and_smooth_hand_time`` written out plainly here), the producer QA's rot6d rule on
what it gives, and meta.json bytes as EgoSmith's writer builds them."""
from __future__ import annotations

import json

import numpy as np

from egorec_ros.export.egosmith import meta
from egorec_ros.export.egosmith.infill import infill, infill_hand
from egorec_ros.export.egosmith.lowdim import hand_state
from egorec_ros.export.egosmith.producer_qa import rot6d_sane
from egorec_ros.export.egosmith.rotations import quat_to_matrix


def egosmith_interp_and_smooth(y: np.ndarray, valid: np.ndarray, k: int = 5) -> np.ndarray:
    """One value over time, as stages/hawor_infiller_stage.py does it: np.interp between the
    valid frames (held beyond them), then a k-frame mean (edge-padded) on the invalid ones."""
    t = np.arange(len(y), dtype=np.float64)
    out = np.interp(t, t[valid], y[valid])
    smooth = np.convolve(np.pad(out, (k // 2, k - 1 - k // 2), mode="edge"), np.ones(k) / k, mode="valid")
    out[~valid] = smooth[~valid]
    return out


def z_rotation(angle: float) -> np.ndarray:
    return quat_to_matrix(np.array([0.0, 0.0, np.sin(angle / 2), np.cos(angle / 2)]))


def test_an_unseen_stretch_is_interpolated_held_at_the_ends_and_smoothed() -> None:
    n = 16
    rng = np.random.default_rng(3)
    joints = rng.normal(size=(n, 21, 3))
    seen = np.zeros(n, bool)
    seen[[3, 4, 5, 10, 11]] = True
    joints[~seen] = 0.0                                     # as stored: no hand, all zeros
    rot = np.stack([z_rotation(0.1 * i) for i in range(n)])
    filled, r = infill_hand(joints, rot, seen, seen)
    flat = joints.reshape(n, -1)
    want = np.stack([egosmith_interp_and_smooth(flat[:, d], seen) for d in range(63)], axis=1)
    np.testing.assert_allclose(filled.reshape(n, -1), want, atol=1e-12)
    np.testing.assert_array_equal(filled[seen], joints[seen])        # observations untouched
    np.testing.assert_allclose(filled[0], joints[3], atol=1e-12)    # held before the first sighting
    np.testing.assert_allclose(filled[15], joints[11], atol=1e-12)  # held after the last one
    # rotation: slerp between sightings (frame 7 is 2/5 of the way from 5 to 10), held at the ends
    np.testing.assert_allclose(r[7], z_rotation(0.5 + 0.4 * 0.5), atol=1e-12)
    np.testing.assert_allclose(r[0], rot[3], atol=1e-12)
    np.testing.assert_allclose(r[14], rot[11], atol=1e-12)
    assert np.allclose(np.linalg.det(r), 1.0)


def test_a_hand_never_seen_is_at_the_origin_with_the_identity_and_passes_the_rot6d_rules() -> None:
    n = 6
    joints = np.zeros((n, 2, 21, 3))
    joints[:, 0] = np.random.default_rng(0).normal(size=(n, 21, 3))
    rot = np.stack([np.stack([z_rotation(0.2), np.zeros((3, 3))])] * n)   # right palm degenerate (no hand)
    seen = np.zeros((n, 2), bool)
    seen[:, 0] = True
    j, r = infill(joints, rot, seen, seen)
    assert (j[:, 1] == 0).all() and np.allclose(r[:, 1], np.eye(3))
    state = hand_state(j, r)
    assert all(rot6d_sane(row[s]) for row in state for s in (slice(6, 12), slice(12, 18)))
    zero_rot = hand_state(joints, rot)                     # what the export wrote before: zeros
    assert not rot6d_sane(zero_rot[0, 12:18])


def test_a_single_sighting_is_held_and_a_degenerate_palm_takes_its_neighbours_rotation() -> None:
    n = 5
    joints = np.zeros((n, 21, 3))
    joints[2] = 1.0
    seen = np.zeros(n, bool)
    seen[2] = True
    rot = np.stack([z_rotation(0.3)] * n)
    filled, r = infill_hand(joints, rot, seen, seen)
    assert (filled == 1.0).all() and np.allclose(r, z_rotation(0.3))
    seen[:] = True
    rot_seen = np.array([True, True, False, True, True])
    rot[2] = 0.0
    _, r = infill_hand(np.ones((n, 21, 3)), rot, seen, rot_seen)
    np.testing.assert_allclose(r[2], z_rotation(0.3), atol=1e-12)


def test_meta_has_the_writers_keys_in_its_order_and_presence_last() -> None:
    prefix = meta.meta_prefix(dataset_name="d", clip_id="d_ep000000", episode_index=0, instruction=["pick"],
                              depth=True, wrist_rotation_source="palm_keypoints_v1")
    raw = meta.encode(prefix, 2)
    # manifest_build/writer.py: json.dumps(compact)[:-1] + ',"presence":' + str(p) + '}'
    assert raw == (json.dumps(prefix, ensure_ascii=False, separators=(",", ":"))[:-1] + ',"presence":2}').encode()
    doc = json.loads(raw)
    assert list(doc) == ["dataset_name", "clip_id", "episode_index", "split", "instruction", "instruction_num",
                         "language", "lowdim_schema", "native_feature_source", "wrist_translation_semantics",
                         "camera_extrinsic_convention", "mano_schema", "mano_pose_representation",
                         "mano_betas_representation", "mano_flat_hand_mean", "mano_center_idx",
                         "mano_root_rotation_source", "mano_wrist_translation_source", "depth_schema",
                         "depth_encoding", "wrist_rotation_source", "presence"]
    assert doc["native_feature_source"] is None and doc["mano_center_idx"] == 0 and doc["presence"] == 2
