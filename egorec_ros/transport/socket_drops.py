"""Datagrams the kernel dropped because a process's UDP socket receive buffer was full.

Camera images over DDS are best-effort samples of ~1 MB cut into ~64 KB datagrams. When the
DDS receive thread is not scheduled for longer than the socket buffer lasts (tens of ms at
5 VGA streams), the kernel drops datagrams, and with them whole images: DDS never sees the
loss. Linux counts these drops per socket (``/proc/<pid>/net/udp``, last column) — for the
sockets of cyclonedds-python and of rmw_cyclonedds_cpp alike, since both live in the
recording process. The recorder reads the count so this loss is reported, not silent.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

RMEM_MAX = Path("/proc/sys/net/core/rmem_max")


@dataclass(frozen=True)
class SocketDrops:
    drops: int          # datagrams dropped by the kernel on the process's UDP sockets
    sockets: int        # how many UDP sockets the process has open


def _socket_inodes(pid: str) -> set[int]:
    inodes: set[int] = set()
    fd_dir = Path(f"/proc/{pid}/fd")
    for fd in os.listdir(fd_dir):
        try:
            link = os.readlink(fd_dir / fd)
        except OSError:             # closed meanwhile
            continue
        if link.startswith("socket:["):
            inodes.add(int(link[8:-1]))
    return inodes


def udp_drops(pid: int | str = "self") -> SocketDrops:
    """Kernel drop count summed over the UDP sockets (IPv4 and IPv6) of process ``pid``.

    Zero sockets on a system without ``/proc`` (not Linux): the count is then unknown, not zero."""
    pid = str(pid)
    if not Path(f"/proc/{pid}/net/udp").exists():
        return SocketDrops(0, 0)
    inodes = _socket_inodes(pid)
    drops = sockets = 0
    for table in ("udp", "udp6"):
        path = Path(f"/proc/{pid}/net/{table}")
        if not path.exists():
            continue
        for line in path.read_text().splitlines()[1:]:
            fields = line.split()
            if len(fields) >= 13 and int(fields[9]) in inodes:      # inode, ..., drops (last)
                sockets += 1
                drops += int(fields[-1])
    return SocketDrops(drops, sockets)


def rmem_max() -> int | None:
    """The kernel's cap on a socket receive buffer (``net.core.rmem_max``), None if unknown."""
    try:
        return int(RMEM_MAX.read_text())
    except (OSError, ValueError):
        return None


RECOMMENDED_RCVBUF = 64 << 20      # what config/cyclonedds.xml asks Cyclone for


def rcvbuf_advice(limit: int | None) -> str | None:
    """What to do when the kernel caps socket receive buffers below what camera streams need."""
    if limit is None or limit >= RECOMMENDED_RCVBUF:
        return None
    return (f"net.core.rmem_max is {limit >> 10} KB: DDS sockets cannot get the {RECOMMENDED_RCVBUF >> 20} MB "
            "receive buffer config/cyclonedds.xml asks for, and camera images are lost whenever the recorder "
            "is not scheduled for a few tens of ms. Fix: sudo sysctl -w net.core.rmem_max=2147483647 "
            "(to keep it: a line net.core.rmem_max=2147483647 in /etc/sysctl.d/60-egorec.conf) and "
            "export CYCLONEDDS_URI=file://<egorec_ros>/config/cyclonedds.xml")
