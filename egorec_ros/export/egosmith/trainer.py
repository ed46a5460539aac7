"""What the EgoSteer trainer computes from EgoSmith shards, and which training samples it drops
(egosteer/egosteer src/dataset: wds_dataset.py windows, vla_dataset.py ``sample_to_data``,
data_transforms.py ``process_state_action``, sanity_checks.py ``DataChecker``,
normalizer_utils.py; config src/config/data/unified_wds.yaml), with numpy.

A training sample is a window anchored at each frame of an episode (samples grouped by meta
(dataset_name, episode_index), in shard order): 6 state rows and 6 images 30 frames apart,
ending at the anchor (the episode's first frame repeated before its start), and up to 32
action rows from the anchor on (cut at the episode's end). The trainer turns them into
the wrist in the anchor's camera frame, fingertips in their wrist's frame, actions relative
to the last state (use_relative_action), and normalises states and actions with q01/q99
stats of those processed rows (rot6d dims 6:18 left as they are). Here the normaliser is
fitted on the checked shards, as the trainer's compute_norm_stats would on them alone.

A dropped sample is reported by the name of the DataChecker error that drops it (the first
check that fails, in the trainer's order). Not modelled: colour augmentation (train mode
only), the 384x384 resize before the image check (the check runs on the stored image), which
rows the normaliser's 1e6-row reservoir keeps past 1e6 (a seeded uniform sample here), depth
unless ``load_depth``."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np

from egorec_ros.export.egosmith.meta import PLACEHOLDERS

STATE_HORIZON, STATE_STRIDE = 6, 30
IMAGE_HORIZON, IMAGE_STRIDE = 6, 30
ACTION_HORIZON = 32
TRANSLATION_M, ROTATION_RAD, FINGERTIPS_M = 2.5, 10.0, 2.5      # unified_wds.yaml sanity_checks
ORTHOGONALITY = 0.1
OUTLIER = 10.0                                                   # DataChecker.POST_NORMALIZE_OUTLIER_THRESHOLD
NOT_NORMALISED = slice(6, 18)
RANGE_EPS = 1e-4
RESERVOIR = 1_000_000          # rows the normaliser's StreamingStats keeps for its quantiles
CHUNK = 2048                   # windows processed at once


@dataclass
class Frame:
    """One stored sample as the trainer sees it."""

    key: str
    episode: tuple[str, int]          # meta (dataset_name, episode_index)
    lowdim: np.ndarray                # (116,) float32
    instruction: object
    instruction_num: object
    image_bad: str | None             # ImageQualityError reason of this frame's image, or None
    depth_bad: str | None = None      # DepthQualityError reason, or None


def image_problem(image: np.ndarray) -> str | None:
    """sanity_checks.check_image_quality for one frame (uint8 HxWx3)."""
    flat = image.reshape(-1, 3).astype(np.float64)
    mean, std = flat.mean(axis=0), flat.std(axis=0)
    if mean.min() < 5.0 or mean.max() > 250.0:
        return "channel mean outside [5, 250]"
    if std.min() < 3.0:
        return "channel std < 3"
    return None


def depth_problem(depth: np.ndarray) -> str | None:
    """check_depth_quality on the trainer's metres (uint16 mm / 1000)."""
    d = depth.astype(np.float32) / 1000.0 if depth.dtype == np.uint16 else depth
    if not np.isfinite(d).all():
        return "non-finite depth"
    return "fewer than 5 % valid depth pixels" if (d > 0).mean() < 0.05 else None


# ---- geometry (src/utils/geometry.py) ------------------------------------------------------

def _normalize(v: np.ndarray) -> np.ndarray:
    return v / np.maximum(np.linalg.norm(v, axis=-1, keepdims=True), 1e-12)


def rot_from_6d(r6: np.ndarray) -> np.ndarray:
    """rot_matrix_from_6drot: Gram-Schmidt, columns [a, b, a x b]."""
    a = _normalize(r6[..., :3])
    b = r6[..., 3:] - np.sum(a * r6[..., 3:], axis=-1, keepdims=True) * a
    b = _normalize(b)
    return np.stack([a, b, np.cross(a, b)], axis=-1)


