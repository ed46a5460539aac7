"""egorec ctl start|stop|abort|status|delete|delete-last|list: drive a running recorder node (DDS or
ROS 2) through its services."""
from __future__ import annotations

import json
import math
import sys

ACTIONS = ("start", "stop", "abort", "status", "delete", "delete-last", "list")


def add_parser(sub) -> None:
    p = sub.add_parser("ctl", help="start, stop or abort an episode of a running recorder, delete or list its "
                                   "episodes, or show its status")
    p.add_argument("action", choices=ACTIONS)
    p.add_argument("episode", nargs="?", type=int,
                   help="delete: the episode_index to delete (delete-last: the last committed one)")
    p.add_argument("--name", default="egorec_recorder", help="the recorder's node name")
    p.add_argument("--task", default="", help="start, list: task folder (default: the recorder's current one)")
    p.add_argument("--instruction", default="", help="start: the episode's task text")
    p.add_argument("--json", action="store_true", help="list: print the episodes as JSON")
    p.add_argument("--timeout", type=float, default=60.0,
                   help="seconds to wait for the recorder (stop waits until the episode is committed)")
    p.set_defaults(run=run)


def run(args) -> int:
    from egorec_ros.live.node import DELETE, LIST_EPISODES, START, STATUS, STOP
    from egorec_ros.messages.decode import deserialize
    from egorec_ros.messages.typestores import ros2_typestore
    from egorec_ros.transport.dds import DdsTransport

    if args.action == "delete" and (args.episode is None or args.episode < 1):
        print("egorec ctl: delete needs the episode_index to delete (1-based), e.g. `egorec ctl delete 7`; "
              "`egorec ctl delete-last` deletes the last committed one", file=sys.stderr)
        return 2
    if args.episode is not None and args.action != "delete":
        print(f"egorec ctl: {args.action} takes no episode number", file=sys.stderr)
        return 2
    store = ros2_typestore()
    prefix = "/" + args.name.strip("/")
    srv, service, fields = {
        "start": (START, "start", {"task": args.task, "instruction": args.instruction}),
        "stop": (STOP, "stop", {"structure_needs_at_least_one_member": 0}),
        "abort": (STOP, "abort", {"structure_needs_at_least_one_member": 0}),
        "delete": (DELETE, "delete", {"episode_index": args.episode or 0}),
        "delete-last": (DELETE, "delete", {"episode_index": 0}),
        "list": (LIST_EPISODES, "list_episodes", {"task": args.task}),
        "status": (STATUS, "status", {}),
    }[args.action]
    with DdsTransport() as transport:
        if args.action == "status":
            return _status(transport, store, f"{prefix}/status", STATUS, args.timeout)
        request = bytes(store.serialize_cdr(store.types[f"{srv}_Request"](**fields), f"{srv}_Request"))
        try:
            reply = deserialize(f"{srv}_Response", transport.call(f"{prefix}/{service}", srv, request, args.timeout))
        except TimeoutError as exc:
            print(f"egorec ctl: {exc}", file=sys.stderr)
            return 3
    if not reply.success:
        print(f"{args.action}: refused: {reply.message}")
        return 1
    if srv == LIST_EPISODES:
        return _print_list(reply.task, json.loads(reply.episodes_json), args.json)
    print(f"{args.action}: ok: {reply.message} (episode_index {reply.episode_index})")
    if srv == STOP and reply.verdict:
        print(f"QA: {reply.verdict}" + "".join(f"\n  {r}" for r in reply.reasons))
    return 0


def _print_list(task: str, episodes: list[dict], as_json: bool) -> int:
    if as_json:
        print(json.dumps({"task": task, "episodes": episodes}, ensure_ascii=False, indent=1))
        return 0
    print(f"task {task}: {len(episodes)} episode(s)")
    for e in episodes:
        upload = upload_text(e.get("upload") or {})
        print(f"  {e['episode_index']:5d}  {e['rows']:6d} rows  {e['duration_s']:7.1f} s  "
              f"{e['verdict'] or '-':4s}  {e['instruction']}" + (f"  [upload {upload}]" if upload else ""))
        for reason in e["reasons"]:
            print(f"         {reason}")
    return 0


def upload_text(u: dict) -> str:
    """An episode's upload in the words of the console's Episodes column; "" when the recorder
    uploads nothing, so a lab without a server sees the list as before."""
    state, attempts = u.get("state", "off"), u.get("attempts", 0)
    tries = f"{attempts} attempt{'' if attempts == 1 else 's'}"
    if state == "off":
        return ""
    if state == "pending" and attempts:
        retry = f", retry in {math.ceil(u['retry_in_s'])} s" if u.get("retry_in_s") else ""
        return f"pending ({tries} failed{retry}): {u.get('last_error', '')}"
    if state == "uploading" and "sent" in u:
        return f"uploading {100 * u['sent'] // max(1, u.get('size', 0))} %"
    if state == "done":
        return f"done · session {u.get('session_id', '')}"
    if state == "failed":
        return f"failed after {tries}: {u.get('last_error', '')} (`egorec upload` queues it again)"
    if state == "gone":
        return "gone (deleted before it was sent)"
    return state


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
    print(f"{msg.state} ({msg.stage})  task {msg.task}  episode {msg.episode_index}  rows {msg.rows}  "
          f"backlog {msg.encoder_backlog} ({msg.encoder_backlog_key or '-'})  free {msg.free_disk_gb:.1f} GB")
    if msg.overload:
        print(f"  OVERLOADED: {msg.overload}")
    if msg.udp_drops or msg.callback_drops:
        print(f"  messages lost: {msg.udp_drops} UDP datagrams dropped by the kernel, {msg.callback_drops} samples "
              "dropped unread (recorder behind)")
    if msg.last_episode_index:
        print(f"last episode {msg.last_episode_index}: QA {msg.last_verdict or 'not computed'}"
              + "".join(f"\n  {r}" for r in msg.last_reasons))
    for alarm in msg.alarms:
        print(f"  ALARM {alarm}")
    if msg.upload_server:
        print(f"upload to {msg.upload_server}: {msg.upload}")
    for s in msg.streams:
        age = "never" if s.last_sample_age_s < 0 else f"{s.last_sample_age_s:.2f} s ago"
        print(f"  {s.stream:32s} {s.rate_hz:7.1f} Hz  last {age:>12s}  received {s.received}  "
              f"invalid {s.invalid}  dropped {s.dropped}  late {s.late}")
    return 0
