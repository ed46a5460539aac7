"""Camera-optical axes from a trajectory's declared frame (§6.6 frame/frame_axes).

A trajectory point [x, y, z, qx, qy, qz, qw] is the pose of the device body in the SLAM
world: p_world = R(q) p_body + t, the body's axes being the ones ``frame_axes`` names
("+X": "down" ...). EgoSmith wants a world->camera matrix of the camera-*optical* frame
(+X right, +Y down, +Z forward), so the body axes are re-expressed by direction words
(§8.2.5: align by the words, never by the axis letters)."""
from __future__ import annotations

import numpy as np

OPTICAL = ("right", "down", "forward")
_OPPOSITE = {"right": "left", "left": "right", "down": "up", "up": "down",
             "forward": "backward", "backward": "forward", "back": "forward"}
OLD_FRAME = "right_forward_up"   # §8.2.5: no frame key = the old frame
OLD_AXES = {"+X": "right", "+Y": "forward", "+Z": "up"}


class FrameError(ValueError):
    """A trajectory frame whose axes do not name the camera's right/down/forward."""


def body_from_optical(frame_axes: dict[str, str], *, where: str) -> np.ndarray:
    """3x3 R with p_body = R p_optical: column j is optical axis j in body coordinates."""
    words = {axis: str(frame_axes.get(f"+{axis}", "")).lower() for axis in "XYZ"}
    out = np.zeros((3, 3))
    for j, want in enumerate(OPTICAL):
        for i, axis in enumerate("XYZ"):
            if words[axis] == want:
                out[i, j] = 1.0
            elif _OPPOSITE.get(words[axis]) == want:
                out[i, j] = -1.0
        if np.count_nonzero(out[:, j]) != 1:
            raise FrameError(f"{where}: frame_axes {frame_axes} do not say which body axis points {want}; "
                             "a head camera pose needs right/left, down/up and forward/backward axes")
    if not np.isclose(np.linalg.det(out), 1.0):
        raise FrameError(f"{where}: frame_axes {frame_axes} are not a right-handed frame")
    return out


def world_to_camera(rotation: np.ndarray, translation: np.ndarray, body_optical: np.ndarray) -> np.ndarray:
    """(N, 4, 4) w2c from body->world poses (N, 3, 3), (N, 3) and the body<-optical axes."""
    r_wc = rotation @ body_optical                      # optical -> world
    out = np.zeros(rotation.shape[:-2] + (4, 4))
    r_cw = np.swapaxes(r_wc, -1, -2)
    out[..., :3, :3] = r_cw
    out[..., :3, 3] = -np.einsum("...ij,...j->...i", r_cw, translation)
    out[..., 3, 3] = 1.0
    return out
