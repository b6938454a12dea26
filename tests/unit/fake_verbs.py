"""MOCK verbs layer for host-side tests: an in-process stand-in for rdma-core's pyverbs.

pyverbs cannot run on this host (its kernel has no RDMA subsystem; lab.md), so the traffic engine's logic — the
out-of-band protocol over real TCP, posting rings, selective signaling, payload verification, clean-up — is tested
here against this fake, while the real pyverbs path runs in the Soft-RoCE VMs (tests/lab, marker ``vm``).

:class:`FakeFabric` connects :class:`FakePort` s: posting a WR executes it at once against the peer's memory
(WRITE, WRITE_IMM, SEND, READ, FETCH_ADD, CMP_SWAP, with rkey checks and IBTA atomics semantics) and queues
completions for signaled WRs and consumed receives. A receive-consuming message that finds no posted receive waits
until one is posted, as an RNR retry would. It also counts live QPs and MRs, so tests can assert that nothing leaks.
"""

from __future__ import annotations

import itertools
import threading
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from fabricd.traffic.gid import GidChoice
from fabricd.traffic.spec import Op
from fabricd.traffic.verbs import WC_RECV, WC_RECV_RDMA_WITH_IMM, WrItem

WC_FOR = {Op.WRITE: 1, Op.WRITE_IMM: 1, Op.SEND: 0, Op.READ: 2, Op.CMP_SWAP: 3, Op.FETCH_ADD: 4}


@dataclass
class FakeWC:
    wr_id: int
    status: int
    opcode: int
    byte_len: int = 0
    imm_data: int = 0
    qp_num: int = 0


@dataclass
class FakeQp:
    qpn: int
    psn: int
    recvs: deque[tuple[int, int, int]] = field(default_factory=deque)
    """posted receives: (wr_id, offset, length)"""
    waiting: deque[tuple[Any, ...]] = field(default_factory=deque)
    """messages that arrived with no receive posted (delivered on the next post_recv)"""
    peer: tuple[str, int] | None = None
    send_depth: int = 0


