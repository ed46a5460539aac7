"""egorec ctl start|stop|abort|status: drive a running recorder node (DDS or ROS 2) through its services."""
from __future__ import annotations

import sys


def add_parser(sub) -> None:
    p = sub.add_parser("ctl", help="start, stop or abort an episode of a running recorder, or show its status")
    p.add_argument("action", choices=("start", "stop", "abort", "status"))
    p.add_argument("--name", default="egorec_recorder", help="the recorder's node name")
    p.add_argument("--task", default="", help="start: task folder (default: the recorder's current one)")
    p.add_argument("--instruction", default="", help="start: the episode's task text")
    p.add_argument("--timeout", type=float, default=60.0,
                   help="seconds to wait for the recorder (stop waits until the episode is committed)")
    p.set_defaults(run=run)


def run(args) -> int:
    from egorec_ros.live.node import START, STATUS, STOP
    from egorec_ros.messages.decode import deserialize
    from egorec_ros.messages.typestores import ros2_typestore
    from egorec_ros.transport.dds import DdsTransport

    store = ros2_typestore()
    prefix = "/" + args.name.strip("/")
    with DdsTransport() as transport:
        if args.action == "status":
            return _status(transport, store, f"{prefix}/status", STATUS, args.timeout)
        srv = START if args.action == "start" else STOP
        fields = ({"task": args.task, "instruction": args.instruction} if srv == START
                  else {"structure_needs_at_least_one_member": 0})
        request = bytes(store.serialize_cdr(store.types[f"{srv}_Request"](**fields), f"{srv}_Request"))
        try:
            reply = deserialize(f"{srv}_Response", transport.call(f"{prefix}/{args.action}", srv, request,
                                                                  args.timeout))
        except TimeoutError as exc:
            print(f"egorec ctl: {exc}", file=sys.stderr)
            return 3
    print(f"{args.action}: {'ok' if reply.success else 'refused'}: {reply.message} "
          f"(episode_index {reply.episode_index})")
    return 0 if reply.success else 1


def _status(transport, store, topic: str, msgtype: str, timeout: float) -> int:
    import queue

    from egorec_ros.transport.base import RECORDER

    got: queue.Queue = queue.Queue()
    transport.subscribe(topic, msgtype, RECORDER, lambda cdr, _t: got.put(cdr))
    try:
        msg = store.deserialize_cdr(got.get(timeout=timeout), msgtype)
    except queue.Empty:
        print(f"egorec ctl: no status on {topic} within {timeout:g} s; is the recorder running?", file=sys.stderr)
        return 3
    print(f"{msg.state}  task {msg.task}  episode {msg.episode_index}  rows {msg.rows}  "
          f"backlog {msg.encoder_backlog} ({msg.encoder_backlog_key or '-'})  free {msg.free_disk_gb:.1f} GB")
    for s in msg.streams:
        age = "never" if s.last_sample_age_s < 0 else f"{s.last_sample_age_s:.2f} s ago"
        print(f"  {s.stream:32s} {s.rate_hz:7.1f} Hz  last {age:>12s}  received {s.received}  "
              f"invalid {s.invalid}  dropped {s.dropped}  late {s.late}")
    return 0
