"""Wrist rotation (wrist -> world) from the palm keypoints, when there are no MANO parameters.

Convention ``palm_keypoints_v1`` (named in meta.json as ``wrist_rotation_source``), on the
21-joint layout wrist, then MCP, PIP, DIP, tip of thumb..little finger:
  y = wrist (0) -> middle MCP (9), normalised;
  z = the back-of-hand normal: (index MCP 5 - little MCP 17) x y for a right hand,
      (little MCP 17 - index MCP 5) x y for a left hand, normalised;
  x = y x z.  R = [x y z] (columns), a proper rotation for either hand.
For the simulated glove skeleton this is the hand frame itself up to a fixed small tilt
(x toward the thumb on the right hand, y along the fingers, z out of the back)."""
from __future__ import annotations

import numpy as np

CONVENTION = "palm_keypoints_v1"
WRIST, INDEX_MCP, MIDDLE_MCP, LITTLE_MCP = 0, 5, 9, 17


def palm_rotation(joints: np.ndarray, *, left: bool) -> np.ndarray:
    """(N, 21, 3) -> (N, 3, 3); degenerate palms (all zero: no hand) give zeros."""
    j = np.asarray(joints, dtype=np.float64)
    y = j[:, MIDDLE_MCP] - j[:, WRIST]
    across = j[:, INDEX_MCP] - j[:, LITTLE_MCP]
    if left:
        across = -across
    y = _unit(y)
    z = _unit(np.cross(across, y))
    x = np.cross(y, z)
    return np.stack([x, y, z], axis=-1)


def _unit(v: np.ndarray) -> np.ndarray:
    norm = np.linalg.norm(v, axis=-1, keepdims=True)
    return np.where(norm > 1e-9, v / np.where(norm > 1e-9, norm, 1.0), 0.0)
