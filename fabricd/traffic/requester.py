"""The requester's data path: posting work requests and reaping their completions on the client.

Bandwidth mode (:class:`Ring`) keeps ``depth`` WRs in flight per QP, posting chains of ``post_list`` WRs with one
call and asking for a completion every ``signal_every`` WRs (each completion retires that many WRs, RC completes in
order). Latency mode (:func:`client_latency`) runs one message at a time: SEND and WRITE_IMM as a ping-pong
(one-way = RTT/2, like ib_send_lat), WRITE, READ and atomics as post-to-completion round trips.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .oob import TrafficError
from .payload import Layout, Phase, imm_of
from .spec import Op
from .verbs import WC_HINT, WC_RECV, WC_RECV_RDMA_WITH_IMM, Completion, VerbsPort, WrItem, wc_status_name

STALL_S = 30.0
"""Seconds without a completion before a run is declared stuck."""

PeerMr = dict[str, int]
"""The peer's memory region as its hello or accept message gives it: ``addr``, ``rkey``, ``len``."""


def check_wc(wc: Completion, op: str, device: str) -> None:
    """A failed work completion as a located error, with what to look at."""
    if wc.status != 0:
        name = wc_status_name(wc.status)
        raise TrafficError(
            f"{device}: work completion error {name} on QP {wc.qp_num:#x} during {op}",
            hint=WC_HINT.get(wc.status, "see the peer's output and 'rdma statistic show' on both hosts"),
        )


@dataclass
class Ring:
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
    _start: list[int] = field(default_factory=list, init=False, repr=False)
    _limit: int | None = field(default=None, init=False, repr=False)
    _stopping: bool = field(default=False, init=False, repr=False)

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
        self._start, self._limit, self._stopping = list(self.posted), limit, False
        self._top_up()
        last_progress = time.monotonic()
        perf = time.perf_counter
        while True:
            wcs = self.port.poll(budget)
            if wcs:
                self._retire(wcs)
                self._top_up()
                last_progress = time.monotonic()
            else:
                if not self._stopping and deadline is not None and perf() >= deadline:
                    self._stopping = True
                    self._top_up()
                if self.posted == self.retired and not any(self._wants(q) for q in range(self.qps)):
                    return
                self._check_stall(last_progress)
            if deadline is not None and not self._stopping and perf() >= deadline:
                self._stopping = True

    def _wants(self, q: int) -> bool:
        """QP ``q`` may post more in this run."""
        posted = self.posted[q]
        if posted % self.signal_every:
            return True  # the last WR posted must request a completion, or the ring never drains
        if self._stopping:
            return False
        return self._limit is None or posted - self._start[q] < self._limit

    def _top_up(self) -> None:
        """Post chains on every QP while its ring has room and it wants more."""
        posted, retired, lst, depth = self.posted, self.retired, self.post_list, self.depth
        for q in range(self.qps):
            while posted[q] - retired[q] + lst <= depth and self._wants(q):
                self.post_chain(q)

    def _retire(self, wcs: Sequence[Completion]) -> None:
        sig, retired = self.signal_every, self.retired
        for wc in wcs:
            if wc.status:
                check_wc(wc, self.op.value, self.port.device)
            retired[wc.wr_id >> 32] += sig

    def _check_stall(self, last_progress: float) -> None:
        if time.monotonic() - last_progress > STALL_S:
            raise TrafficError(
                f"{self.port.device}: no completion for {STALL_S:.0f}s during {self.op.value} "
                f"({sum(self.posted) - sum(self.retired)} WRs outstanding)",
                hint="the peer or the link stalled; check 'rdma statistic show' on both hosts",
            )