def homo(trans: np.ndarray, r6: np.ndarray) -> np.ndarray:
    out = np.zeros(trans.shape[:-1] + (4, 4))
    out[..., :3, :3] = rot_from_6d(r6)
    out[..., :3, 3] = trans
    out[..., 3, 3] = 1.0
    return out


def inverse(m: np.ndarray) -> np.ndarray:
    """torch.linalg.pinv of poses built by ``homo``: the rigid inverse where the rotation is
    orthonormal (always, unless a rot6d column was zero), the pseudo-inverse elsewhere."""
    r, t = m[..., :3, :3], m[..., :3, 3]
    rt = np.swapaxes(r, -1, -2)
    out = np.zeros_like(m)
    out[..., :3, :3] = rt
    out[..., :3, 3] = -np.einsum("...ij,...j->...i", rt, t)
    out[..., 3, 3] = 1.0
    rigid = np.abs(rt @ r - np.eye(3)).max(axis=(-2, -1)) < 1e-9
    if not rigid.all():
        out[~rigid] = np.linalg.pinv(m[~rigid])
    return out


def _to_6d(m: np.ndarray) -> np.ndarray:
    return np.concatenate([m[..., :3, 0], m[..., :3, 1]], axis=-1)


def wrist_in_camera(wrist: np.ndarray, w2c: np.ndarray) -> np.ndarray:
    """transform_wrist_to_target_frame: (..., 18) world -> camera, [tl, tr, r6l, r6r]."""
    sides = [w2c[..., None, :, :] @ homo(wrist[..., 3 * h:3 * h + 3], wrist[..., 6 + 6 * h:12 + 6 * h])
             for h in range(2)]
    sides = [np.where(np.isnan(m), 0.0, m) for m in sides]
    return np.concatenate([sides[0][..., :3, 3], sides[1][..., :3, 3], _to_6d(sides[0]), _to_6d(sides[1])], axis=-1)


def tips_in_wrist(tips: np.ndarray, wrist: np.ndarray) -> np.ndarray:
    """transform_hand_points_to_wrist_frame: (..., 30) world points -> each hand's wrist frame
    (pinv of the wrist pose; cartesian = xyz / (w + 1e-6), as the trainer divides)."""
    out = []
    for h in range(2):
        inv = inverse(homo(wrist[..., 3 * h:3 * h + 3], wrist[..., 6 + 6 * h:12 + 6 * h]))
        pts = tips[..., 15 * h:15 * h + 15].reshape(tips.shape[:-1] + (5, 3))
        p = np.einsum("...ij,...kj->...ki", inv[..., :3, :3], pts) + inv[..., None, :3, 3]
        w = np.einsum("...j,...kj->...k", inv[..., 3, :3], pts) + inv[..., None, 3, 3]
        out.append((p / (w[..., None] + 1e-6)).reshape(tips.shape[:-1] + (15,)))
    return np.concatenate(out, axis=-1)


def relative_action(state_last: np.ndarray, action: np.ndarray) -> np.ndarray:
    """get_relative_action: wrist = pinv(state) @ action, fingertips minus the state's."""
    out = action.copy()
    for h in range(2):
        s = homo(state_last[..., 3 * h:3 * h + 3], state_last[..., 6 + 6 * h:12 + 6 * h])
        a = homo(action[..., 3 * h:3 * h + 3], action[..., 6 + 6 * h:12 + 6 * h])
        rel = inverse(s)[..., None, :, :] @ a
        out[..., 3 * h:3 * h + 3] = rel[..., :3, 3]
        out[..., 6 + 6 * h:12 + 6 * h] = _to_6d(rel)
    out[..., 18:] = action[..., 18:] - state_last[..., None, 18:]
    return out


# ---- DataChecker rules ------------------------------------------------------------------------

def _orthogonality_error(r6: np.ndarray) -> np.ndarray:
    c1 = r6[..., :3] / (np.linalg.norm(r6[..., :3], axis=-1, keepdims=True) + 1e-8)
    c2 = r6[..., 3:] / (np.linalg.norm(r6[..., 3:], axis=-1, keepdims=True) + 1e-8)
    return np.abs(np.sum(c1 * c2, axis=-1))


