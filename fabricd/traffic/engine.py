"""The traffic generator's sessions: a client and a server over a :class:`~fabricd.traffic.verbs.VerbsPort`.

A session is the out-of-band protocol (:mod:`fabricd.traffic.oob`): the client's ``hello`` (spec, GID, MTU, QPs,
memory region) and the server's ``accept``, then per phase (one op at one message size) ``phase`` / ``ready``, the
timed run, ``done`` (the client's per-QP counts) / ``verified``, and ``bye``. What the messages hold and how each
side checks them is :mod:`fabricd.traffic.payload`; the client's posting loops are :mod:`fabricd.traffic.requester`,
the server's receive loop for SEND and WRITE_IMM :mod:`fabricd.traffic.receiver`.

Checks: WRITE / WRITE_IMM: the server compares every written slot after the client's ``done``; WRITE_IMM also checks
that each receive completion carries the immediate ``q << 16 | slot`` in ring order (no loss, no reordering);
SEND: the server checks the length of every receive and the bytes of every ``verify_stride``-th one; READ: the
client compares its slots with the server's pattern; FETCH_ADD (+1) and CMP_SWAP (v -> v+1, chained per slot): the
server checks each 8-byte word equals the number of operations that targeted it.
"""

from __future__ import annotations

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
from .payload import Layout, Phase, check_slots, check_words, faa_count, pattern, phase_seed, prepare
from .receiver import receive
from .requester import PeerMr, RecvState, build_ring, client_latency
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
)
from .verbs import PyverbsPort, VerbsPort

log = logging.getLogger(__name__)

OpenPort = Callable[[GidChoice, int], VerbsPort]
"""Opens a verbs port for a GID choice with a pool of N bytes (PyverbsPort; tests inject a fake)."""

DEFAULT_POOL_BYTES = 64 << 20


@dataclass(frozen=True)
class LocalRdma:
    """The local side of a session: which RDMA device and GID (``device``, ``gid_index``, ``roce_version``; found
    under ``root``'s sysfs), the size of the memory region registered for it, and how a port is opened."""

    device: str | None = None
    gid_index: int | None = None
    roce_version: RoceVersion = RoceVersion.V2
    pool_bytes: int = DEFAULT_POOL_BYTES
    root: str = "/"
    open_port: OpenPort = PyverbsPort


def _latency(kind: str, samples_s: Sequence[float]) -> Latency | None:
    if not samples_s:
        return None
    us = sorted(s * 1e6 for s in samples_s)
    n = len(us)

    def pct(p: float) -> float:
        return round(us[min(n - 1, int(p * (n - 1) + 0.5))], 2)

    return Latency(
        kind=kind,
        samples=n,
        min_us=round(us[0], 2),
        p50_us=pct(0.5),
        avg_us=round(sum(us) / n, 2),
        p99_us=pct(0.99),
        max_us=round(us[-1], 2),
    )


def source_ip(peer: str, port: int) -> str:
    """The local address the kernel would use to reach ``peer`` (a UDP connect sends nothing)."""
    try:
        infos = socket.getaddrinfo(peer, port, type=socket.SOCK_DGRAM)
    except socket.gaierror as exc:
        raise TrafficError(
            f"cannot resolve traffic peer {peer!r}: {exc.strerror}",
            hint="pass the peer's RDMA address (an IP) with --peer",
        ) from exc
    family, _, _, _, addr = infos[0]
    with socket.socket(family, socket.SOCK_DGRAM) as s:
        try:
            s.connect(addr)
        except OSError as exc:
            raise TrafficError(
                f"no route to traffic peer {peer}: {exc.strerror}",
                hint="check the address and this host's routes ('ip route get PEER')",
            ) from exc
        return str(s.getsockname()[0])


# ----------------------------------------------------------------------------------------------------------------
# Client
# ----------------------------------------------------------------------------------------------------------------


def _require_pool(spec: TrafficSpec, pool_bytes: int, *, owner: str, remedy: str) -> None:
    """Refuse ``spec`` when its QPs' slots need more registered memory than the ``pool_bytes`` MR pool (``owner``:
    whose pool, as the message says it; ``remedy``: the fix besides a smaller request)."""
    need = spec.pool_need()
    if need > pool_bytes:
        raise UsageError(
            f"{spec.qps} QP(s) x {spec.slots_per_qp()} slot(s) x {spec.slot_bytes()} B messages need "
            f"{need} bytes of registered memory, more than {owner} {pool_bytes}-byte MR pool",
            hint=f"lower --size, --qps or --depth, or {remedy}",
        )


