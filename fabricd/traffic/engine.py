"""The traffic generator: client and server sessions over a :class:`~fabricd.traffic.verbs.VerbsPort`.

Memory layout (the same on both sides): QP ``q``'s slot ``s`` lives at pool offset ``(q * slots + s) * stride``,
``stride`` being the largest message size rounded up to 4 KiB; ``slots`` is the WR depth in bandwidth mode and 1 in
latency mode. A WR posted at ring position ``k`` of QP ``q`` uses slot ``k % depth`` on both sides, and RC delivers
in order, so the ``n``-th message a QP receives landed in slot ``n % depth`` and came from the sender's slot
``n % depth``: that is what payload verification checks.

Payloads: slot ``(q, s)`` of a phase holds ``pattern(seed, q, s)`` (a BLAKE2b block repeated), distinct per slot and
per phase; the receiving side first fills its slots with a poison byte, so stale memory never passes.

* WRITE / WRITE_IMM: the server compares every written slot after the client's ``done``; WRITE_IMM also checks
  that each receive completion carries the immediate ``q << 16 | slot`` in ring order (no loss, no reordering);
* SEND: the server checks the length of every receive and the bytes of every ``verify_stride``-th one;
* READ: the client compares its slots with the server's pattern;
* FETCH_ADD (+1) and CMP_SWAP (v -> v+1, chained per slot): the server checks each 8-byte word equals the number of
  operations that targeted it.

Bandwidth mode keeps ``depth`` WRs in flight per QP, posting chains of ``post_list`` WRs with one call and asking for
a completion every ``signal_every`` WRs (each completion retires that many WRs, RC completes in order). Latency mode
runs one message at a time: SEND and WRITE_IMM as a ping-pong (one-way = RTT/2, like ib_send_lat), WRITE, READ and
atomics as post-to-completion round trips.
"""

from __future__ import annotations

import hashlib
import ipaddress
import logging
import os
import socket
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import fabricd
from fabricd.errors import UsageError

from . import oob
from .gid import GidChoice, choose_gid
from .oob import Channel, PeerRefusedError, TrafficError
from .spec import (
    DEFAULT_PORT,
    Latency,
    Mode,
    Op,
    OpResult,
    RoceVersion,
    SessionResult,
    TrafficSpec,
    Verification,
    align,
)
from .verbs import (
    WC_HINT,
    WC_RECV,
    WC_RECV_RDMA_WITH_IMM,
    Completion,
    PyverbsPort,
    VerbsPort,
    WrItem,
    wc_status_name,
)

log = logging.getLogger(__name__)

OpenPort = Callable[[GidChoice, int], VerbsPort]
"""Opens a verbs port for a GID choice with a pool of N bytes (PyverbsPort; tests inject a fake)."""

DEFAULT_POOL_BYTES = 64 << 20
POISON = 0x5A
STALL_S = 30.0
"""Seconds without a completion before a run is declared stuck."""