def rot6d_bad(x: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """check_rot6d_quality over rows (W, R, >=18) where ``valid`` (W, R) -> (W,)."""
    r6 = np.stack([x[..., 6:12], x[..., 12:18]], axis=-2)
    bad = ~np.isfinite(r6).all(axis=-1) | (_orthogonality_error(r6) > ORTHOGONALITY)
    return (bad.any(axis=-1) & valid).any(axis=-1)


def _rot_loose(r6: np.ndarray) -> np.ndarray:
    """sanity_checks._rot6d_to_rotation_matrix: each column normalised, no Gram-Schmidt."""
    c1 = r6[..., :3] / (np.linalg.norm(r6[..., :3], axis=-1, keepdims=True) + 1e-8)
    c2 = r6[..., 3:] / (np.linalg.norm(r6[..., 3:], axis=-1, keepdims=True) + 1e-8)
    c3 = np.cross(c1, c2)
    c3 = c3 / (np.linalg.norm(c3, axis=-1, keepdims=True) + 1e-8)
    return np.stack([c1, c2, c3], axis=-1)


def _angle(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    rel = _rot_loose(b) @ np.swapaxes(_rot_loose(a), -1, -2)
    cos = np.clip((np.clip(np.trace(rel, axis1=-2, axis2=-1), -1.0, 3.0) - 1.0) / 2.0, -1.0, 1.0)
    angle = np.arccos(cos)
    return np.where(np.isfinite(angle), angle, 0.0)


def step_too_big(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """check_state_action_extreme_delta's pair metric for 48-d rows a -> b: (...,) bool."""
    translation = np.linalg.norm(np.abs(b[..., :6] - a[..., :6]), axis=-1)
    rotation = np.maximum(_angle(a[..., 6:12], b[..., 6:12]), _angle(a[..., 12:18], b[..., 12:18]))
    d = (b[..., 18:48] - a[..., 18:48]).reshape(a.shape[:-1] + (10, 3))
    tips = np.linalg.norm(np.abs(d), axis=-1).mean(axis=-1)
    return (translation > TRANSLATION_M) | (rotation > ROTATION_RAD) | (tips > FINGERTIPS_M)


def instruction_bad(instruction: object, num: object) -> bool:
    if instruction is None:
        return True
    try:
        n = int(num) if num is not None else 0        # type: ignore[call-overload]
    except (TypeError, ValueError):
        return True
    if n <= 0:
        return True
    texts = instruction if isinstance(instruction, (list, tuple)) else [instruction]
    return all(not isinstance(t, str) or not t.strip() or t.strip().lower() in PLACEHOLDERS for t in texts)


def intrinsic_bad(k: np.ndarray) -> bool:
    return not np.isfinite(k).all() or not (0 < k[0] < 10000 and 0 < k[1] < 10000)


def extrinsic_bad(m: np.ndarray) -> bool:
    m = m.reshape(4, 4)
    return not np.isfinite(m).all() or not np.allclose(m[3], [0, 0, 0, 1], atol=1e-3) or \
        abs(float(np.linalg.det(m[:3, :3].astype(np.float64))) - 1.0) > 0.1


# ---- windows -------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Windows:
    state: np.ndarray      # (W, 6) frame numbers of the state rows
    image: np.ndarray      # (W, 6) frame numbers of the images
    action: np.ndarray     # (W, 32) frame numbers of the action rows (clipped)
    action_valid: np.ndarray   # (W, 32) bool


def windows(episodes: list[tuple[str, int]]) -> Windows:
    """One window per frame; ``episodes`` is each frame's episode key, in stream order (a new
    key starts a new episode, as sliding_window_compose does)."""
    n = len(episodes)
    start = np.zeros(n, dtype=np.int64)
    end = np.full(n, n, dtype=np.int64)
    s = 0
    for i in range(1, n + 1):
        if i == n or episodes[i] != episodes[i - 1]:
            start[s:i], end[s:i], s = s, i, i
    at = np.arange(n)
    back = np.arange(STATE_HORIZON - 1, -1, -1) * STATE_STRIDE
    state = np.maximum(at[:, None] - back, start[:, None])
    image = np.maximum(at[:, None] - np.arange(IMAGE_HORIZON - 1, -1, -1) * IMAGE_STRIDE, start[:, None])
    action = at[:, None] + np.arange(ACTION_HORIZON)
    valid = action < end[:, None]
    return Windows(state, image, np.minimum(action, end[:, None] - 1), valid)


def _processed(x: np.ndarray, w: Windows, anchors: slice) -> tuple[np.ndarray, np.ndarray]:
    """process_state_action (fingertips, relative actions) without the normaliser for the
    windows anchored at frames ``anchors``: states (W, 6, 48) and actions (W, 32, 48) (rows
    past ``action_valid`` are padding)."""
    s_rows, a_rows = x[w.state].astype(np.float64), x[w.action].astype(np.float64)
    ws, hs = s_rows[..., 0:18], s_rows[..., 18:48]
    wa, ha = a_rows[..., 48:66], a_rows[..., 66:96]
    w2c = x[anchors, 96:112].astype(np.float64).reshape(-1, 4, 4)
    state = np.concatenate([wrist_in_camera(ws, w2c), tips_in_wrist(hs, ws)], axis=-1)
    action = np.concatenate([wrist_in_camera(wa, w2c), tips_in_wrist(ha, wa)], axis=-1)
    return state, relative_action(state[:, -1], action)


def _raw_reasons(x: np.ndarray, w: Windows) -> np.ndarray:
    """Per window, the first failing check on raw lowdim: NonFinite, Rot6D, ExtremeDelta ('' = none)."""
    ws, wa = x[w.state][..., :48], x[w.action][..., 48:96]
    valid_s = np.ones(w.state.shape, dtype=bool)
    finite = np.isfinite(ws).all(axis=(1, 2)) & (np.isfinite(wa).all(axis=2) | ~w.action_valid).all(axis=1)
    rot = rot6d_bad(ws, valid_s) | rot6d_bad(wa, w.action_valid)
    with np.errstate(invalid="ignore", over="ignore"):
        pair = step_too_big(ws[:, -1], wa[:, 0])
        inner_s = step_too_big(ws[:, :-1], ws[:, 1:]).any(axis=1)
        inner_a = (step_too_big(wa[:, :-1], wa[:, 1:]) & w.action_valid[:, 1:]).any(axis=1)
    out = np.full(len(x), "", dtype=object)
    out[pair | inner_s | inner_a] = "ExtremeStateActionDeltaError"
    out[rot] = "Rot6DInvalidError"
    out[~finite] = "NonFiniteDataError"
    return out


def fit_normaliser(states: np.ndarray, actions: np.ndarray) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """LinearNormalizer 'limits' from q01/q99 (float32), range < 1e-4 centred, dims 6:18 left as they are."""
    out = {}
    for name, rows in (("states", states), ("actions", actions)):
        lo = np.quantile(rows, 0.01, axis=0).astype(np.float32)
        hi = np.quantile(rows, 0.99, axis=0).astype(np.float32)
        span = hi - lo
        flat = span < RANGE_EPS
        span[flat] = 2.0
        scale = (2.0 / span).astype(np.float32)
        offset = (-1.0 - scale * lo).astype(np.float32)
        offset[flat] = (0.0 - lo[flat]).astype(np.float32)
        scale[NOT_NORMALISED], offset[NOT_NORMALISED] = 1.0, 0.0
        out[name] = (scale, offset)
    return out


def _sub(w: Windows, part: slice) -> Windows:
    return Windows(w.state[part], w.image[part], w.action[part], w.action_valid[part])


def _reservoir(rows: list[np.ndarray], cap: int, rng: np.random.Generator) -> np.ndarray:
    """All rows, or (past ``cap``, as the normaliser's reservoir) a uniform sample of ``cap``."""
    allrows = np.concatenate(rows) if rows else np.zeros((0, 48))
    return allrows if len(allrows) <= cap else allrows[np.sort(rng.choice(len(allrows), cap, replace=False))]


def check(frames: list[Frame], *, load_depth: bool = False, chunk: int | None = None) -> dict:
    """Per frame (= training sample anchored there): the DataChecker error that drops it, or ''.
    Two passes over windows in chunks (memory stays bounded): fit the normaliser on what the
    normaliser's dataset keeps, then normalise."""
    n = len(frames)
    reasons = np.full(n, "", dtype=object)
    if n == 0:
        return {"reasons": reasons, "normaliser_rows": {"states": 0, "actions": 0}}
    x = np.stack([f.lowdim for f in frames]).astype(np.float32)
    w = windows([f.episode for f in frames])
    raw = _raw_reasons(x, w)
    lowlevel_ok = (raw == "") & np.array([not extrinsic_bad(f.lowdim[96:112]) for f in frames])
    proc_rot = np.zeros(n, bool)
    fit_states: list[np.ndarray] = []
    fit_actions: list[np.ndarray] = []
    step = chunk or CHUNK
    parts = [slice(a, min(a + step, n)) for a in range(0, n, step)]
    for part in parts:
        sw = _sub(w, part)
        with np.errstate(all="ignore"):
            state, action = _processed(x, sw, part)
        finite = np.isfinite(state).all(axis=(1, 2)) & (np.isfinite(action).all(axis=2) | ~sw.action_valid).all(axis=1)
        proc_rot[part] = rot6d_bad(state, np.ones(sw.state.shape, bool)) | rot6d_bad(action, sw.action_valid)
        fit = lowlevel_ok[part] & finite & ~proc_rot[part]          # what VLALowLevelWdsDataset keeps
        fit_states.append(state[fit].reshape(-1, 48))
        fit_actions.append(action[fit][sw.action_valid[fit]])
    rng = np.random.default_rng(0)
    rows_s, rows_a = _reservoir(fit_states, RESERVOIR, rng), _reservoir(fit_actions, RESERVOIR, rng)
    counted = {"states": int(sum(len(r) for r in fit_states)), "actions": int(sum(len(r) for r in fit_actions))}
    del fit_states, fit_actions
    outlier, n_finite = np.zeros(n, bool), np.zeros(n, bool)
    if len(rows_s) and len(rows_a):
        norm = fit_normaliser(rows_s, rows_a)
        for part in parts:
            sw = _sub(w, part)
            with np.errstate(all="ignore"):
                state, action = _processed(x, sw, part)
                ns = state.astype(np.float32) * norm["states"][0] + norm["states"][1]
                na = action.astype(np.float32) * norm["actions"][0] + norm["actions"][1]
                outlier[part] = (np.abs(ns).max(axis=(1, 2)) > OUTLIER) | \
                    (np.where(sw.action_valid[..., None], np.abs(na), 0).max(axis=(1, 2)) > OUTLIER)
            n_finite[part] = np.isfinite(ns).all(axis=(1, 2)) & \
                (np.isfinite(na).all(axis=2) | ~sw.action_valid).all(axis=1)
    image_bad = np.array([f.image_bad is not None for f in frames])
    depth_bad = np.array([f.depth_bad is not None for f in frames]) if load_depth else np.zeros(n, bool)
    for i, f in enumerate(frames):            # in the order sample_to_data runs the checks
        if intrinsic_bad(f.lowdim[112:116]):
            reasons[i] = "IntrinsicInvalidError"
        elif extrinsic_bad(f.lowdim[96:112]):
            reasons[i] = "ExtrinsicInvalidError"
        elif instruction_bad(f.instruction, f.instruction_num):
            reasons[i] = "InstructionInvalidError"
        elif raw[i]:
            reasons[i] = raw[i]
        elif not n_finite[i]:
            reasons[i] = "NonFiniteDataError"
        elif proc_rot[i]:
            reasons[i] = "Rot6DInvalidError"
        elif image_bad[w.image[i]].any():
            reasons[i] = "ImageQualityError"
        elif depth_bad[w.image[i]].any():
            reasons[i] = "DepthQualityError"
        elif outlier[i]:
            reasons[i] = "OutlierDataError"
    return {"reasons": reasons, "normaliser_rows": counted}


def summary(frames: list[Frame], reasons: np.ndarray) -> dict:
    per: dict[str, dict] = {}
    for f, why in zip(frames, reasons):
        e = per.setdefault(f.key.rsplit("_f", 1)[0], {"frames": 0, "dropped": 0, "reasons": Counter()})
        e["frames"] += 1
        if why:
            e["dropped"] += 1
            e["reasons"][why] += 1
    return {k: {**v, "reasons": dict(sorted(v["reasons"].items()))} for k, v in per.items()}
