"""Which payload function turns a message type into a stream's payload.

Decided by the stream's kind and the message type; for LATEST streams also by
the payload fields the stream's columns want (``StreamSpec.columns`` keys), so a
WrenchStamped can feed a ``force`` stream but not a ``state`` one. A topic whose
type cannot feed its stream is refused before any message is read.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from egorec_ros.messages.errors import StreamMappingError
from egorec_ros.messages.payloads import forces, gloves, images, imu, joints, poses
from egorec_ros.messages.context import MessageContext
from egorec_ros.rig.kinds import StreamKind
from egorec_ros.rig.model import StreamSpec
from egorec_ros.messages.msg import Msg


@dataclass(frozen=True)
class Rule:
    payload: Callable[[Msg, MessageContext], Any]
    fields: frozenset[str] = frozenset()                       # LATEST: payload fields it gives
    pick: Callable[[Msg, Mapping[str, object]], Msg | None] | None = None  # sub-message to use
    needs: tuple[str, ...] = ()                                # stream options it cannot do without

    def select(self, msg: Msg, spec: StreamSpec) -> Msg | None:
        """The (sub-)message that feeds ``spec``; None when this message has none for it."""
        return self.pick(msg, spec.source) if self.pick else msg


def _latest(payload: Callable, *fields: str) -> Rule:
    return Rule(payload, frozenset(fields))


RULES: dict[StreamKind, dict[str, Rule]] = {
    StreamKind.VIDEO: {images.IMAGE: Rule(images.video_frame),
                       images.COMPRESSED_IMAGE: Rule(images.compressed_video_frame)},
    StreamKind.DEPTH: {images.IMAGE: Rule(images.depth_frame),
                       images.COMPRESSED_IMAGE: Rule(images.compressed_depth_frame)},
    StreamKind.IMU: {imu.IMU: Rule(imu.imu_payload)},
    StreamKind.TRAJECTORY: {
        poses.SLAM_POSE: Rule(poses.slam_pose_point),
        poses.POSE_STAMPED: Rule(poses.pose_stamped_point),
        poses.POSE_WITH_COVARIANCE_STAMPED: Rule(poses.pose_with_covariance_point),
        poses.ODOMETRY: Rule(poses.odometry_point),
        poses.TRANSFORM_STAMPED: Rule(poses.transform_point),
        poses.TF_MESSAGE: Rule(poses.transform_point, pick=poses.pick_transform, needs=(poses.CHILD_FRAME,)),
    },
    StreamKind.LATEST: {
        forces.WRENCH_STAMPED: _latest(forces.wrench_payload, "force"),
        forces.FORCE_MATRIX: _latest(forces.force_matrix_payload, "matrix"),
        forces.GRIPPER_STATE: _latest(forces.gripper_state_payload, "state"),
        gloves.GLOVE_FRAME: _latest(gloves.glove_payload, "pressure", "imu_quat", "imu_valid"),
        gloves.HAND_POSE: _latest(gloves.hand_pose_payload, "hand_pose"),
        joints.JOINT_STATE: _latest(joints.joint_state_payload, *joints.FIELDS),
    },
}


def accepted_types(spec: StreamSpec) -> list[str]:
    """Message types that can feed this stream."""
    wanted = set(spec.columns) if spec.kind is StreamKind.LATEST else set()
    return [t for t, rule in RULES.get(spec.kind, {}).items() if wanted <= rule.fields]


def rule_for(spec: StreamSpec, topic: str, msgtype: str) -> Rule:
    """The rule that maps ``msgtype`` on ``topic`` to ``spec``; StreamMappingError if none fits."""
    rule = RULES.get(spec.kind, {}).get(msgtype)
    if rule is None or msgtype not in accepted_types(spec):
        wants = f" with fields {sorted(spec.columns)}" if spec.kind is StreamKind.LATEST else ""
        raise StreamMappingError(
            f"topic {topic} carries {msgtype}, which cannot feed stream {spec.id!r} "
            f"({spec.kind.value}{wants}); types it accepts: {', '.join(accepted_types(spec)) or 'none'}")
    for option in rule.needs:
        if not spec.source.get(option):
            raise StreamMappingError(f"topic {topic} carries {msgtype}: stream {spec.id!r} needs the option "
                                     f"`{option}` (which frame of the message is this stream)")
    return rule
