"""What the traffic generator's messages hold, where they live, and how each side checks them.

Memory layout (the same on both sides): QP ``q``'s slot ``s`` lives at pool offset ``(q * slots + s) * stride``,
``stride`` being the largest message size rounded up to 4 KiB; ``slots`` is the WR depth in bandwidth mode and 1 in
latency mode. A WR posted at ring position ``k`` of QP ``q`` uses slot ``k % depth`` on both sides, and RC delivers
in order, so the ``n``-th message a QP receives landed in slot ``n % depth`` and came from the sender's slot
``n % depth``: that is what payload verification checks.

Payloads: slot ``(q, s)`` of a phase holds ``pattern(seed, q, s)`` (a BLAKE2b block repeated), distinct per slot and
per phase; the receiving side first fills its slots with a poison byte, so stale memory never passes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

from .spec import Op, TrafficSpec, Verification, align
from .verbs import VerbsPort

POISON = 0x5A


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


@dataclass(frozen=True)
class Phase:
    """One phase of a session: ``op`` at message ``size`` under ``spec``, its payloads made from ``seed``."""

    spec: TrafficSpec
    op: Op
    size: int
    seed: int

    @property
    def layout(self) -> Layout:
        return Layout.of(self.spec)


def fill(port: VerbsPort, layout: Layout, *, qps: int, size: int, seed: int | None) -> None:
    """Pattern (seed given) or poison (seed None) into the first ``size`` bytes of each slot."""
    poison = bytes([POISON]) * size
    for q in range(qps):
        for s in range(layout.slots):
            port.write(layout.offset(q, s), pattern(seed, q, s, size) if seed is not None else poison)


def zero_words(port: VerbsPort, layout: Layout, qps: int) -> None:
    """Zero the 8-byte word at the start of each slot (the target of atomics)."""
    for q in range(qps):
        for s in range(layout.slots):
            port.write(layout.offset(q, s), bytes(8))


def prepare(port: VerbsPort, phase: Phase, *, sender: bool) -> None:
    """Fill this side's slots before a phase: the side whose memory is sent or read holds the pattern, the side
    that is written holds poison (a READ is sent by the server, the others by the client); atomics' words start
    at zero."""
    op, layout, qps = phase.op, phase.layout, phase.spec.qps
    if op.atomic:
        zero_words(port, layout, qps)
    elif sender == (op != Op.READ):
        fill(port, layout, qps=qps, size=phase.size, seed=phase.seed)
    else:
        fill(port, layout, qps=qps, size=phase.size, seed=None)


def check_slots(port: VerbsPort, layout: Layout, counts: Sequence[int], *, size: int, seed: int) -> Verification:
    """Every slot written at least once must hold its pattern."""
    checked = 0
    for q, total in enumerate(counts):
        for s in range(min(total, layout.slots)):
            checked += 1
            if port.read(layout.offset(q, s), size) != pattern(seed, q, s, size):
                return Verification(
                    ok=False, checked=checked, detail=f"QP {q} slot {s}: payload differs from what the sender wrote"
                )
    return Verification(ok=True, checked=checked)


def check_words(port: VerbsPort, layout: Layout, counts: Sequence[int], op: Op) -> Verification:
    """Every atomic word must equal the number of operations that targeted it."""
    checked = 0
    depth = layout.slots
    for q, total in enumerate(counts):
        for s in range(min(total, depth)):
            checked += 1
            got = int.from_bytes(port.read(layout.offset(q, s), 8), "little")
            want = faa_count(total, s, depth)
            if got != want:
                return Verification(
                    ok=False, checked=checked, detail=f"QP {q} word {s}: {got} after {want} {op.value} operations"
                )
    return Verification(ok=True, checked=checked)
