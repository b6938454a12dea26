"""What marking RoCE v2 packets really carry on the wire: a capture on the receiving host.

RoCE v2 is RDMA over UDP port 4791 (IBTA Annex A17); the IPv4 ToS byte is the QP's GRH traffic class. A NIC without
per-priority counters (Soft-RoCE on virtio-net, many VFs) cannot show which class the bytes used, but a capture
can show the DSCP they were sent with. A stdlib-only program opens an AF_PACKET socket on the interface, counts the
ToS values of IPv4/UDP/4791 frames for a while and prints JSON; :func:`start` / :func:`collect` run it through a
:class:`~fabricd.traffic.remote.Runner` (needs root on the endpoint, as tcpdump does).
"""

from __future__ import annotations

from dataclasses import dataclass

from .remote import Runner, Started

ROCE_V2_PORT = 4791

SNIFF_PROGRAM = r"""
import json, socket, struct, sys, time
iface, seconds, limit, idle = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0003))
s.bind((iface, 0))
s.settimeout(0.2)
tos, n, other = {}, 0, 0
print("ready", file=sys.stderr, flush=True)
end = time.monotonic() + seconds
last = None
while time.monotonic() < end and n < limit:
    if last is not None and time.monotonic() - last > idle:
        break
    try:
        frame = s.recv(128)
    except socket.timeout:
        continue
    off, etype = 14, struct.unpack("!H", frame[12:14])[0]
    while etype in (0x8100, 0x88A8) and len(frame) >= off + 4:
        etype = struct.unpack("!H", frame[off + 2:off + 4])[0]
        off += 4
    if etype != 0x0800 or len(frame) < off + 24:
        other += 1
        continue
    ihl = (frame[off] & 0x0F) * 4
    if frame[off + 9] != 17 or len(frame) < off + ihl + 4:
        other += 1
        continue
    dport = struct.unpack("!H", frame[off + ihl + 2:off + ihl + 4])[0]
    if dport != PORT:
        other += 1
        continue
    t = frame[off + 1]
    tos[t] = tos.get(t, 0) + 1
    n += 1
    last = time.monotonic()
json.dump({"packets": n, "tos": {str(k): v for k, v in sorted(tos.items())}, "other": other}, sys.stdout)
"""


@dataclass(frozen=True)
class Capture:
    """RoCE v2 packets seen and their IPv4 ToS values (``{tos: count}``)."""

    interface: str
    packets: int
    tos: dict[int, int]

    def dscp(self) -> dict[int, int]:
        out: dict[int, int] = {}
        for t, c in self.tos.items():
            out[t >> 2] = out.get(t >> 2, 0) + c
        return out


def start(runner: Runner, interface: str, *, seconds: float, limit: int = 2000, idle_s: float = 3.0) -> Started:
    """Capture up to ``limit`` RoCE v2 packets on ``interface``, for at most ``seconds``, stopping ``idle_s`` after
    the last one seen."""
    program = f"PORT = {ROCE_V2_PORT}\n" + SNIFF_PROGRAM
    return runner.start(["python3", "-c", program, interface, str(seconds), str(limit), str(idle_s)])


def collect(started: Started, interface: str, *, timeout_s: float) -> Capture:
    data = started.wait(timeout_s).json_stdout(f"capture on {interface}")
    return Capture(interface, int(data["packets"]), {int(k): int(v) for k, v in data["tos"].items()})
