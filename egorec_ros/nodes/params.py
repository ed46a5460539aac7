"""ROS parameters of the egorec nodes -> the ROS-free configuration objects."""
from __future__ import annotations

from pathlib import Path

from rclpy.node import Node

from egorec_ros.assembly.assembler import AssemblyConfig
from egorec_ros.codecs.video import VideoCodec
from egorec_ros.converter.split import BOOL, STRING
from egorec_ros.live.node import NodeConfig
from egorec_ros.rig.compile import RigError
from egorec_ros.rig.load import load_rig
from egorec_ros.rig.model import Rig
from egorec_ros.rig.resize import parse_size, with_video_sizes
from egorec_ros.transport.base import stream_qos
from egorec_ros.upload.background import upload_config


def declare(node: Node, defaults: dict) -> dict:
    return {name: node.declare_parameter(name, value).value for name, value in defaults.items()}


def rig_param(value: str, size: str = "") -> Rig:
    """A built-in rig name or a rig file; ``size`` "WxH" overrides every video size."""
    if not value:
        raise RigError("parameter `rig` is required: a built-in rig name or a rig file (-p rig:=appendix_b)")
    rig = load_rig(value)
    if size:
        rig = with_video_sizes(rig, parse_size(size))
    return rig


RECORDER_DEFAULTS = {
    "rig": "", "size": "", "task": "", "out": "egorec_data", "codec": "h264", "crf": -1, "depth": "mp4",
    "latency_ms": AssemblyConfig.latency_ms, "marker": "", "marker_type": "string",
    "start_words": ["start"], "stop_words": ["stop"], "silent_after_s": 0.5,
    # subscription QoS: a profile for every stream and/or STREAM=PROFILE (recorder | default | sensor_data)
    "qos": ["recorder"],
    # upload each committed episode (issue 22): server address ("" = no upload), project, login user
    # (password from EGOREC_UPLOAD_PASSWORD or the 0600 credentials file), megabit/s limit (0 = none)
    "upload_server": "", "upload_project": "", "upload_user": "", "upload_limit_mbps": 0.0, "upload_insecure": False,
    "upload_delete_after": False,     # delete each episode locally once the server confirmed it
}


def recorder_config(node: Node, params: dict, rig: Rig) -> NodeConfig:
    qos = stream_qos(list(params["qos"]), [s.id for s in rig.streams.values() if s.topic])
    config = NodeConfig(
        out=Path(params["out"]).expanduser(), task=params["task"] or rig.name,
        codec=VideoCodec(name=params["codec"], crf=None if params["crf"] < 0 else params["crf"]),
        depth_container=params["depth"], assembly=AssemblyConfig(latency_ms=float(params["latency_ms"])),
        name=node.get_fully_qualified_name(), marker=params["marker"] or None,
        marker_type=BOOL if params["marker_type"] == "bool" else STRING,
        start_words=tuple(params["start_words"]), stop_words=tuple(params["stop_words"]),
        silent_after_s=float(params["silent_after_s"]), qos=qos,
        **upload_config(params["upload_server"], params["upload_project"], params["upload_user"],
                        float(params["upload_limit_mbps"]), not params["upload_insecure"],
                        bool(params["upload_delete_after"])))
    return config


DRIVERS_DEFAULTS = {
    "rig": "",
    # where devices are, when not found by their key: "ID[.STREAM]=WHERE" (see `egorec drivers --help`)
    "devices": [""],
    "discover": True,          # look for plugged-in serial devices and V4L2 cameras by their keys
}
