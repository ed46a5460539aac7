"""egorec recorder --rig RIG --out ROOT: the recorder node over DDS (no ROS needed), driven by
`egorec ctl`, `ros2 service call`, or a marker topic. Ctrl-C / SIGTERM commits the running episode."""
from __future__ import annotations

import signal
import sys
import threading

from egorec_ros.cli import options


def add_parser(sub) -> None:
    p = sub.add_parser("recorder", help="run the recorder node over DDS: records the rig's topics, episodes started "
                                        "and stopped with `egorec ctl`, ROS services or a marker topic")
    options.add_rig_options(p)
    p.add_argument("--out", default="egorec_data", help="dataset root; episodes go to ROOT/TASK")
    p.add_argument("--task", help="task folder (default: the rig name); `ctl start --task` may switch it")
    p.add_argument("--name", default="egorec_recorder", help="node name: services and status under /NAME/")
    p.add_argument("--marker", help="marker topic: std_msgs/String start/stop words, or std_msgs/Bool with "
                                    "--marker-type bool (true = recording)")
    p.add_argument("--marker-type", choices=("string", "bool"), default="string")
    p.add_argument("--qos", action="append", default=[], metavar="[STREAM=]PROFILE",
                   help="subscription QoS: recorder (default, best effort: matches every publisher), default or "
                        "sensor_data; STREAM=PROFILE for one stream (repeatable)")
    p.add_argument("--start-words", default="start", help="comma-separated words that start an episode")
    p.add_argument("--stop-words", default="stop", help="comma-separated words that stop an episode")
    options.add_recording_options(p)
    up = p.add_argument_group("upload (each committed episode goes to the server; see `egorec upload`)")
    up.add_argument("--upload-server", help="send every committed episode to this collection server, in the "
                                            "background below the recorder's priority (aborted ones never go)")
    up.add_argument("--upload-project", default="", help="project name or id on the server")
    up.add_argument("--upload-user", help="login user (password: $EGOREC_UPLOAD_PASSWORD or the 0600 credentials "
                                          "file)")
    up.add_argument("--upload-limit-mbps", type=float, default=0.0, help="upload bandwidth limit, megabit/s")
    up.add_argument("--upload-insecure", action="store_true", help="do not verify the server's TLS certificate")
    up.add_argument("--upload-delete-after", action="store_true",
                    help="delete each episode locally once the server has confirmed it (its number is not reused)")
    p.set_defaults(run=run)


def run(args) -> int:
    from pathlib import Path

    from egorec_ros.assembly.assembler import AssemblyConfig
    from egorec_ros.messages.payloads.markers import BOOL, STRING
    from egorec_ros.live.node import NodeConfig, RecorderNode
    from egorec_ros.transport.base import stream_qos
    from egorec_ros.transport.dds import DdsTransport
    from egorec_ros.upload.background import upload_config

    rig = options.rig_from(args)
    config = NodeConfig(out=Path(args.out), task=args.task or rig.name, codec=options.codec_from(args),
                        depth_container=args.depth, assembly=AssemblyConfig(**options.given(latency_ms=args.latency_ms)),
                        name=args.name, marker=args.marker, marker_type=BOOL if args.marker_type == "bool" else STRING,
                        start_words=tuple(args.start_words.split(",")), stop_words=tuple(args.stop_words.split(",")),
                        qos=stream_qos(args.qos, [s.id for s in rig.streams.values() if s.topic]),
                        **upload_config(args.upload_server, args.upload_project, args.upload_user,
                                        args.upload_limit_mbps, not args.upload_insecure, args.upload_delete_after))
    stopped = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stopped.set())
    transport = DdsTransport()
    try:
        node = RecorderNode(rig, transport, config)
        print(f"recorder /{args.name}: rig {rig.name}, {len(node.live.topics)} topics, task folder "
              f"{config.out / node.task}; waiting for /{args.name}/start", file=sys.stderr, flush=True)
        stopped.wait()
        print("stopping: committing the running episode, if any", file=sys.stderr, flush=True)
        node.close()
    finally:
        transport.close()
    return 0
