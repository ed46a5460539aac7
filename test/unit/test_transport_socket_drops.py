"""The kernel's count of UDP datagrams dropped on a full socket receive buffer, read back
exactly (a real socket flooded on loopback), and the advice when rmem_max is too small."""
from __future__ import annotations

import socket

from egorec_ros.transport.socket_drops import RECOMMENDED_RCVBUF, rcvbuf_advice, udp_drops


def test_drops_of_a_flooded_socket_are_counted_exactly():
    rx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    rx.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)      # the kernel's minimum: a few datagrams
    rx.bind(("127.0.0.1", 0))
    tx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    before = udp_drops()
    sent = 200
    for _ in range(sent):
        tx.sendto(b"x" * 8000, rx.getsockname())
    rx.setblocking(False)
    received = 0
    try:
        while True:
            rx.recv(65536)
            received += 1
    except BlockingIOError:
        pass
    after = udp_drops()
    tx.close()
    rx.close()
    assert 0 < received < sent
    assert after.drops - before.drops == sent - received
    assert after.sockets == before.sockets + 1        # tx is bound by its first send


def test_advice_names_the_fix_only_when_the_kernel_caps_the_buffer():
    assert rcvbuf_advice(None) is None
    assert rcvbuf_advice(RECOMMENDED_RCVBUF) is None
    advice = rcvbuf_advice(4 << 20)
    assert advice is not None and "4096 KB" in advice and "sysctl -w net.core.rmem_max" in advice