def run_client(
    peer: str,
    spec: TrafficSpec,
    *,
    port: int = DEFAULT_PORT,
    local: LocalRdma = LocalRdma(),
    connect_timeout_s: float = 15.0,
    progress: Callable[[str], None] = log.info,
) -> SessionResult:
    """Run ``spec`` against the traffic server at ``peer:port`` and return the measurements.

    Order, so bad input costs nothing: check the pool size, find the local address towards the peer and its GID
    (sysfs only), connect the out-of-band channel, then open the device, register the pool and create QPs. Whatever
    fails, every verbs resource created is released before the error propagates.
    """
    _require_pool(spec, local.pool_bytes, owner="the", remedy="raise --pool-mib")
    local_ip = source_ip(peer, port)
    choice = choose_gid(
        local.root,
        ip=local_ip if local.gid_index is None else None,
        device=local.device,
        index=local.gid_index,
        version=local.roce_version,
    )
    seed = spec.seed or int.from_bytes(os.urandom(4), "big") | 1
    ch = oob.connect(peer, port, timeout_s=connect_timeout_s)
    vport: VerbsPort | None = None
    try:
        vport = local.open_port(choice, local.pool_bytes)
        acc = _client_hello(vport, ch, spec)
        results = []
        recv_state = RecvState()
        for op in spec.ops:
            for size in spec.effective_sizes(op):
                progress(f"{op.value} {size} B x {spec.qps} QP(s) ({spec.mode.value})")
                phase = Phase(spec, op, size, phase_seed(seed, op, size))
                results.append(_client_phase(vport, ch, phase, acc["mr"], recv_state))
        ch.send({"type": "bye"})
        return SessionResult(
            ok=all(r.verify is None or r.verify.ok for r in results),
            peer=peer,
            local_ip=local_ip,
            device=choice.device,
            port=choice.port,
            gid_index=choice.index,
            gid=choice.gid,
            peer_gid=acc["gid"],
            tos=spec.tos,
            protocol=oob.PROTOCOL,
            fabricd_version=fabricd.__version__,
            peer_fabricd_version=str(acc.get("fabricd", "?")),
            results=results,
        )
    finally:
        ch.close()
        if vport is not None:
            vport.close()


def _client_hello(vport: VerbsPort, ch: Channel, spec: TrafficSpec) -> dict[str, Any]:
    """Create the QPs, send ``hello``, and connect them to the server's from its ``accept`` (returned)."""
    qps = vport.create_qps(spec.qps, send_depth=spec.depth, recv_depth=spec.slots_per_qp())
    ch.send(_offer("hello", vport, qps, spec=spec.model_dump(mode="json")))
    acc = ch.recv("accept")
    oob.check_hello(acc, fabricd.__version__)
    _connect(vport, acc, spec)
    return acc


def _offer(kind: str, vport: VerbsPort, qps: list[tuple[int, int]], **extra: Any) -> dict[str, Any]:
    """The ``hello`` (the client's, with its ``spec`` in ``extra``) or ``accept`` (the server's) message: this side's
    versions, GID, MTU, atomic depth, QPs (QPN, PSN) and memory region."""
    return {
        "type": kind,
        "protocol": oob.PROTOCOL,
        "fabricd": fabricd.__version__,
        **extra,
        "gid": vport.gid,
        "mtu": vport.mtu,
        "rd_atomic": vport.max_rd_atomic,
        "qps": [{"qpn": n, "psn": p} for n, p in qps],
        "mr": {"addr": vport.pool_addr, "rkey": vport.pool_rkey, "len": vport.pool_len},
    }


def _connect(vport: VerbsPort, peer: dict[str, Any], spec: TrafficSpec) -> None:
    """Connect this side's QP i to the peer's QP i from the peer's ``hello``/``accept``, at the lower of the two
    sides' atomic depths and the spec's ToS and ACK timeout."""
    rd_atomic = min(vport.max_rd_atomic, int(peer.get("rd_atomic", 1)))
    for i, rq in enumerate(peer["qps"]):
        vport.connect_qp(
            i,
            remote_qpn=int(rq["qpn"]),
            remote_psn=int(rq["psn"]),
            remote_gid=peer["gid"],
            mtu=int(peer["mtu"]),
            tos=spec.tos,
            rd_atomic=rd_atomic,
            ack_timeout=spec.ack_timeout,
        )