def build_ring(port: VerbsPort, phase: Phase, peer: PeerMr) -> Ring:
    """Every QP's chains of the phase prepared once, aimed at the same slots of the peer's pool."""
    spec, op, size, layout = phase.spec, phase.op, phase.size, phase.layout
    peer_addr, peer_rkey = int(peer["addr"]), int(peer["rkey"])
    lst = spec.post_list
    chains: list[list[Any]] = []
    for q in range(spec.qps):
        per_q = []
        for c in range(spec.depth // lst):
            items = []
            for j in range(lst):
                s = c * lst + j
                off = layout.offset(q, s)
                items.append(
                    WrItem(
                        offset=off,
                        length=size,
                        remote_addr=peer_addr + off,
                        imm=imm_of(q, s),
                        compare_add=1 if op == Op.FETCH_ADD else 0,
                        swap=0,
                        signaled=(s + 1) % spec.signal_every == 0,
                        wr_id=(q << 32) | s,
                    )
                )
            per_q.append(port.prepare(q, op, items, peer_rkey))
        chains.append(per_q)
    return Ring(
        port=port,
        op=op,
        qps=spec.qps,
        depth=spec.depth,
        post_list=lst,
        signal_every=spec.signal_every,
        chains=chains,
        posted=[0] * spec.qps,
        retired=[0] * spec.qps,
        nxt=[0] * spec.qps,
        cas=[[0] * spec.depth for _ in range(spec.qps)],
    )


def single(vport: VerbsPort, phase: Phase, peer: PeerMr) -> Any:
    """One signaled WR of the phase on QP 0, slot 0 (latency mode, and the server's ping-pong reply)."""
    layout, op = phase.layout, phase.op
    off = layout.offset(0, 0)
    item = WrItem(
        offset=off,
        length=phase.size,
        remote_addr=int(peer["addr"]) + off,
        imm=imm_of(0, 0),
        compare_add=1 if op == Op.FETCH_ADD else 0,
        signaled=True,
        wr_id=0,
    )
    return vport.prepare(0, op, [item], int(peer["rkey"]))


class Completions:
    """Completions of one CQ handed out one at a time (a poll may return several)."""

    def __init__(self, vport: VerbsPort, op: str) -> None:
        self.vport, self.op = vport, op
        self.pending: list[Completion] = []

    def next(self) -> Completion:
        t0 = time.monotonic()
        while not self.pending:
            self.pending.extend(self.vport.poll(4))
            if not self.pending and time.monotonic() - t0 > STALL_S:
                raise TrafficError(
                    f"{self.vport.device}: no completion for {STALL_S:.0f}s during {self.op} latency",
                    hint="the peer or the link stalled",
                )
        wc = self.pending.pop(0)
        check_wc(wc, self.op, self.vport.device)
        return wc


@dataclass
class RecvState:
    """The client's latency-mode receive buffer stays posted from one phase to the next (one per QP fits)."""

    posted: bool = False
    handle: Any = None


def client_latency(
    vport: VerbsPort, phase: Phase, peer: PeerMr, recv_state: RecvState
) -> tuple[list[float], list[int]]:
    """One message at a time on QP 0; returns per-iteration round-trip seconds and per-QP message counts."""
    spec, op, layout = phase.spec, phase.op, phase.layout
    chain = single(vport, phase, peer)
    recv = _latency_recv(vport, layout, recv_state) if op.needs_recv else None
    samples: list[float] = []
    perf = time.perf_counter
    deadline = perf() + spec.duration_s if spec.iterations is None and spec.duration_s else None
    limit = spec.iterations
    if recv is not None and not recv_state.posted:
        vport.post_recv(0, recv)
        recv_state.posted = True
    cas_value = 0
    comps = Completions(vport, op.value)
    while (limit is None or len(samples) < limit) and (deadline is None or perf() < deadline):
        if op == Op.CMP_SWAP:
            vport.set_atomic(chain, 0, cas_value, cas_value + 1)
            cas_value += 1
        t0 = perf()
        vport.post(0, chain)
        if recv is None:
            comps.next()
        else:
            _await_send_and_recv(comps)
        samples.append(perf() - t0)
        if recv is not None:
            vport.post_recv(0, recv)
    counts = [len(samples)] + [0] * (spec.qps - 1)
    return samples, counts


def _latency_recv(vport: VerbsPort, layout: Layout, recv_state: RecvState) -> Any:
    """The receive of a ping-pong phase (prepared once per session)."""
    if recv_state.handle is None:
        recv_state.handle = vport.prepare_recv(0, layout.offset(0, 0), layout.stride, 0)
    return recv_state.handle


def _await_send_and_recv(comps: Completions) -> None:
    """Wait for both the send's completion and the peer's answer."""
    got_send = got_recv = False
    while not (got_send and got_recv):
        wc = comps.next()
        if wc.opcode in (WC_RECV, WC_RECV_RDMA_WITH_IMM):
            got_recv = True
        else:
            got_send = True
