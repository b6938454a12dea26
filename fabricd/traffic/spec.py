"""What a traffic run asks for (:class:`TrafficSpec`) and what it measured (:class:`SessionResult`).

Both travel as JSON: the spec over the out-of-band channel (the server validates it), the results on stdout.
Names follow perftest where one exists (``-s`` size, ``-q`` QPs, ``-t`` tx depth, ``-D`` duration, ``-n``
iterations, ``--tclass``).
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import Field, model_validator

from fabricd.model.types import Model

DEFAULT_PORT = 18515
"""TCP port of the out-of-band channel (perftest's default, so firewalls opened for perftest work)."""
DEFAULT_TOS = 106
"""DSCP 26 << 2 | ECT(0): the standard RoCE class; the intent's ``qos.roce.effective_tos``."""
DEFAULT_ACK_TIMEOUT = 14
"""IBTA local ACK timeout exponent: 4.096 us x 2^14 = 67 ms (perftest's default)."""
LAB_ACK_TIMEOUT = 20
"""4.096 us x 2^20 = 4.3 s, for TCG guests on a shared 2-core host: a descheduled vCPU delays ACKs and rxe then
retransmits spuriously. Measured over 256 x 64 KiB WRITEs on the lossless wire: 14 (67 ms) gave duplicate_request
+218; 18 (1.07 s) still +13 at load average 4; 20 gave none."""
ATOMIC_SIZE = 8
"""Atomic operations act on one 8-byte word (IBTA: 64-bit fetch-and-add / compare-and-swap)."""
MAX_SIZE = 1 << 30


class Op(StrEnum):
    """RC operations. ``write_imm`` and ``send`` consume a receive on the server; the others are one-sided."""

    WRITE = "write"
    WRITE_IMM = "write_imm"
    SEND = "send"
    READ = "read"
    FETCH_ADD = "fetch_add"
    CMP_SWAP = "cmp_swap"

    @property
    def needs_recv(self) -> bool:
        return self in (Op.WRITE_IMM, Op.SEND)

    @property
    def atomic(self) -> bool:
        return self in (Op.FETCH_ADD, Op.CMP_SWAP)


class Mode(StrEnum):
    """``bw``: keep ``depth`` WRs in flight per QP and count bytes; ``lat``: one message at a time (ping-pong)."""

    BW = "bw"
    LAT = "lat"


class RoceVersion(StrEnum):
    V1 = "v1"
    V2 = "v2"


SWEEP_SIZES = (64, 256, 1024, 4096, 16384, 65536, 262144, 1048576)
"""``--sweep`` message sizes in bytes."""


class TrafficSpec(Model):
    """One client request: the operations and message sizes to run, and how."""

    ops: list[Op] = Field(min_length=1, description="operations, run one after another on the same QPs")
    mode: Mode = Mode.BW
    sizes: list[int] = Field(
        default_factory=lambda: [65536],
        min_length=1,
        description="message sizes in bytes (1 B - 1 GiB); atomics always use 8",
    )
    qps: int = Field(default=1, ge=1, le=64, description="RC QPs (perftest -q)")
    depth: int = Field(default=64, ge=1, le=4096, description="outstanding WRs per QP (perftest -t)")
    post_list: int = Field(default=16, ge=1, le=256, description="WRs chained per ibv_post_send call")
    signal_every: int = Field(default=16, ge=1, le=256, description="request a completion every N WRs")
    duration_s: float | None = Field(default=5.0, gt=0, le=86400, description="seconds per (op, size)")
    iterations: int | None = Field(default=None, ge=1, description="messages per QP per (op, size)")
    warmup: bool = Field(default=True, description="one untimed round of depth WRs per QP first (bw mode)")
    tos: int = Field(default=DEFAULT_TOS, ge=0, le=255, description="GRH traffic class = IPv4 ToS, 0-255")
    ack_timeout: int = Field(
        default=DEFAULT_ACK_TIMEOUT,
        ge=1,
        le=31,
        description="local ACK timeout, 4.096 us x 2^N (IBTA); 14 = 67 ms as perftest",
    )
    verify: bool = True
    verify_stride: int = Field(default=16, ge=1, description="SEND: check every Nth received message")
    seed: int = Field(default=0, ge=0, description="payload pattern seed; 0 means: chosen per session")

    @model_validator(mode="after")
    def _check(self) -> TrafficSpec:
        for size in self.sizes:
            if not 1 <= size <= MAX_SIZE:
                raise ValueError(f"message size {size} is outside 1..{MAX_SIZE} bytes")
        if self.duration_s is None and self.iterations is None:
            raise ValueError("give a duration or a number of iterations")
        if self.mode == Mode.BW:
            for name, n in (("post_list", self.post_list), ("signal_every", self.signal_every)):
                if self.depth % n:
                    raise ValueError(f"depth {self.depth} must be a multiple of {name} {n}")
        return self

    def effective_sizes(self, op: Op) -> list[int]:
        return [ATOMIC_SIZE] if op.atomic else list(self.sizes)

    def slot_bytes(self) -> int:
        """Largest per-message buffer any op of this spec uses."""
        return max(max(self.effective_sizes(op)) for op in self.ops)

    def slots_per_qp(self) -> int:
        return self.depth if self.mode == Mode.BW else 1

    def pool_need(self) -> int:
        """Bytes of registered memory each side needs: qps x slots x largest size, 4 KiB aligned slots."""
        return self.qps * self.slots_per_qp() * align(self.slot_bytes())


def align(n: int, to: int = 4096) -> int:
    return (n + to - 1) // to * to


class Latency(Model):
    """Latency percentiles in microseconds over ``samples`` round trips. ``kind``: ``one_way`` = RTT/2 of a
    ping-pong (what ib_send_lat reports), ``rtt`` = post-to-completion of a one-sided op (READ, atomics)."""

    kind: str
    samples: int
    min_us: float
    p50_us: float
    avg_us: float
    p99_us: float
    max_us: float


class Verification(Model):
    """Payload check: ``checked`` messages/buffers/words compared, ``ok`` when all matched."""

    ok: bool
    checked: int
    detail: str = ""


class OpResult(Model):
    """One (op, size) measurement."""

    op: Op
    mode: Mode
    size: int
    qps: int
    depth: int
    post_list: int
    signal_every: int
    messages: int = Field(description="messages completed in the timed phase, all QPs")
    bytes: int = Field(description="payload bytes moved in the timed phase")
    seconds: float
    gbit_s: float = Field(description="payload Gbit/s (1e9 bits)")
    msg_rate: float = Field(description="messages per second")
    latency: Latency | None = None
    verify: Verification | None = None


class SessionResult(Model):
    """Everything one client run measured, as ``traffic client --output json`` prints it."""

    ok: bool
    peer: str
    local_ip: str
    device: str
    port: int
    gid_index: int
    gid: str
    peer_gid: str
    tos: int
    protocol: int
    fabricd_version: str
    peer_fabricd_version: str
    results: list[OpResult]