@dataclass(frozen=True)
class _Run:
    """What a timed run measured: its seconds, the messages it completed, per-QP counts, latency (latency mode)."""

    seconds: float
    messages: int
    counts: list[int]
    latency: Latency | None = None


def _client_phase(vport: VerbsPort, ch: Channel, phase: Phase, peer: PeerMr, recv_state: RecvState) -> OpResult:
    spec, op, size = phase.spec, phase.op, phase.size
    prepare(vport, phase, sender=True)
    ch.send({"type": "phase", "op": op.value, "size": size, "seed": phase.seed})
    ch.recv("ready")
    run = _bandwidth(vport, phase, peer) if spec.mode == Mode.BW else _latency_run(vport, phase, peer, recv_state)
    ch.send({"type": "done", "counts": run.counts})
    verdict = ch.recv("verified")
    verify: Verification | None = None
    if spec.verify:
        if op == Op.READ:
            verify = check_slots(vport, phase.layout, run.counts, size=size, seed=phase.seed)
        else:
            verify = Verification(
                ok=bool(verdict["ok"]), checked=int(verdict["checked"]), detail=str(verdict.get("detail", ""))
            )
    return _op_result(phase, run, verify)


def _bandwidth(vport: VerbsPort, phase: Phase, peer: PeerMr) -> _Run:
    """The timed bandwidth run (after a warm-up of one ring depth when asked)."""
    spec = phase.spec
    ring = build_ring(vport, phase, peer)
    budget = max(16, spec.qps * spec.depth // spec.signal_every)
    if spec.warmup:
        ring.run(limit=spec.depth, deadline=None, budget=budget)
    before = sum(ring.posted)
    t0 = time.perf_counter()
    deadline = t0 + spec.duration_s if spec.iterations is None and spec.duration_s else None
    ring.run(limit=spec.iterations, deadline=deadline, budget=budget)
    seconds = time.perf_counter() - t0
    return _Run(seconds, sum(ring.posted) - before, list(ring.posted))


def _latency_run(vport: VerbsPort, phase: Phase, peer: PeerMr, recv_state: RecvState) -> _Run:
    """The timed latency run: one-way (half the ping-pong) for SEND and WRITE_IMM, round trips for the others."""
    op = phase.op
    samples, counts = client_latency(vport, phase, peer, recv_state)
    latency = _latency("one_way" if op.needs_recv else "rtt", [s / 2 for s in samples] if op.needs_recv else samples)
    return _Run(sum(samples), len(samples), counts, latency)


def _op_result(phase: Phase, run: _Run, verify: Verification | None) -> OpResult:
    spec, seconds, messages = phase.spec, run.seconds, run.messages
    bw = spec.mode == Mode.BW
    nbytes = messages * phase.size
    return OpResult(
        op=phase.op,
        mode=spec.mode,
        size=phase.size,
        qps=spec.qps,
        depth=spec.depth if bw else 1,
        post_list=spec.post_list if bw else 1,
        signal_every=spec.signal_every if bw else 1,
        messages=messages,
        bytes=nbytes,
        seconds=round(seconds, 6),
        gbit_s=round(nbytes * 8 / seconds / 1e9, 4) if seconds > 0 else 0.0,
        msg_rate=round(messages / seconds, 1) if seconds > 0 else 0.0,
        latency=run.latency,
        verify=verify,
    )


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
        local: LocalRdma = LocalRdma(),
    ) -> None:
        self.bind, self.local = bind, local
        self.pool_bytes = local.pool_bytes
        self._ports: dict[str, VerbsPort] = {}
        self.sock = oob.listen(bind, port)
        self.port = int(self.sock.getsockname()[1])
        try:
            if not ipaddress.ip_address(bind).is_unspecified or local.device is not None:
                self._port_for(bind)
        except BaseException:
            self.close()
            raise

    def _port_for(self, local_ip: str) -> VerbsPort:
        unspecified = ipaddress.ip_address(local_ip).is_unspecified
        local = self.local
        choice = choose_gid(
            local.root,
            ip=None if unspecified or local.gid_index is not None else local_ip,
            device=local.device,
            index=local.gid_index,
            version=local.roce_version,
        )
        vport = self._ports.get(choice.device)
        if vport is None:
            vport = local.open_port(choice, self.pool_bytes)
            self._ports[choice.device] = vport
        vport.gid_index, vport.gid = choice.index, choice.gid
        return vport

    def serve(
        self,
        *,
        once: bool = False,
        on_session: Callable[[ServerSession], None] | None = None,
        accept_timeout_s: float | None = None,
    ) -> list[ServerSession]:
        """Serve sessions one after another (``once``: just one). Errors of a session are reported to its client
        and recorded; the server keeps listening."""
        done: list[ServerSession] = []
        self.sock.settimeout(accept_timeout_s)
        while True:
            try:
                conn, addr = self.sock.accept()
            except TimeoutError as exc:
                raise TrafficError(
                    f"no traffic client connected within {accept_timeout_s:.0f}s (listening on {self.bind}:{self.port})"
                ) from exc
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
                _require_pool(
                    spec, self.pool_bytes, owner="the server's", remedy="restart the server with a larger --pool-mib"
                )
                vport = self._port_for(local_ip)
                qps = vport.create_qps(spec.qps, send_depth=max(spec.depth, 4), recv_depth=spec.slots_per_qp())
                _connect(vport, hello, spec)
            except (TrafficError, UsageError, ValueError, KeyError) as exc:
                text = exc.render() if isinstance(exc, TrafficError | UsageError) else f"bad hello: {exc}"
                ch.send({"type": "error", "message": text})
                raise
            ch.send(_offer("accept", vport, qps))
            recvs = self._post_recvs(vport, spec) if any(op.needs_recv for op in spec.ops) else []
            while True:
                msg = ch.recv(("phase", "bye"))
                if msg["type"] == "bye":
                    break
                phase = self._phase(
                    vport, ch, Phase(spec, Op(msg["op"]), int(msg["size"]), int(msg["seed"])), recvs, hello["mr"]
                )
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
            per_q = [
                vport.prepare_recv(q, layout.offset(q, s), layout.stride, (q << 32) | s) for s in range(layout.slots)
            ]
            for r in per_q:
                vport.post_recv(q, r)
            recvs.append(per_q)
        return recvs

    @staticmethod
    def _phase(vport: VerbsPort, ch: Channel, phase: Phase, recvs: list[list[Any]], peer: PeerMr) -> dict[str, Any]:
        spec, op = phase.spec, phase.op
        prepare(vport, phase, sender=False)
        ch.send({"type": "ready"})
        # the client's "done" arrives after the timed phase: no fixed timeout when it runs for N iterations
        ch.sock.settimeout(None if spec.iterations is not None else 3 * (spec.duration_s or 0) + 120)
        if op.needs_recv:
            counts, verify = receive(vport, ch, phase, recvs=recvs, peer=peer)
        else:
            counts = [int(c) for c in ch.recv("done")["counts"]]
            verify = _verify_one_sided(vport, phase, counts)
        ch.sock.settimeout(60)
        ch.send(
            {"type": "verified", "ok": verify.ok, "checked": verify.checked, "detail": verify.detail, "counts": counts}
        )
        return {"op": op.value, "size": phase.size, "counts": counts, "verify": verify.model_dump()}

    def close(self) -> None:
        for vport in self._ports.values():
            vport.close()
        self._ports.clear()
        self.sock.close()


def _verify_one_sided(vport: VerbsPort, phase: Phase, counts: list[int]) -> Verification:
    """The server's check after a WRITE or an atomic phase (a READ is checked by the client)."""
    op = phase.op
    if op == Op.READ or not phase.spec.verify:
        return Verification(ok=True, checked=0, detail="checked by the client" if op == Op.READ else "")
    if op.atomic:
        return check_words(vport, phase.layout, counts, op)
    return check_slots(vport, phase.layout, counts, size=phase.size, seed=phase.seed)


@contextmanager
def server(**kwargs: Any) -> Iterator[Server]:
    srv = Server(**kwargs)
    try:
        yield srv
    finally:
        srv.close()


__all__ = [
    "DEFAULT_POOL_BYTES",
    "LocalRdma",
    "PeerRefusedError",
    "Server",
    "ServerSession",
    "faa_count",
    "pattern",
    "run_client",
    "server",
]
