"""DDS transport: Appendix B over DDS, publisher and subscribers in separate processes.

    .venv/bin/python bench/bench_transport.py [--seconds 60] [--size 640x480] [--reliable]
    (set +u; source /opt/ros/humble/setup.bash; .venv/bin/python bench/bench_transport.py)  # + rclpy

One run, processes on loopback (private domain, the loopback Cyclone config):
* the publisher: the rig's messages as drivers publish them (best effort, or reliable with
  ``--reliable``), stamped with the host clock when published, each logged with the host time
  of publishing. Its messages are the simulated devices' first second, rendered and serialized
  before timing and cycled, so the publisher measures the transport and not the simulator's
  renderer (``--sim-devices`` publishes with ``egorec sim-devices`` instead, which renders live
  and lags on a busy machine);
* ``recorder``: ``Recorder`` + ``LiveInput`` over ``DdsTransport`` (decode, assemble, encode,
  write an episode), recording for the whole run;
* ``bare``: the baseline, a bare cyclonedds subscriber of the same topics that decodes and writes
  nothing (the transport's own cost), through the same raw take path. ``ros2 bag record`` would be
  the other baseline: rosbag2 is not built here, the bench says so;
* ``encoder``: the recorder's video encoders alone (same codec settings, a thread per stream) fed
  the same pictures at the row rate: the "+ encoding" of the CPU target;
* with ROS 2 sourced: ``rclpy_bare`` and ``rclpy_recorder``, the same two over rclpy
  (``raw=True`` subscriptions, rmw_cyclonedds_cpp) from a colcon build of this checkout.
Every subscriber logs (stream, header stamp, arrival) per message; printed per stream: published,
received, loss, publish -> arrival latency p50/p99; per process the CPU (user+sys seconds per
second of run) and the UDP datagrams the kernel dropped on its sockets (receive buffer full: the
cause of loss when the receiving thread is not scheduled in time). Targets: no loss at 640x480,
recorder CPU <= 1.2 x (bare + encoding). The machine may be shared: load average before and after.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

RIG = "appendix_b"
ROLES = ("bare", "recorder", "rclpy_bare", "rclpy_recorder", "encoder", "publisher")
_STAMP = struct.Struct("<iI")      # header.stamp: every message of the rig starts with a Header


def stamp_of(cdr: bytes) -> int:
    sec, nsec = _STAMP.unpack_from(cdr, 4)
    return sec * 1_000_000_000 + nsec


def _force_rcvbuf(nbytes: int) -> None:
    """Experiment only: enlarge every UDP socket of this process past ``net.core.rmem_max``
    (SO_RCVBUFFORCE needs CAP_NET_ADMIN), to test whether the buffer size explains the loss."""
    import socket
    for fd in os.listdir("/proc/self/fd"):
        try:
            if not os.readlink(f"/proc/self/fd/{fd}").startswith("socket:"):
                continue
            sock = socket.socket(fileno=os.dup(int(fd)))
        except OSError:
            continue
        if sock.type == socket.SOCK_DGRAM:
            sock.setsockopt(socket.SOL_SOCKET, 33, nbytes)          # SO_RCVBUFFORCE
        sock.close()


def _subscriber(role: str, size: str, seconds: float, out: Path, qos_name: str, force_rcvbuf: int) -> None:
    """Runs in its own process: 'bare' or 'recorder'; writes what it received to ``out``."""
    from egorec_ros.assembly.assembler import AssemblyConfig
    from egorec_ros.live.dds_source import wait_for_streams
    from egorec_ros.live.input import LiveInput, stream_msgtype
    from egorec_ros.recorder.session import Recorder
    from egorec_ros.rig.load import load_rig
    from egorec_ros.rig.resize import with_video_sizes
    from egorec_ros.store import TaskWriter
    from egorec_ros.transport.base import qos_from
    from egorec_ros.transport.dds import DdsTransport
    from egorec_ros.transport.socket_drops import udp_drops

    w, h = (int(v) for v in size.split("x"))
    rig = with_video_sizes(load_rig(RIG), (w, h))
    got: list[tuple[str, int, int]] = []
    topic_stream = {s.topic: s.id for s in rig.streams.values() if s.topic}

    class Logged:
        """The transport, with every delivered message logged before it is handed on."""

        def __init__(self, inner):
            self.inner = inner

        def subscribe(self, topic, msgtype, qos, callback):
            stream = topic_stream[topic]

            def logged(cdr, arrival):
                got.append((stream, stamp_of(cdr), arrival))
                callback(cdr, arrival)
            return self.inner.subscribe(topic, msgtype, qos, logged)

    spin = None
    if role.startswith("rclpy"):
        import rclpy
        from rclpy.executors import MultiThreadedExecutor
        from rclpy.node import Node

        from egorec_ros.nodes.transport import RclpyTransport
        rclpy.init()
        node = Node(f"bench_{role}")
        transport, executor = RclpyTransport(node), MultiThreadedExecutor(num_threads=4)  # as nodes/spin.py
        executor.add_node(node)
        spin = threading.Thread(target=executor.spin, daemon=True)
        spin.start()
    else:
        transport = DdsTransport()
    if force_rcvbuf:
        _force_rcvbuf(force_rcvbuf)
    qos = qos_from(qos_name)
    stop = out.with_suffix(".stop")

    def run_until_stopped():
        out.with_suffix(".ready").touch()
        while not stop.exists():
            time.sleep(0.05)

    cpu0 = resource.getrusage(resource.RUSAGE_SELF)
    t0 = time.monotonic()
    if role.endswith("bare"):
        _keep = [Logged(transport).subscribe(s.topic, stream_msgtype(s), qos, lambda c, a: None)
                 for s in rig.streams.values() if s.topic]
        run_until_stopped()
        rows = 0
    else:
        with tempfile.TemporaryDirectory() as tmp, TaskWriter(Path(tmp) / "t") as writer:
            recorder = Recorder(rig, writer, config=AssemblyConfig())
            live = LiveInput(rig, Logged(transport), recorder, qos=qos)
            out.with_suffix(".ready").touch()
            # one episode from the moment every stream delivers (a video silent at the start
            # would be left out of the episode) to the end of the run
            wait_for_streams(live, list(topic_stream.values()), seconds)
            recorder.start_episode()
            run_until_stopped()
            result, report = recorder.stop_episode()
            if result is None:
                print(f"recorder: no row was built; {report}", file=sys.stderr)
            live.close()
            recorder.close()
            rows = result.rows if result else 0
    elapsed = time.monotonic() - t0
    cpu1 = resource.getrusage(resource.RUSAGE_SELF)
    drops = udp_drops().drops
    queue_drops = transport.callback_drops()
    transport.close()
    if spin is not None:
        executor.shutdown()
        node.destroy_node()
        rclpy.try_shutdown()
    cpu = (cpu1.ru_utime - cpu0.ru_utime) + (cpu1.ru_stime - cpu0.ru_stime)
    out.write_text(json.dumps({"cpu_per_s": cpu / elapsed, "rows": rows, "elapsed": elapsed, "got": got,
                               "kernel_drops": drops, "queue_drops": queue_drops}))


def _encoder(size: str, out: Path) -> None:
    """Runs in its own process: the recorder's video encoders alone (``EpisodeVideos``: same
    codec settings, a background thread per stream) fed the same pictures at the rig's row rate
    for as long as the subscribers run: the "+ encoding" of the CPU target."""
    from egorec_ros.codecs.video_codec import VideoCodec
    from egorec_ros.rig.load import load_rig
    from egorec_ros.rig.resize import with_video_sizes
    from egorec_ros.sim.flaws import CLEAN
    from egorec_ros.sim.replay import simulate
    from egorec_ros.store.videos import EpisodeVideos

    w, h = (int(v) for v in size.split("x"))
    rig = with_video_sizes(load_rig(RIG), (w, h))
    samples = list(simulate(rig, 1.0, seed=0, start_ns=0, flaws=CLEAN))
    stream_of = {s.slot: s.id for s in rig.streams.values() if s.slot}
    frames = {v.key: [s.payload for s in samples if s.stream == stream_of[v.key]] for v in rig.videos}
    stop, rows = out.with_suffix(".stop"), 0
    with tempfile.TemporaryDirectory() as tmp:
        videos = EpisodeVideos(Path(tmp), rig.videos, rig.fps, VideoCodec())
        out.with_suffix(".ready").touch()
        cpu0, t0 = resource.getrusage(resource.RUSAGE_SELF), time.monotonic()
        while not stop.exists():
            videos.submit({k: f[rows % len(f)] for k, f in frames.items()})
            rows += 1
            time.sleep(max(0.0, t0 + rows / rig.fps - time.monotonic()))
        videos.close(rows)
        elapsed = time.monotonic() - t0
        cpu1 = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (cpu1.ru_utime - cpu0.ru_utime) + (cpu1.ru_stime - cpu0.ru_stime)
    out.write_text(json.dumps({"cpu_per_s": cpu / elapsed, "rows": rows, "elapsed": elapsed, "got": [],
                               "kernel_drops": 0, "videos": len(rig.videos)}))


def _publisher(size: str, log: Path, qos_name: str) -> None:
    """Publish the first simulated second of the rig over and over in real time, stamped now."""
    from egorec_ros.bags.bagwrite import sample_message
    from egorec_ros.messages.typestores import ros2_typestore
    from egorec_ros.live.input import stream_msgtype
    from egorec_ros.rig.load import load_rig
    from egorec_ros.rig.resize import with_video_sizes
    from egorec_ros.sim.flaws import CLEAN
    from egorec_ros.sim.replay import simulate
    from egorec_ros.transport.base import qos_from
    from egorec_ros.transport.dds import DdsTransport

    w, h = (int(v) for v in size.split("x"))
    rig = with_video_sizes(load_rig(RIG), (w, h))
    store = ros2_typestore()
    samples = list(simulate(rig, 1.0, seed=0, start_ns=0, flaws=CLEAN))
    types = {sid: stream_msgtype(spec) for sid, spec in rig.streams.items() if spec.topic}
    # serialized once: publishing then costs what a driver's publish costs, not rosbags' serializer
    cdrs = [bytearray(store.serialize_cdr(sample_message(store, rig.streams[s.stream], types[s.stream], s),
                                          types[s.stream])) for s in samples]
    stop = [False]
    signal.signal(signal.SIGINT, lambda *_: stop.__setitem__(0, True))
    lines = []
    with DdsTransport() as transport:
        pubs = {sid: transport.publisher(rig.streams[sid].topic, t, qos_from(qos_name)) for sid, t in types.items()}
        time.sleep(1.0)                                      # discovery
        t0, worst = time.monotonic_ns(), 0
        for cycle in range(10**9):
            for sample, cdr in zip(samples, cdrs):
                due = t0 + cycle * 1_000_000_000 + sample.arrival_ns
                ahead = due - time.monotonic_ns()
                if ahead > 0:
                    time.sleep(ahead / 1e9)
                worst = max(worst, -ahead)
                if stop[0]:
                    break
                now = time.time_ns()
                _STAMP.pack_into(cdr, 4, *divmod(now, 1_000_000_000))      # header.stamp = now
                pubs[sample.stream].publish(bytes(cdr))
                lines.append(f"{sample.stream} {now} {time.time_ns()}")
            if stop[0]:
                break
    log.write_text("\n".join(lines) + "\n")
    print(f"sent {len(lines)} messages; worst delivery behind schedule {worst / 1e6:.0f} ms", file=sys.stderr)


def _ros_env(domain: int, install: str | None) -> tuple[dict[str, str] | None, str]:
    """The environment of a ROS 2 user who sourced a colcon build of this checkout (built here,
    as the rclpy tests build it: the rig's own message types need it), or None and why not."""
    import egorec_ros
    sys.path.insert(0, str(Path(egorec_ros.__file__).resolve().parents[1] / "test"))   # helpers/, as pytest
    from helpers.ros2 import build, missing, sourced_env
    reason = missing()
    if reason:
        return None, reason
    if install is None:
        base = Path(tempfile.mkdtemp(prefix="bench_ros_"))
        t0 = time.monotonic()
        install = str(build(base))
        print(f"rclpy arm: colcon build of the checkout in {base} ({time.monotonic() - t0:.0f} s; "
              f"--ros-install {install} reuses it)")
    return sourced_env(Path(install), domain), ""


def _rosbag_baseline(ros_env: dict[str, str] | None) -> str:
    if ros_env is not None and subprocess.run(["ros2", "pkg", "prefix", "rosbag2_transport"], env=ros_env,
                                              capture_output=True).returncode == 0:
        return "ros2 bag record is installed but not measured by this bench; baseline: a bare cyclonedds subscriber"
    return ("ros2 bag record: not available (" + ("no ROS 2 sourced" if ros_env is None else "rosbag2 is not built")
            + "); baseline: a bare cyclonedds subscriber of the same topics writing nothing")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--size", default="640x480")
    ap.add_argument("--sim-devices", action="store_true", help="publish with `egorec sim-devices` (live rendering)")
    ap.add_argument("--reliable", action="store_true",
                    help="reliable publishers and subscribers (default: best-effort publishers, as camera drivers)")
    ap.add_argument("--force-rcvbuf-mb", type=int, default=0,
                    help="experiment: force the subscribers' UDP receive buffers to this size (needs CAP_NET_ADMIN)")
    ap.add_argument("--ros-install", help="a colcon install of this checkout to reuse (default: build one)")
    ap.add_argument("--only", help="comma-separated processes to run beside the publisher (default: all of "
                                   "bare,recorder,encoder,rclpy_bare,rclpy_recorder): e.g. `--only rclpy_recorder` "
                                   "measures one recorder's loss without the others' load on the same cores")
    ap.add_argument("--role", choices=ROLES, help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.role == "publisher":
        _publisher(args.size, Path(args.out), "default" if args.reliable else "sensor_data")
        return
    if args.role == "encoder":
        _encoder(args.size, Path(args.out))
        return
    if args.role:
        _subscriber(args.role, args.size, args.seconds, Path(args.out), "default" if args.reliable else "recorder",
                    args.force_rcvbuf_mb << 20)
        return

    from egorec_ros.transport.dds.loopback import loopback_env
    domain = 190 + os.getpid() % 10
    env = dict(os.environ, **loopback_env(domain))
    roles = {"bare": env, "recorder": env, "encoder": env}
    ros_env, why_not = _ros_env(domain, args.ros_install)
    if ros_env is None:
        print(f"rclpy arm skipped: {why_not}")
    else:
        roles.update(rclpy_bare=ros_env, rclpy_recorder=ros_env)
    if args.only:
        wanted = set(args.only.split(","))
        if unknown := wanted - set(ROLES):
            ap.error(f"--only: unknown {', '.join(sorted(unknown))}; known: {', '.join(ROLES[:-1])}")
        if missing := wanted - set(roles):
            ap.error(f"--only: {', '.join(sorted(missing))} not available ({why_not})")
        roles = {role: e for role, e in roles.items() if role in wanted}
    print(_rosbag_baseline(ros_env))
    from egorec_ros.transport.socket_drops import rmem_max
    print(f"load average before: {os.getloadavg()}  ({os.cpu_count()} cores); net.core.rmem_max {rmem_max()}"
          + (f"; subscribers' UDP buffers forced to {args.force_rcvbuf_mb} MB" if args.force_rcvbuf_mb else ""))
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        subs = {role: subprocess.Popen([sys.executable, __file__, "--role", role, "--size", args.size,
                                        "--seconds", str(args.seconds), "--out", str(tmp / f"{role}.json"),
                                        "--force-rcvbuf-mb", str(args.force_rcvbuf_mb),
                                        *(["--reliable"] if args.reliable else [])],
                                       env=role_env) for role, role_env in roles.items()}
        while not all((tmp / f"{role}.ready").exists() for role in subs):    # all subscribed
            time.sleep(0.05)
        command = (["-m", "egorec_ros.cli", "sim-devices", "--rig", RIG, "--size", args.size, "--clean"]
                   if args.sim_devices else [__file__, "--role", "publisher", "--size", args.size,
                      *(["--reliable"] if args.reliable else []), "--out"])
        pub = subprocess.Popen([sys.executable, *command, *(["--log"] if args.sim_devices else []),
                                str(tmp / "sent.log")], env=env, stderr=subprocess.PIPE, text=True)
        time.sleep(args.seconds)
        pub.send_signal(signal.SIGINT)
        _, pub_err = pub.communicate()
        lag = [ln for ln in pub_err.splitlines() if "behind schedule" in ln]
        time.sleep(1.0)                   # what is still in flight
        for role in subs:
            (tmp / f"{role}.stop").touch()
        for proc in subs.values():
            proc.wait()
        sent: dict[str, dict[int, int]] = defaultdict(dict)
        for line in (tmp / "sent.log").read_text().splitlines():
            stream, stamp, at = line.split()
            sent[stream][int(stamp)] = int(at)
        results = {role: json.loads((tmp / f"{role}.json").read_text()) for role in subs}
        encoder = results.pop("encoder", None)
    print(f"load average after:  {os.getloadavg()}")
    who = "egorec sim-devices" if args.sim_devices else "pre-rendered, stamped on publishing"
    print(f"Appendix B at {args.size}, {args.seconds:.0f} s; publisher {who} ({'reliable' if args.reliable else 'best effort'}); "
          f"publisher {lag[0].rsplit(';', 1)[-1].strip() if lag else '(no report)'}\n")
    head = f"{'stream':30s} {'sent':>6s}"
    for role in results:
        head += f" | {role:>14s} rx  loss  p50 ms  p99 ms"
    print(head)
    for stream in sorted(sent):
        line = f"{stream:30s} {len(sent[stream]):6d}"
        for res in results.values():
            lat = [(arr - sent[stream][st]) / 1e6 for s, st, arr in res["got"] if s == stream and st in sent[stream]]
            rx = len(lat)
            loss = 1 - rx / len(sent[stream]) if sent[stream] else 0.0
            p50, p99 = (np.percentile(lat, [50, 99]) if lat else (float("nan"),) * 2)
            line += f" | {rx:17d} {loss:5.1%} {p50:7.2f} {p99:7.2f}"
        print(line)
    for role, res in results.items():
        print(f"{role:14s}: CPU {res['cpu_per_s']:.2f} s/s, UDP datagrams the kernel dropped (receive buffer full): "
              f"{res['kernel_drops']}, samples dropped by the callback queue (stale > 1 s or full): "
              f"{res['queue_drops']}" + (f", {res['rows']} rows" if role.endswith("recorder") else ""))
    # encoding per row set (5 videos), from the encoder process: a starved process encodes fewer
    # rows, so its CPU per second says nothing; its CPU per row does
    if encoder is None:
        return
    enc_per_row = encoder["cpu_per_s"] * encoder["elapsed"] / max(1, encoder["rows"])
    print(f"{'encoder':14s}: CPU {encoder['cpu_per_s']:.2f} s/s, {encoder['rows']} rows of {RIG}'s "
          f"{encoder['videos']} videos in {encoder['elapsed']:.0f} s: {enc_per_row * 1e3:.1f} ms per row")
    for arm in ("", "rclpy_"):
        if f"{arm}recorder" in results and f"{arm}bare" in results:
            bare, rec = results[f"{arm}bare"], results[f"{arm}recorder"]
            rows_per_s = rec["rows"] / rec["elapsed"]
            encoding = enc_per_row * rows_per_s
            print(f"{arm}recorder / {arm}bare CPU: {rec['cpu_per_s'] / bare['cpu_per_s']:.1f}x; {arm}recorder / "
                  f"({arm}bare + encoding of its {rows_per_s:.1f} rows/s = {encoding:.2f} s/s): "
                  f"{rec['cpu_per_s'] / (bare['cpu_per_s'] + encoding):.2f}x (target <= 1.2x)")
    if "rclpy_bare" in results and "bare" in results:
        print(f"rclpy_bare / bare (the DDS subscriber) CPU: "
              f"{results['rclpy_bare']['cpu_per_s'] / results['bare']['cpu_per_s']:.2f}x")


if __name__ == "__main__":
    main()