def pattern(seed: int, q: int, slot: int, size: int) -> bytes:
    """The payload of slot ``(q, slot)`` in a phase: a 64-byte BLAKE2b block of (seed, q, slot), repeated."""
    block = hashlib.blake2b(f"{seed}:{q}:{slot}".encode(), digest_size=64).digest()
    return (block * (size // 64 + 1))[:size]


def imm_of(q: int, slot: int) -> int:
    return ((q & 0xFFFF) << 16) | (slot & 0xFFFF)


def faa_count(total: int, slot: int, depth: int) -> int:
    """How many of ``total`` ring-ordered operations hit ``slot`` (positions k with k % depth == slot)."""
    return 0 if slot >= total else (total - slot + depth - 1) // depth


@dataclass(frozen=True)
class Layout:
    slots: int
    stride: int

    @classmethod
    def of(cls, spec: TrafficSpec) -> Layout:
        return cls(spec.slots_per_qp(), align(spec.slot_bytes()))

    def offset(self, q: int, slot: int) -> int:
        return (q * self.slots + slot) * self.stride


def phase_seed(seed: int, op: Op, size: int) -> int:
    return int.from_bytes(hashlib.blake2b(f"{seed}:{op.value}:{size}".encode(), digest_size=6).digest(), "big")


def _latency(kind: str, samples_s: Sequence[float]) -> Latency | None:
    if not samples_s:
        return None
    us = sorted(s * 1e6 for s in samples_s)
    n = len(us)

    def pct(p: float) -> float:
        return round(us[min(n - 1, int(p * (n - 1) + 0.5))], 2)

    return Latency(kind=kind, samples=n, min_us=round(us[0], 2), p50_us=pct(0.5),
                   avg_us=round(sum(us) / n, 2), p99_us=pct(0.99), max_us=round(us[-1], 2))


def _check_wc(wc: Completion, op: str, device: str) -> None:
    if wc.status != 0:
        name = wc_status_name(wc.status)
        raise TrafficError(
            f"{device}: work completion error {name} on QP {wc.qp_num:#x} during {op}",
            hint=WC_HINT.get(wc.status, "see the peer's output and 'rdma statistic show' on both hosts"),
        )


def source_ip(peer: str, port: int) -> str:
    """The local address the kernel would use to reach ``peer`` (a UDP connect sends nothing)."""
    try:
        infos = socket.getaddrinfo(peer, port, type=socket.SOCK_DGRAM)
    except socket.gaierror as exc:
        raise TrafficError(f"cannot resolve traffic peer {peer!r}: {exc.strerror}",
                           hint="pass the peer's RDMA address (an IP) with --peer") from exc
    family, _, _, _, addr = infos[0]
    with socket.socket(family, socket.SOCK_DGRAM) as s:
        try:
            s.connect(addr)
        except OSError as exc:
            raise TrafficError(f"no route to traffic peer {peer}: {exc.strerror}",
                               hint="check the address and this host's routes ('ip route get PEER')") from exc
        return str(s.getsockname()[0])


# ----------------------------------------------------------------------------------------------------------------
# Bandwidth requester (client) loop
# ----------------------------------------------------------------------------------------------------------------


@dataclass
class _Ring:
    """Per-phase posting state of every QP: prepared chains, positions, counts, CAS operand values."""

    port: VerbsPort
    op: Op
    qps: int
    depth: int
    post_list: int
    signal_every: int
    chains: list[list[Any]]
    posted: list[int]
    retired: list[int]
    nxt: list[int]
    cas: list[list[int]] = field(default_factory=list)

    def post_chain(self, q: int) -> None:
        c = self.nxt[q]
        chain = self.chains[q][c]
        if self.op == Op.CMP_SWAP:
            base = c * self.post_list
            values = self.cas[q]
            for j in range(self.post_list):
                v = values[base + j]
                self.port.set_atomic(chain, j, v, v + 1)
                values[base + j] = v + 1
        self.port.post(q, chain)
        self.posted[q] += self.post_list
        self.nxt[q] = (c + 1) % len(self.chains[q])

    def run(self, *, limit: int | None, deadline: float | None, budget: int) -> None:
        """Post and poll until each QP has posted ``limit`` more WRs (or ``deadline`` passed) and all retired."""
        port, qps, depth, lst, sig = self.port, self.qps, self.depth, self.post_list, self.signal_every
        start = list(self.posted)
        stopping = False
        retired, posted = self.retired, self.posted

        def wants(q: int) -> bool:
            if posted[q] % sig:
                return True  # the last WR posted must request a completion, or the ring never drains
            if stopping:
                return False
            return limit is None or posted[q] - start[q] < limit

        for q in range(qps):
            while posted[q] - retired[q] + lst <= depth and wants(q):
                self.post_chain(q)
        last_progress = time.monotonic()
        perf = time.perf_counter
        while True:
            wcs = port.poll(budget)
            if wcs:
                for wc in wcs:
                    if wc.status:
                        _check_wc(wc, self.op.value, port.device)
                    retired[wc.wr_id >> 32] += sig
                for q in range(qps):
                    while posted[q] - retired[q] + lst <= depth and wants(q):
                        self.post_chain(q)
                last_progress = time.monotonic()
            else:
                if not stopping and deadline is not None and perf() >= deadline:
                    stopping = True
                    for q in range(qps):
                        while posted[q] - retired[q] + lst <= depth and wants(q):
                            self.post_chain(q)
                if posted == retired and not any(wants(q) for q in range(qps)):
                    return
                if time.monotonic() - last_progress > STALL_S:
                    raise TrafficError(
                        f"{port.device}: no completion for {STALL_S:.0f}s during {self.op.value} "
                        f"({sum(posted) - sum(retired)} WRs outstanding)",
                        hint="the peer or the link stalled; check 'rdma statistic show' on both hosts")
            if deadline is not None and not stopping and perf() >= deadline:
                stopping = True


def _build_ring(port: VerbsPort, spec: TrafficSpec, op: Op, size: int, layout: Layout, peer_addr: int,
                peer_rkey: int) -> _Ring:
    lst = spec.post_list
    chains: list[list[Any]] = []
    for q in range(spec.qps):
        per_q = []
        for c in range(spec.depth // lst):
            items = []
            for j in range(lst):
                s = c * lst + j
                off = layout.offset(q, s)
                items.append(WrItem(
                    offset=off, length=size, remote_addr=peer_addr + off, imm=imm_of(q, s),
                    compare_add=1 if op == Op.FETCH_ADD else 0, swap=0,
                    signaled=(s + 1) % spec.signal_every == 0, wr_id=(q << 32) | s,
                ))
            per_q.append(port.prepare(q, op, items, peer_rkey))
        chains.append(per_q)
    return _Ring(port=port, op=op, qps=spec.qps, depth=spec.depth, post_list=lst, signal_every=spec.signal_every,
                 chains=chains, posted=[0] * spec.qps, retired=[0] * spec.qps, nxt=[0] * spec.qps,
                 cas=[[0] * spec.depth for _ in range(spec.qps)])


# ----------------------------------------------------------------------------------------------------------------
# Memory preparation and checks
# ----------------------------------------------------------------------------------------------------------------


def _fill(port: VerbsPort, layout: Layout, qps: int, slots: int, size: int, seed: int | None) -> None:
    """Pattern (seed given) or poison (seed None) into the first ``size`` bytes of each slot."""
    poison = bytes([POISON]) * size
    for q in range(qps):
        for s in range(slots):
            port.write(layout.offset(q, s), pattern(seed, q, s, size) if seed is not None else poison)


def _zero_words(port: VerbsPort, layout: Layout, qps: int, slots: int) -> None:
    for q in range(qps):
        for s in range(slots):
            port.write(layout.offset(q, s), bytes(8))


def _check_slots(port: VerbsPort, layout: Layout, counts: Sequence[int], depth: int, size: int,
                 seed: int) -> Verification:
    """Every slot written at least once must hold its pattern."""
    checked = 0
    for q, total in enumerate(counts):
        for s in range(min(total, depth)):
            checked += 1
            if port.read(layout.offset(q, s), size) != pattern(seed, q, s, size):
                return Verification(ok=False, checked=checked,
                                    detail=f"QP {q} slot {s}: payload differs from what the sender wrote")
    return Verification(ok=True, checked=checked)


def _check_words(port: VerbsPort, layout: Layout, counts: Sequence[int], depth: int, op: Op) -> Verification:
    checked = 0
    for q, total in enumerate(counts):
        for s in range(min(total, depth)):
            checked += 1
            got = int.from_bytes(port.read(layout.offset(q, s), 8), "little")
            want = faa_count(total, s, depth)
            if got != want:
                return Verification(ok=False, checked=checked,
                                    detail=f"QP {q} word {s}: {got} after {want} {op.value} operations")
    return Verification(ok=True, checked=checked)


# ----------------------------------------------------------------------------------------------------------------
# Client
# ----------------------------------------------------------------------------------------------------------------


def run_client(
    peer: str,
    spec: TrafficSpec,
    *,
    port: int = DEFAULT_PORT,
    device: str | None = None,
    gid_index: int | None = None,
    roce_version: RoceVersion = RoceVersion.V2,
    pool_bytes: int = DEFAULT_POOL_BYTES,
    root: str = "/",
    connect_timeout_s: float = 15.0,
    open_port: OpenPort = PyverbsPort,
    progress: Callable[[str], None] = log.info,
) -> SessionResult:
    """Run ``spec`` against the traffic server at ``peer:port`` and return the measurements.

    Order, so bad input costs nothing: check the pool size, find the local address towards the peer and its GID
    (sysfs only), connect the out-of-band channel, then open the device, register the pool and create QPs. Whatever
    fails, every verbs resource created is released before the error propagates.
    """
    need = spec.pool_need()
    if need > pool_bytes:
        raise UsageError(
            f"{spec.qps} QP(s) x {spec.slots_per_qp()} slot(s) x {spec.slot_bytes()} B messages need "
            f"{need} bytes of registered memory, more than the {pool_bytes}-byte MR pool",
            hint="lower --size, --qps or --depth, or raise --pool-mib",
        )
    local_ip = source_ip(peer, port)
    choice = choose_gid(root, ip=local_ip if gid_index is None else None, device=device, index=gid_index,
                        version=roce_version)
    seed = spec.seed or int.from_bytes(os.urandom(4), "big") | 1
    ch = oob.connect(peer, port, timeout_s=connect_timeout_s)
    vport: VerbsPort | None = None
    try:
        vport = open_port(choice, pool_bytes)
        qps = vport.create_qps(spec.qps, send_depth=spec.depth, recv_depth=spec.slots_per_qp())
        ch.send({"type": "hello", "protocol": oob.PROTOCOL, "fabricd": fabricd.__version__,
                 "spec": spec.model_dump(mode="json"), "gid": choice.gid, "mtu": vport.mtu,
                 "rd_atomic": vport.max_rd_atomic, "qps": [{"qpn": n, "psn": p} for n, p in qps],
                 "mr": {"addr": vport.pool_addr, "rkey": vport.pool_rkey, "len": vport.pool_len}})
        acc = ch.recv("accept")
        oob.check_hello(acc, fabricd.__version__)
        rd_atomic = min(vport.max_rd_atomic, int(acc.get("rd_atomic", 1)))
        for i, rq in enumerate(acc["qps"]):
            vport.connect_qp(i, remote_qpn=int(rq["qpn"]), remote_psn=int(rq["psn"]), remote_gid=acc["gid"],
                             mtu=int(acc["mtu"]), tos=spec.tos, rd_atomic=rd_atomic,
                             ack_timeout=spec.ack_timeout)
        results = []
        recv_state = _RecvState()
        for op in spec.ops:
            for size in spec.effective_sizes(op):
                progress(f"{op.value} {size} B x {spec.qps} QP(s) ({spec.mode.value})")
                results.append(_client_phase(vport, ch, spec, op, size, phase_seed(seed, op, size), acc["mr"],
                                             recv_state))
        ch.send({"type": "bye"})
        return SessionResult(
            ok=all(r.verify is None or r.verify.ok for r in results), peer=peer, local_ip=local_ip,
            device=choice.device, port=choice.port, gid_index=choice.index, gid=choice.gid, peer_gid=acc["gid"],
            tos=spec.tos, protocol=oob.PROTOCOL, fabricd_version=fabricd.__version__,
            peer_fabricd_version=str(acc.get("fabricd", "?")), results=results,
        )
    finally:
        ch.close()
        if vport is not None:
            vport.close()


@dataclass
class _RecvState:
    """The client's latency-mode receive buffer stays posted from one phase to the next (one per QP fits)."""

    posted: bool = False
    handle: Any = None


def _client_phase(vport: VerbsPort, ch: Channel, spec: TrafficSpec, op: Op, size: int, seed: int,
                  peer_mr: dict[str, int], recv_state: _RecvState) -> OpResult:
    layout = Layout.of(spec)
    slots = layout.slots
    if op in (Op.WRITE, Op.WRITE_IMM, Op.SEND):
        _fill(vport, layout, spec.qps, slots, size, seed)
    elif op == Op.READ:
        _fill(vport, layout, spec.qps, slots, size, None)
    else:
        _zero_words(vport, layout, spec.qps, slots)
    ch.send({"type": "phase", "op": op.value, "size": size, "seed": seed})
    ch.recv("ready")
    latency: Latency | None = None
    if spec.mode == Mode.BW:
        ring = _build_ring(vport, spec, op, size, layout, int(peer_mr["addr"]), int(peer_mr["rkey"]))
        budget = max(16, spec.qps * spec.depth // spec.signal_every)
        if spec.warmup:
            ring.run(limit=spec.depth, deadline=None, budget=budget)
        before = sum(ring.posted)
        t0 = time.perf_counter()
        deadline = t0 + spec.duration_s if spec.iterations is None and spec.duration_s else None
        ring.run(limit=spec.iterations, deadline=deadline, budget=budget)
        seconds = time.perf_counter() - t0
        messages = sum(ring.posted) - before
        counts = list(ring.posted)
    else:
        samples, counts = _client_latency(vport, spec, op, size, layout, peer_mr, recv_state)
        seconds = sum(samples)
        messages = len(samples)
        latency = _latency("one_way" if op.needs_recv else "rtt",
                           [s / 2 for s in samples] if op.needs_recv else samples)
    ch.send({"type": "done", "counts": counts})
    verdict = ch.recv("verified")
    verify: Verification | None = None
    if spec.verify:
        if op == Op.READ:
            verify = _check_slots(vport, layout, counts, slots, size, seed)
        else:
            verify = Verification(ok=bool(verdict["ok"]), checked=int(verdict["checked"]),
                                  detail=str(verdict.get("detail", "")))
    nbytes = messages * size
    return OpResult(
        op=op, mode=spec.mode, size=size, qps=spec.qps, depth=spec.depth if spec.mode == Mode.BW else 1,
        post_list=spec.post_list if spec.mode == Mode.BW else 1,
        signal_every=spec.signal_every if spec.mode == Mode.BW else 1, messages=messages, bytes=nbytes,
        seconds=round(seconds, 6), gbit_s=round(nbytes * 8 / seconds / 1e9, 4) if seconds > 0 else 0.0,
        msg_rate=round(messages / seconds, 1) if seconds > 0 else 0.0, latency=latency, verify=verify,
    )


def _single(vport: VerbsPort, q: int, op: Op, size: int, layout: Layout, peer_mr: dict[str, int]) -> Any:
    off = layout.offset(q, 0)
    item = WrItem(offset=off, length=size, remote_addr=int(peer_mr["addr"]) + off, imm=imm_of(q, 0),
                  compare_add=1 if op == Op.FETCH_ADD else 0, signaled=True, wr_id=(q << 32))
    return vport.prepare(q, op, [item], int(peer_mr["rkey"]))


class _Completions:
    """Completions of one CQ handed out one at a time (a poll may return several)."""

    def __init__(self, vport: VerbsPort, op: str) -> None:
        self.vport, self.op = vport, op
        self.pending: list[Completion] = []

    def next(self) -> Completion:
        t0 = time.monotonic()
        while not self.pending:
            self.pending.extend(self.vport.poll(4))
            if not self.pending and time.monotonic() - t0 > STALL_S:
                raise TrafficError(f"{self.vport.device}: no completion for {STALL_S:.0f}s during {self.op} latency",
                                   hint="the peer or the link stalled")
        wc = self.pending.pop(0)
        _check_wc(wc, self.op, self.vport.device)
        return wc


def _client_latency(vport: VerbsPort, spec: TrafficSpec, op: Op, size: int, layout: Layout,
                    peer_mr: dict[str, int], recv_state: _RecvState) -> tuple[list[float], list[int]]:
    """One message at a time on QP 0; returns per-iteration round-trip seconds and per-QP message counts."""
    chain = _single(vport, 0, op, size, layout, peer_mr)
    recv = None
    if op.needs_recv:
        if recv_state.handle is None:
            recv_state.handle = vport.prepare_recv(0, layout.offset(0, 0), layout.stride, 0)
        recv = recv_state.handle
    samples: list[float] = []
    perf = time.perf_counter
    deadline = perf() + spec.duration_s if spec.iterations is None and spec.duration_s else None
    limit = spec.iterations
    if recv is not None and not recv_state.posted:
        vport.post_recv(0, recv)
        recv_state.posted = True
    cas_value = 0
    comps = _Completions(vport, op.value)
    while (limit is None or len(samples) < limit) and (deadline is None or perf() < deadline):
        if op == Op.CMP_SWAP:
            vport.set_atomic(chain, 0, cas_value, cas_value + 1)
            cas_value += 1
        t0 = perf()
        vport.post(0, chain)
        if recv is None:
            comps.next()
        else:
            got_send = got_recv = False
            while not (got_send and got_recv):
                wc = comps.next()
                if wc.opcode in (WC_RECV, WC_RECV_RDMA_WITH_IMM):
                    got_recv = True
                else:
                    got_send = True
        samples.append(perf() - t0)
        if recv is not None:
            vport.post_recv(0, recv)
    counts = [len(samples)] + [0] * (spec.qps - 1)
    return samples, counts


# ----------------------------------------------------------------------------------------------------------------
# Server
# ----------------------------------------------------------------------------------------------------------------


@dataclass
class ServerSession:
    """What one client session did on the server (printed by ``traffic server --output json``)."""

    client: str
    ok: bool = True
    error: str | None = None
    phases: list[dict[str, Any]] = field(default_factory=list)


class Server:
    """``fabricd traffic server``: accepts one client at a time and serves its phases.

    The pool is registered once per RDMA device and reused by every session (QPs and the CQ are per session). When
    ``bind`` is a concrete address, the device and GID are resolved and the pool registered at start-up, so a
    missing rxe device fails at once.
    """

    def __init__(
        self,
        *,
        bind: str = "0.0.0.0",
        port: int = DEFAULT_PORT,
        device: str | None = None,
        gid_index: int | None = None,
        roce_version: RoceVersion = RoceVersion.V2,
        pool_bytes: int = DEFAULT_POOL_BYTES,
        root: str = "/",
        open_port: OpenPort = PyverbsPort,
    ) -> None:
        self.bind, self.device, self.gid_index, self.roce_version = bind, device, gid_index, roce_version
        self.pool_bytes, self.root, self.open_port = pool_bytes, root, open_port
        self._ports: dict[str, VerbsPort] = {}
        self.sock = oob.listen(bind, port)
        self.port = int(self.sock.getsockname()[1])
        try:
            if not ipaddress.ip_address(bind).is_unspecified or device is not None:
                self._port_for(bind)
        except BaseException:
            self.close()
            raise

    def _port_for(self, local_ip: str) -> VerbsPort:
        unspecified = ipaddress.ip_address(local_ip).is_unspecified
        choice = choose_gid(self.root, ip=None if unspecified or self.gid_index is not None else local_ip,
                            device=self.device, index=self.gid_index, version=self.roce_version)
        vport = self._ports.get(choice.device)
        if vport is None:
            vport = self.open_port(choice, self.pool_bytes)
            self._ports[choice.device] = vport
        vport.gid_index, vport.gid = choice.index, choice.gid
        return vport

    def serve(self, *, once: bool = False, on_session: Callable[[ServerSession], None] | None = None,
              accept_timeout_s: float | None = None) -> list[ServerSession]:
        """Serve sessions one after another (``once``: just one). Errors of a session are reported to its client
        and recorded; the server keeps listening."""
        done: list[ServerSession] = []
        self.sock.settimeout(accept_timeout_s)
        while True:
            try:
                conn, addr = self.sock.accept()
            except TimeoutError as exc:
                raise TrafficError(f"no traffic client connected within {accept_timeout_s:.0f}s "
                                   f"(listening on {self.bind}:{self.port})") from exc
            ch = Channel(conn, f"{addr[0]}:{addr[1]}")
            session = self._session(ch, conn.getsockname()[0])
            done.append(session)
            if on_session is not None:
                on_session(session)
            if once:
                return done

    def _session(self, ch: Channel, local_ip: str) -> ServerSession:
        session = ServerSession(client=ch.peer)
        vport: VerbsPort | None = None
        try:
            hello = ch.recv("hello")
            try:
                oob.check_hello(hello, fabricd.__version__)
                spec = TrafficSpec.model_validate(hello["spec"])
                need = spec.pool_need()
                if need > self.pool_bytes:
                    raise UsageError(
                        f"the request needs {need} bytes of registered memory per side, more than the server's "
                        f"{self.pool_bytes}-byte MR pool",
                        hint="lower --size, --qps or --depth, or restart the server with a larger --pool-mib")
                vport = self._port_for(local_ip)
                qps = vport.create_qps(spec.qps, send_depth=max(spec.depth, 4), recv_depth=spec.slots_per_qp())
                rd_atomic = min(vport.max_rd_atomic, int(hello.get("rd_atomic", 1)))
                for i, rq in enumerate(hello["qps"]):
                    vport.connect_qp(i, remote_qpn=int(rq["qpn"]), remote_psn=int(rq["psn"]),
                                     remote_gid=hello["gid"], mtu=int(hello["mtu"]), tos=spec.tos,
                                     rd_atomic=rd_atomic, ack_timeout=spec.ack_timeout)
            except (TrafficError, UsageError, ValueError, KeyError) as exc:
                text = exc.render() if isinstance(exc, TrafficError | UsageError) else f"bad hello: {exc}"
                ch.send({"type": "error", "message": text})
                raise
            ch.send({"type": "accept", "protocol": oob.PROTOCOL, "fabricd": fabricd.__version__, "gid": vport.gid,
                     "mtu": vport.mtu, "rd_atomic": vport.max_rd_atomic,
                     "qps": [{"qpn": n, "psn": p} for n, p in qps],
                     "mr": {"addr": vport.pool_addr, "rkey": vport.pool_rkey, "len": vport.pool_len}})
            recvs = self._post_recvs(vport, spec) if any(op.needs_recv for op in spec.ops) else []
            while True:
                msg = ch.recv(("phase", "bye"))
                if msg["type"] == "bye":
                    break
                phase = self._phase(vport, ch, spec, Op(msg["op"]), int(msg["size"]), int(msg["seed"]), recvs,
                                    hello["mr"])
                session.phases.append(phase)
                session.ok = session.ok and bool(phase["verify"]["ok"])
        except (TrafficError, UsageError, KeyError, ValueError) as exc:
            session.ok = False
            session.error = exc.render() if isinstance(exc, TrafficError | UsageError) else f"bad message: {exc}"
            log.warning("session with %s failed: %s", ch.peer, session.error)
        finally:
            ch.close()
            if vport is not None:
                vport.destroy_qps()
        return session

    @staticmethod
    def _post_recvs(vport: VerbsPort, spec: TrafficSpec) -> list[list[Any]]:
        layout = Layout.of(spec)
        recvs = []
        for q in range(spec.qps):
            per_q = [vport.prepare_recv(q, layout.offset(q, s), layout.stride, (q << 32) | s)
                     for s in range(layout.slots)]
            for r in per_q:
                vport.post_recv(q, r)
            recvs.append(per_q)
        return recvs

    def _phase(self, vport: VerbsPort, ch: Channel, spec: TrafficSpec, op: Op, size: int, seed: int,
               recvs: list[list[Any]], peer_mr: dict[str, int]) -> dict[str, Any]:
        layout = Layout.of(spec)
        if op in (Op.WRITE, Op.WRITE_IMM, Op.SEND):
            _fill(vport, layout, spec.qps, layout.slots, size, None)
        elif op == Op.READ:
            _fill(vport, layout, spec.qps, layout.slots, size, seed)
        else:
            _zero_words(vport, layout, spec.qps, layout.slots)
        ch.send({"type": "ready"})
        # the client's "done" arrives after the timed phase: no fixed timeout when it runs for N iterations
        ch.sock.settimeout(None if spec.iterations is not None else 3 * (spec.duration_s or 0) + 120)
        if op.needs_recv:
            counts, verify = self._receive(vport, ch, spec, op, size, seed, recvs, layout, peer_mr)
        else:
            counts = [int(c) for c in ch.recv("done")["counts"]]
            if op == Op.READ or not spec.verify:
                verify = Verification(ok=True, checked=0, detail="checked by the client" if op == Op.READ else "")
            elif op.atomic:
                verify = _check_words(vport, layout, counts, layout.slots, op)
            else:
                verify = _check_slots(vport, layout, counts, layout.slots, size, seed)
        ch.sock.settimeout(60)
        ch.send({"type": "verified", "ok": verify.ok, "checked": verify.checked, "detail": verify.detail,
                 "counts": counts})
        return {"op": op.value, "size": size, "counts": counts, "verify": verify.model_dump()}

    def _receive(self, vport: VerbsPort, ch: Channel, spec: TrafficSpec, op: Op, size: int, seed: int,
                 recvs: list[list[Any]], layout: Layout, peer_mr: dict[str, int]) -> tuple[list[int], Verification]:
        """Receive-side loop for SEND and WRITE_IMM: check, repost, and in latency mode answer each message."""
        received = [0] * spec.qps
        slots = layout.slots
        checked = 0
        bad: str | None = None
        expected: list[int] | None = None
        reply = _single(vport, 0, op, size, layout, peer_mr) if spec.mode == Mode.LAT else None
        idle = 0
        t_done = 0.0
        while True:
            wcs = vport.poll(64)
            for wc in wcs:
                _check_wc(wc, op.value, vport.device)
                if wc.opcode not in (WC_RECV, WC_RECV_RDMA_WITH_IMM):
                    continue  # our own reply's send completion
                q, s = wc.wr_id >> 32, wc.wr_id & 0xFFFFFFFF
                n = received[q]
                received[q] = n + 1
                if spec.verify and bad is None:
                    want_slot = n % slots
                    if s != want_slot:
                        bad = f"QP {q}: message {n} completed in slot {s}, expected {want_slot} (reordered)"
                    elif op == Op.WRITE_IMM and wc.imm_data != imm_of(q, want_slot):
                        bad = f"QP {q}: message {n} carried immediate {wc.imm_data:#x}, expected " \
                              f"{imm_of(q, want_slot):#x} (lost or duplicated message)"
                    elif op == Op.SEND and wc.byte_len != size:
                        bad = f"QP {q}: message {n} is {wc.byte_len} bytes, expected {size}"
                    elif op == Op.SEND and n % spec.verify_stride == 0:
                        checked += 1
                        src = want_slot if spec.mode == Mode.BW else 0
                        if vport.read(layout.offset(q, s), size) != pattern(seed, q, src, size):
                            bad = f"QP {q}: message {n} payload differs from what the sender wrote"
                vport.post_recv(q, recvs[q][s])
                if reply is not None:
                    vport.post(0, reply)
            if wcs:
                idle = 0
            else:
                idle += 1
            if expected is None and (idle or len(wcs) < 64) and ch.readable():
                expected = [int(c) for c in ch.recv("done")["counts"]]
                t_done = time.monotonic()
            if expected is not None:
                if all(r >= e for r, e in zip(received, expected, strict=True)):
                    break
                if time.monotonic() - t_done > 10:
                    bad = bad or f"received {received} messages per QP, the client sent {expected}"
                    break
            if idle > 1000:
                time.sleep(0.0005)  # yield the CPU to the kernel's RDMA work when nothing arrives
        if op == Op.WRITE_IMM and spec.verify and bad is None and spec.mode == Mode.BW:
            v = _check_slots(vport, layout, received, slots, size, seed)
            return received, v.model_copy(update={"checked": v.checked + sum(received)})
        if bad is not None:
            return received, Verification(ok=False, checked=checked, detail=bad)
        return received, Verification(ok=True, checked=checked + (sum(received) if op == Op.WRITE_IMM else 0))

    def close(self) -> None:
        for vport in self._ports.values():
            vport.close()
        self._ports.clear()
        self.sock.close()


@contextmanager
def server(**kwargs: Any) -> Iterator[Server]:
    srv = Server(**kwargs)
    try:
        yield srv
    finally:
        srv.close()


__all__ = ["DEFAULT_POOL_BYTES", "PeerRefusedError", "Server", "ServerSession", "run_client", "server"]