class FakeFabric:
    """The 'wire': every port and QP by (gid, qpn), one lock for all memory and queues."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.qps: dict[tuple[str, int], tuple[FakePort, FakeQp]] = {}
        self.qpn = itertools.count(0x11)
        self.addr = itertools.count(0x7F0000000000, 0x100000000)
        self.live_mrs = 0
        self.opened = 0


class FakePort:
    """A fake RDMA port with a registered pool (see module docstring: a MOCK)."""

    def __init__(
        self,
        fabric: FakeFabric,
        choice: GidChoice,
        pool_bytes: int,
        *,
        corrupt: bool = False,
        fail_connect: bool = False,
    ) -> None:
        self.fabric, self.device, self.port = fabric, choice.device, choice.port
        self.gid_index, self.gid = choice.index, choice.gid
        self.mtu, self.max_rd_atomic = 4096, 16
        self.mem = bytearray(pool_bytes)
        self.pool_addr, self.pool_rkey, self.pool_len = next(fabric.addr), 0x1234, pool_bytes
        self.cq: deque[FakeWC] = deque()
        self.qps: list[FakeQp] = []
        self.corrupt, self.fail_connect = corrupt, fail_connect
        self.closed = False
        self.tos_seen: list[int] = []
        with fabric.lock:
            fabric.live_mrs += 1
            fabric.opened += 1

    # --- the VerbsPort protocol ---
    def create_qps(self, count: int, *, send_depth: int, recv_depth: int) -> list[tuple[int, int]]:
        with self.fabric.lock:
            for _ in range(count):
                qp = FakeQp(next(self.fabric.qpn), 1000 + len(self.qps), send_depth=send_depth)
                self.qps.append(qp)
                self.fabric.qps[(self.gid, qp.qpn)] = (self, qp)
        return [(q.qpn, q.psn) for q in self.qps]

    def connect_qp(
        self,
        index: int,
        *,
        remote_qpn: int,
        remote_psn: int,
        remote_gid: str,
        mtu: int,
        tos: int,
        rd_atomic: int,
        ack_timeout: int,
    ) -> None:
        if self.fail_connect:
            from fabricd.traffic.oob import TrafficError

            raise TrafficError(f"{self.device}: fake connect failure")
        self.qps[index].peer = (remote_gid, remote_qpn)
        self.tos_seen.append(tos)

    def prepare(self, index: int, op: Op, items: Sequence[WrItem], rkey: int) -> Any:
        return {"op": op, "rkey": rkey, "items": [dict(vars(it)) for it in items]}

    def set_atomic(self, chain: Any, position: int, compare_add: int, swap: int) -> None:
        chain["items"][position]["compare_add"] = compare_add
        chain["items"][position]["swap"] = swap

    def post(self, index: int, chain: Any) -> None:
        qp = self.qps[index]
        assert qp.peer is not None, "post on an unconnected QP"
        op: Op = chain["op"]
        with self.fabric.lock:
            rport, rqp = self.fabric.qps[qp.peer]
            for it in chain["items"]:
                self._execute(op, chain["rkey"], it, rport=rport, rqp=rqp, qp=qp)
                if it["signaled"]:
                    self.cq.append(FakeWC(it["wr_id"], 0, WC_FOR[op], it["length"], 0, qp.qpn))

    def _execute(self, op: Op, rkey: int, it: dict[str, Any], *, rport: FakePort, rqp: FakeQp, qp: FakeQp) -> None:
        off, length = it["offset"], it["length"]
        roff = it["remote_addr"] - rport.pool_addr
        if op in (Op.WRITE, Op.WRITE_IMM, Op.READ) or op.atomic:
            assert rkey == rport.pool_rkey and roff >= 0 and roff + max(length, 8) <= rport.pool_len, "rkey/bounds"
        if op in (Op.WRITE, Op.WRITE_IMM):
            data = bytes(self.mem[off : off + length])
            if self.corrupt:
                data = bytes([data[0] ^ 0xFF]) + data[1:]
            rport.mem[roff : roff + length] = data
            if op == Op.WRITE_IMM:
                rport._deliver(rqp, (WC_RECV_RDMA_WITH_IMM, it["imm"], length, None))
        elif op == Op.SEND:
            data = bytes(self.mem[off : off + length])
            if self.corrupt:
                data = bytes([data[0] ^ 0xFF]) + data[1:]
            rport._deliver(rqp, (WC_RECV, 0, length, data))
        elif op == Op.READ:
            self.mem[off : off + length] = rport.mem[roff : roff + length]
        else:
            old = int.from_bytes(rport.mem[roff : roff + 8], "little")
            if op == Op.FETCH_ADD:
                new = (old + it["compare_add"]) & (2**64 - 1)
            else:
                new = it["swap"] if old == it["compare_add"] else old
            rport.mem[roff : roff + 8] = new.to_bytes(8, "little")
            self.mem[off : off + 8] = old.to_bytes(8, "little")

    def _deliver(self, qp: FakeQp, msg: tuple[Any, ...]) -> None:
        if not qp.recvs:
            qp.waiting.append(msg)  # RNR: the sender retries until a receive is posted
            return
        wr_id, off, length = qp.recvs.popleft()
        opcode, imm, nbytes, data = msg
        if data is not None:
            assert nbytes <= length, "message larger than the receive buffer"
            self.mem[off : off + nbytes] = data
        self.cq.append(FakeWC(wr_id, 0, opcode, nbytes, imm, qp.qpn))

    def prepare_recv(self, index: int, offset: int, length: int, wr_id: int) -> Any:
        return (wr_id, offset, length)

    def post_recv(self, index: int, recv: Any) -> None:
        qp = self.qps[index]
        with self.fabric.lock:
            assert len(qp.recvs) < max(qp.send_depth, 64) + 1
            qp.recvs.append(recv)
            if qp.waiting:
                self._deliver(qp, qp.waiting.popleft())

    def poll(self, budget: int) -> Sequence[FakeWC]:
        with self.fabric.lock:
            out = []
            while self.cq and len(out) < budget:
                out.append(self.cq.popleft())
            return out

    def read(self, offset: int, length: int) -> bytes:
        with self.fabric.lock:
            return bytes(self.mem[offset : offset + length])

    def write(self, offset: int, data: bytes) -> None:
        with self.fabric.lock:
            self.mem[offset : offset + len(data)] = data

    def destroy_qps(self) -> None:
        with self.fabric.lock:
            for qp in self.qps:
                self.fabric.qps.pop((self.gid, qp.qpn), None)
            self.qps = []
            self.cq.clear()

    def close(self) -> None:
        self.destroy_qps()
        with self.fabric.lock:
            if not self.closed:
                self.fabric.live_mrs -= 1
                self.closed = True

    @property
    def live_qps(self) -> int:
        return len(self.qps)


def fake_sysfs(root: Any, *, device: str = "fake0", ip: str = "127.0.0.1", netdev: str = "lo") -> Any:
    """A minimal /sys/class/infiniband tree: one port, link-local GID 0 and the RoCE v2 GID of ``ip`` at index 1
    (the layout of the real rxe capture in tests/golden/traffic/rxe-clean)."""
    import ipaddress

    port = root / "sys" / "class" / "infiniband" / device / "ports" / "1"
    a, b, c, d = ipaddress.IPv4Address(ip).packed
    entries = {
        0: ("fe80:0000:0000:0000:0000:0000:0000:0001", "RoCE v2"),
        1: (f"0000:0000:0000:0000:0000:ffff:{a:02x}{b:02x}:{c:02x}{d:02x}", "RoCE v2"),
    }
    for sub in ("gids", "gid_attrs/types", "gid_attrs/ndevs"):
        (port / sub).mkdir(parents=True, exist_ok=True)
    for i, (gid, typ) in entries.items():
        (port / "gids" / str(i)).write_text(gid + "\n")
        (port / "gid_attrs" / "types" / str(i)).write_text(typ + "\n")
        (port / "gid_attrs" / "ndevs" / str(i)).write_text(netdev + "\n")
    (port / "gids" / "2").write_text("0000:0000:0000:0000:0000:0000:0000:0000\n")
    (port / "state").write_text("4: ACTIVE\n")
    return root
