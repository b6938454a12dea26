"""The server's receive side of a SEND or WRITE_IMM phase: check each message, repost its receive, and in latency
mode answer it.

Checks, in ring order per QP (RC delivers in order, so the ``n``-th message lands in slot ``n % depth``): the slot
of each completion; for WRITE_IMM the immediate ``q << 16 | slot`` (no loss, no reordering) and, after the client's
``done``, every written slot's bytes; for SEND the length of every receive and the bytes of every
``verify_stride``-th one.
"""

from __future__ import annotations

import time
from typing import Any

from .oob import Channel
from .payload import Phase, check_slots, imm_of, pattern
from .requester import PeerMr, check_wc, single
from .spec import Mode, Op, Verification
from .verbs import WC_RECV, WC_RECV_RDMA_WITH_IMM, Completion, VerbsPort

_BATCH = 64
"""Completions reaped per poll."""
_DONE_GRACE_S = 10.0
"""After the client's ``done``, how long the messages it counted may take to arrive."""


def receive(
    vport: VerbsPort, ch: Channel, phase: Phase, *, recvs: list[list[Any]], peer: PeerMr
) -> tuple[list[int], Verification]:
    """Run the receive loop of ``phase`` until every message the client says it sent has arrived (or the grace
    time after its ``done`` passed); per-QP message counts and the verdict. ``recvs``: the posted receives, per QP
    and slot."""
    reply = single(vport, phase, peer) if phase.spec.mode == Mode.LAT else None
    return _Receiver(vport, ch, phase, recvs=recvs, reply=reply).run()


class _Receiver:
    """The state of one receive loop: counts per QP, the first problem found, the client's counts once known."""

    def __init__(self, vport: VerbsPort, ch: Channel, phase: Phase, *, recvs: list[list[Any]], reply: Any) -> None:
        self.vport, self.ch, self.phase, self.recvs, self.reply = vport, ch, phase, recvs, reply
        self.layout = phase.layout
        self.received = [0] * phase.spec.qps
        self.checked = 0
        self.bad: str | None = None
        self.expected: list[int] | None = None
        self.t_done = 0.0

    def run(self) -> tuple[list[int], Verification]:
        idle = 0
        while True:
            wcs = self.vport.poll(_BATCH)
            for wc in wcs:
                self._take(wc)
            idle = 0 if wcs else idle + 1
            if self.expected is None and (idle or len(wcs) < _BATCH) and self.ch.readable():
                self.expected = [int(c) for c in self.ch.recv("done")["counts"]]
                self.t_done = time.monotonic()
            if self.expected is not None and self._finished(self.expected):
                break
            if idle > 1000:
                time.sleep(0.0005)  # yield the CPU to the kernel's RDMA work when nothing arrives
        return self.received, self._verdict()

    def _take(self, wc: Completion) -> None:
        """One completion: count and check the message, repost its receive, answer it in latency mode."""
        vport = self.vport
        check_wc(wc, self.phase.op.value, vport.device)
        if wc.opcode not in (WC_RECV, WC_RECV_RDMA_WITH_IMM):
            return  # our own reply's send completion
        q, s = wc.wr_id >> 32, wc.wr_id & 0xFFFFFFFF
        n = self.received[q]
        self.received[q] = n + 1
        if self.phase.spec.verify and self.bad is None:
            self.bad = self._check(wc, q=q, s=s, n=n)
        vport.post_recv(q, self.recvs[q][s])
        if self.reply is not None:
            vport.post(0, self.reply)

    def _check(self, wc: Completion, *, q: int, s: int, n: int) -> str | None:
        """What is wrong with message ``n`` of QP ``q``, which completed in slot ``s``; None: nothing."""
        spec, op, size = self.phase.spec, self.phase.op, self.phase.size
        want_slot = n % self.layout.slots
        if s != want_slot:
            return f"QP {q}: message {n} completed in slot {s}, expected {want_slot} (reordered)"
        if op == Op.WRITE_IMM and wc.imm_data != imm_of(q, want_slot):
            return (
                f"QP {q}: message {n} carried immediate {wc.imm_data:#x}, expected "
                f"{imm_of(q, want_slot):#x} (lost or duplicated message)"
            )
        if op != Op.SEND:
            return None
        if wc.byte_len != size:
            return f"QP {q}: message {n} is {wc.byte_len} bytes, expected {size}"
        if n % spec.verify_stride == 0:
            self.checked += 1
            src = want_slot if spec.mode == Mode.BW else 0
            if self.vport.read(self.layout.offset(q, s), size) != pattern(self.phase.seed, q, src, size):
                return f"QP {q}: message {n} payload differs from what the sender wrote"
        return None

    def _finished(self, expected: list[int]) -> bool:
        """Every counted message arrived, or the grace time ran out (a shortfall is the problem then)."""
        if all(r >= e for r, e in zip(self.received, expected, strict=True)):
            return True
        if time.monotonic() - self.t_done > _DONE_GRACE_S:
            self.bad = self.bad or f"received {self.received} messages per QP, the client sent {expected}"
            return True
        return False

    def _verdict(self) -> Verification:
        phase, received = self.phase, self.received
        spec, op = phase.spec, phase.op
        if op == Op.WRITE_IMM and spec.verify and self.bad is None and spec.mode == Mode.BW:
            v = check_slots(self.vport, self.layout, received, size=phase.size, seed=phase.seed)
            return v.model_copy(update={"checked": v.checked + sum(received)})
        if self.bad is not None:
            return Verification(ok=False, checked=self.checked, detail=self.bad)
        return Verification(ok=True, checked=self.checked + (sum(received) if op == Op.WRITE_IMM else 0))
