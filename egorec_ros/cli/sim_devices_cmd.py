"""egorec sim-devices --rig RIG [--seconds S] [--log FILE]: publish a rig's simulated devices over DDS."""
from __future__ import annotations

import signal
import sys

from egorec_ros.cli import options


def add_parser(sub) -> None:
    p = sub.add_parser("sim-devices", help="publish every stream of a rig from simulated devices on its ROS topics "
                                           "over DDS (no ROS needed), with host-clock stamps")
    options.add_rig_options(p)
    p.add_argument("--auto-size", action="store_true",
                   help="publish at the largest of 640x480, 480x360, 320x240 this machine simulates and encodes in "
                        "real time (as `egorec demo`); record with the --size it prints")
    p.add_argument("--seconds", type=float, help="stop after this long (default: until Ctrl-C / SIGTERM)")
    p.add_argument("--seed", type=int, default=0, help="simulation seed")
    p.add_argument("--clean", action="store_true", help="simulate without jitter, drops or stalls")
    p.add_argument("--qos", default="sensor_data", choices=("sensor_data", "default"),
                   help="publisher QoS profile (sensor_data: best effort, like camera drivers)")
    p.add_argument("--log", help="write one line 'STREAM STAMP_NS SENT_NS' per published message to this file")
    p.set_defaults(run=run)


def run(args) -> int:
    from egorec_ros.sim.flaws import CLEAN, DEFAULT
    from egorec_ros.live.sim_publish import SimPublisher
    from egorec_ros.transport.base import qos_from
    from egorec_ros.transport.dds import DdsTransport

    if args.auto_size:
        from egorec_ros.cli import sim_size

        if args.size:
            print("egorec sim-devices: give --size WxH or --auto-size, not both", file=sys.stderr)
            return 2
        chosen, why = sim_size.choose(args.rig)
        for line in why:
            print(line, file=sys.stderr)
        print(f"simulating at {chosen}: record with `egorec record --rig {args.rig} --size {chosen}`",
              file=sys.stderr, flush=True)
        args.size = options.size(chosen)
    rig = options.rig_from(args)
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    log = open(args.log, "w", encoding="utf-8") if args.log else None   # noqa: SIM115 - closed below
    on_sent = (lambda stream, stamp, sent: log.write(f"{stream} {stamp} {sent}\n")) if log else None
    transport = DdsTransport()
    try:
        publisher = SimPublisher(rig, transport, qos=qos_from(args.qos), seed=args.seed,
                                 flaws=CLEAN if args.clean else DEFAULT, seconds=args.seconds, on_sent=on_sent)
        print(f"publishing {len(rig.streams)} streams of rig {rig.name} over DDS", file=sys.stderr, flush=True)
        publisher.start()
        try:
            while not publisher.wait(0.5):
                pass
        except KeyboardInterrupt:
            pass
        finally:
            publisher.stop()
        print("sent: " + ", ".join(f"{k} {v}" for k, v in sorted(publisher.sent.items()))
              + f"; worst delivery behind schedule {publisher.max_lag_ns / 1e6:.0f} ms", file=sys.stderr)
        if publisher.behind:
            print(behind_line(publisher.behind), file=sys.stderr)
    finally:
        transport.close()
        if log:
            log.close()
    return 0


def behind_line(behind: dict[str, int]) -> str:
    """What the simulated devices dropped because this machine could not render in time."""
    from egorec_ros.sim.live import BEHIND_NS

    return (f"dropped (this machine could not render them within {BEHIND_NS / 1e6:.0f} ms of their time, as a "
            "real driver drops frames): " + ", ".join(f"{k} {v}" for k, v in sorted(behind.items()))
            + "; a smaller --size or --auto-size, or a less busy machine, avoids it")
