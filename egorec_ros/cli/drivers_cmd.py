"""egorec drivers --rig RIG [--device ID=WHERE ...]: run the drivers of a rig's devices over DDS
(no ROS needed); their messages go on the rig's topics, their health on /diagnostics.
Ctrl-C / SIGTERM stops them (SDK and SLAM processes included)."""
from __future__ import annotations

import signal
import sys
import threading

from egorec_ros.cli import options


def add_parser(sub) -> None:
    p = sub.add_parser("drivers", help="run the device drivers of a rig over DDS (USB/BLE gloves, UMI gripper board, "
                                       "SLAM bridge, S80, camera IPC, UVC): the recorder records what they publish")
    options.add_rig_options(p)
    p.add_argument("--device", action="append", default=[], metavar="ID[.STREAM]=WHERE",
                   help="where a device is, when it is not found by its key: a serial port (left_glove=/dev/ttyACM0), "
                        "a BLE address, a V4L2 device or video file (cam=/dev/video2), a capture-service socket "
                        "(cam=ipc:/run/cam.sock, gripper.rgb=ipc:...), an S80 SDK command (s80=cmd:'s80_pipe ...') or "
                        "a SLAM command (ego.slam='/opt/orbslam/run ...'); repeatable")
    p.add_argument("--name", default="egorec_drivers", help="node name in /diagnostics")
    p.add_argument("--no-discover", action="store_true",
                   help="do not look for plugged-in serial devices and cameras (use only --device places)")
    p.set_defaults(run=run)


def run(args) -> int:
    from egorec_ros.live import driver_plan
    from egorec_ros.live.drivers_node import DriversNode
    from egorec_ros.transport.dds import DdsTransport

    rig = options.rig_from(args)
    plan = driver_plan.plan_here(rig, args.device, discover=not args.no_discover)
    idle = driver_plan.nothing_to_drive(rig, plan)
    if idle:
        print(idle, file=sys.stderr)
        return 0
    stopped = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stopped.set())
    with DdsTransport() as transport:
        node = DriversNode(rig, transport, plan, name=args.name).start()
        stopped.wait()
        print("stopping the drivers", file=sys.stderr, flush=True)
        node.close()
    return 0
