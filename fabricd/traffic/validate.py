"""``validate-fabric``: run RC traffic between two hosts and check that the right counters moved.

For one (client, server) pair: snapshot both hosts' counters (:mod:`.snapshot`, read back with
:mod:`fabricd.readers`), capture the RoCE packets' marking on the server (:mod:`.sniff`), run RDMA WRITEs with the
intent's ToS (:mod:`.pair`), snapshot again, then assert on the deltas:

============================  =====================================================================================
``FABRIC-TRAFFIC``            the session ran and every payload arrived intact
``FABRIC-RDMA-BYTES``         bytes counted on the sender ~ payload sent (RDMA PMA ``port_xmit_data`` when the device
                              has it, else the RDMA netdev's ``tx_bytes``: rxe has no byte counters); 1.0-1.08x
                              plus headroom for the out-of-band channel, beyond that means retransmission
``FABRIC-SEQUENCE``           no out-of-sequence, sequence-error, duplicate or retransmission counter moved (rxe
                              ``out_of_seq_request``, ``rcvd_seq_err``, ``duplicate_request``,
                              ``completer_retry_err``; mlx5 ``out_of_sequence``, ``packet_seq_err``...)
``FABRIC-DROPS``              no drop or error counter moved (netdev ``rx/tx_dropped``, ``rx/tx_errors``, ethtool
                              discards, RDMA retry-exceeded)
``FABRIC-DSCP``               the captured RoCE v2 packets carry the intent's ToS (DSCP -> priority by the intent)
``FABRIC-PRIORITY-BYTES``     the bytes went out on the intended priority, where the NIC counts per priority
``FABRIC-PFC``                pause frames only on lossless priorities, where the NIC counts them
``FABRIC-ECN``                CNP counters readable (DCQCN), where the NIC has them
============================  =====================================================================================

Each check is declared once in :mod:`fabricd.traffic.checks` (code, title, hint) and each assertion here gives its
:class:`~fabricd.model.checks.CheckResult`: what it saw in ``note``, a failure as a finding with expected and got.
A check whose counters this NIC does not have is skipped with what it needs: Soft-RoCE (rxe) on virtio-net
implements no PFC, ECN, DCQCN or per-priority counters, so those need real NICs. Nothing is pretended.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fabricd.model import Policy
from fabricd.model.checks import CheckResult, Report, Status, result_of
from fabricd.readers.ethtool import EthtoolStats, read_ethtool
from fabricd.readers.rdma import RdmaKey, read_rdma_device

from . import snapshot, sniff
from .checks import TRAFFIC
from .oob import TrafficError
from .pair import PairRun, run_pair
from .remote import Runner
from .spec import Op, TrafficSpec

RDMA_BYTES_MAX_RATIO = 1.08
"""Wire bytes over payload: RoCE v2 headers (Eth 14, IPv4 20, UDP 8, BTH 12, RETH 16, ICRC 4) on 1-4 KiB packets
stay under 8 %; more means retransmitted data."""
OOB_SLACK_BYTES = 256 * 1024
"""Bytes of other traffic on the RDMA netdev during a run (out-of-band TCP, ARP, ACK echoes) not counted as payload."""

SEQUENCE_KEYS = (
    RdmaKey("out_of_sequence", "rx"),
    RdmaKey("packet_seq_errors", "rx"),
    RdmaKey("duplicate_requests", "rx"),
    RdmaKey("retransmits", "tx"),
    RdmaKey("retransmit_timeouts", "tx"),
    RdmaKey("implied_nak_seq_errors", "tx"),
    RdmaKey("local_ack_timeout_errors", "tx"),
)
DROP_RDMA_KEYS = (
    RdmaKey("retry_exceeded_errors", "tx"),
    RdmaKey("rnr_nak_retry_errors", "tx"),
    RdmaKey("out_of_buffer", "rx"),
)
DROP_NETDEV = ("rx_dropped", "tx_dropped", "rx_errors", "tx_errors")


@dataclass(frozen=True)
class Endpoint:
    """A host as validate-fabric sees it: its RDMA device/port, the physical netdev and the one with the address."""

    host: str
    rdma_device: str
    rdma_port: int
    netdev: str
    ip_netdev: str
    address: str


@dataclass
class HostCounters:
    """One snapshot of a host, read through the readers."""

    rdma: dict[RdmaKey, int]
    unmapped_rdma: dict[str, int]
    netdevs: dict[str, dict[str, int | None]]
    ethtool: EthtoolStats | None


@dataclass(frozen=True)
class Sniffed:
    """The server-side capture of a pair's run (:mod:`fabricd.traffic.sniff`), or why there is none."""

    capture: sniff.Capture | None
    error: str | None = None


def _passed(code: str, detail: str) -> CheckResult:
    """Check ``code`` passed; ``detail`` is what it saw."""
    return result_of(TRAFFIC[code], Status.PASS, note=detail)


def _skipped(code: str, detail: str, needs: str | None = None) -> CheckResult:
    """Check ``code`` cannot be made here (``detail``): skipped, with what it ``needs``."""
    return result_of(TRAFFIC[code], Status.SKIP, note=f"{detail}; needs {needs}" if needs else detail)


def _failed(
    code: str, *, obj: str, path: str, detail: str, expected: str | None = None, got: str | None = None
) -> CheckResult:
    """Check ``code`` failed on ``obj`` (a host or a pair) at ``path`` (the counters or the capture it read)."""
    spec = TRAFFIC[code]
    return result_of(spec, Status.FAIL, [spec.finding(obj=obj, path=path, message=detail, expected=expected, got=got)])


def _pair(client: Endpoint, server: Endpoint) -> str:
    return f"{client.host}->{server.host}"


@dataclass
class PairReport:
    """The verdict for one pair: its checks' results, the traffic measured and the counter deltas per host."""

    client: str
    server: str
    ran: bool
    error: str | None = None
    checks: list[CheckResult] = field(default_factory=list)
    traffic: dict[str, Any] = field(default_factory=dict)
    deltas: dict[str, dict[str, int]] = field(default_factory=dict)

    @classmethod
    def not_run(cls, client: str, server: str, error: str) -> PairReport:
        """A pair that did not run: FABRIC-TRAFFIC fails with why."""
        return cls(
            client=client,
            server=server,
            ran=False,
            error=error,
            checks=[
                _failed(
                    "FABRIC-TRAFFIC",
                    obj=f"{client}->{server}",
                    path="traffic",
                    detail=error,
                    expected="a completed session",
                    got="none",
                )
            ],
        )

    @property
    def ok(self) -> bool:
        return self.ran and self.error is None and all(c.status != Status.FAIL for c in self.checks)

    @property
    def report(self) -> Report:
        """The pair's checks as the one report (kind ``fabric``, target ``client->server``)."""
        return Report(kind="fabric", target=f"{self.client}->{self.server}", checks=self.checks)

    def to_dict(self) -> dict[str, Any]:
        """The pair as JSON: the report (``kind``, ``target``, ``checks``, ``compliant``, ``summary``) with
        ``client``, ``server``, ``ran``, ``ok``, ``error``, ``traffic`` and ``deltas``."""
        return {
            "client": self.client,
            "server": self.server,
            "ran": self.ran,
            "ok": self.ok,
            "error": self.error,
            **self.report.to_dict(),
            "traffic": self.traffic,
            "deltas": self.deltas,
        }


def read_counters(root: Path, ep: Endpoint) -> HostCounters:
    dev = read_rdma_device(root, ep.rdma_device)
    port = next((p for p in dev.ports if p.port == ep.rdma_port), None)
    netdevs = {nd: snapshot.read_netdev_stats(root, nd).values for nd in dict.fromkeys((ep.netdev, ep.ip_netdev))}
    eth = read_ethtool(root, ep.netdev) if (root / "ethtool" / f"{ep.netdev}.stats").is_file() else None
    return HostCounters(
        rdma=port.normalised() if port else {},
        unmapped_rdma=port.unmapped_hw_counters() if port else {},
        netdevs=netdevs,
        ethtool=eth,
    )


def _snap(runner: Runner, ep: Endpoint, workdir: Path, label: str) -> HostCounters:
    files = snapshot.take(runner, [ep.rdma_device], list(dict.fromkeys((ep.netdev, ep.ip_netdev))))
    root = snapshot.materialise(files, workdir / f"{ep.host}-{label}")
    return read_counters(root, ep)


def _delta(a: int | None, b: int | None) -> int | None:
    return None if a is None or b is None else b - a


def counter_deltas(before: HostCounters, after: HostCounters) -> dict[str, int]:
    """Every counter that both snapshots have, as ``name: after - before`` (RDMA by meaning, netdev by file)."""
    out: dict[str, int] = {}
    for key, v in after.rdma.items():
        if key in before.rdma:
            name = (
                "rdma."
                + key.counter
                + (f".{key.direction}" if key.direction else "")
                + (f".{key.qualifier}" if key.qualifier else "")
            )
            out[name] = v - before.rdma[key]
    for name, v in after.unmapped_rdma.items():
        if name in before.unmapped_rdma:
            out[f"rdma.{name}"] = v - before.unmapped_rdma[name]
    for nd, stats in after.netdevs.items():
        for name, value in stats.items():
            d = _delta(before.netdevs.get(nd, {}).get(name), value)
            if d is not None:
                out[f"{nd}.{name}"] = d
    if before.ethtool is not None and after.ethtool is not None:
        for name, raw in after.ethtool.raw.items():
            if name in before.ethtool.raw:
                out[f"ethtool.{name}"] = raw - before.ethtool.raw[name]
    return out


def assess(
    run: PairRun,
    client: Endpoint,
    server: Endpoint,
    *,
    before: Mapping[str, HostCounters],
    after: Mapping[str, HostCounters],
    sniffed: Sniffed,
    policy: Policy,
    tos: int,
) -> list[CheckResult]:
    """The assertions of :data:`__doc__` on one pair's counters (pure: unit-tested on captured snapshots)."""
    session = run.client
    if session is None or run.error:
        return [
            _failed(
                "FABRIC-TRAFFIC",
                obj=_pair(client, server),
                path="traffic",
                detail=run.error or "no result from the client",
                expected="a completed session",
                got="none",
            )
        ]
    bad = [f"{r.op.value} {r.size}B: {r.verify.detail}" for r in session.results if r.verify and not r.verify.ok]
    payload = sum(r.bytes for r in session.results if r.op in (Op.WRITE, Op.WRITE_IMM, Op.SEND))
    gbit = max((r.gbit_s for r in session.results), default=0.0)
    traffic = (
        _failed(
            "FABRIC-TRAFFIC",
            obj=_pair(client, server),
            path="payload",
            detail="; ".join(bad),
            expected="every checked payload intact",
            got=f"{len(bad)} corrupt",
        )
        if bad
        else _passed("FABRIC-TRAFFIC", f"{payload} payload bytes at {gbit:.3f} Gb/s, every checked payload intact")
    )
    cb, ca = before[client.host], after[client.host]
    return [
        traffic,
        _rdma_bytes(client, cb, ca, payload),
        _sequence(client, server, before, after),
        _drops(client, server, before, after),
        _dscp(sniffed, server, tos, policy),
        _priority_bytes(client, cb, ca, payload=payload, prio=policy.qos.priority_of(tos >> 2)),
        _pfc(client, server, before, after, policy),
        _ecn(client, server, before, after),
    ]


def _rdma_bytes(ep: Endpoint, b: HostCounters, a: HostCounters, payload: int) -> CheckResult:
    key = RdmaKey("data_bytes", "tx")
    counted: int
    if key in a.rdma and key in b.rdma:
        counted, source = a.rdma[key] - b.rdma[key], f"{ep.rdma_device} port_xmit_data (PMA, x4 octets)"
        slack = 0
    else:
        counted_n = _delta(
            b.netdevs.get(ep.ip_netdev, {}).get("tx_bytes"), a.netdevs.get(ep.ip_netdev, {}).get("tx_bytes")
        )
        if counted_n is None:
            return _skipped(
                "FABRIC-RDMA-BYTES",
                f"{ep.host}: neither RDMA byte counters nor {ep.ip_netdev} statistics are readable",
                "RDMA PMA counters (port_xmit_data) or netdev statistics",
            )
        counted, slack = int(counted_n), OOB_SLACK_BYTES
        source = f"{ep.ip_netdev} tx_bytes ({ep.rdma_device} has no RDMA byte counters)"
    if payload <= 0:
        return _skipped("FABRIC-RDMA-BYTES", "no payload-carrying operation ran")
    detail = f"{ep.host}: {counted} bytes on {source} for {payload} payload bytes (x{counted / payload:.3f})"
    if payload <= counted <= payload * RDMA_BYTES_MAX_RATIO + slack:
        return _passed("FABRIC-RDMA-BYTES", detail)
    return _failed(
        "FABRIC-RDMA-BYTES",
        obj=ep.host,
        path=source,
        detail=detail,
        expected=f"{payload}..{int(payload * RDMA_BYTES_MAX_RATIO + slack)} bytes",
        got=str(counted),
    )


def _sequence(
    client: Endpoint, server: Endpoint, before: Mapping[str, HostCounters], after: Mapping[str, HostCounters]
) -> CheckResult:
    deltas = [
        (f"{ep.host} {key.counter}", after[ep.host].rdma[key] - before[ep.host].rdma[key])
        for ep in (client, server)
        for key in SEQUENCE_KEYS
        if key in after[ep.host].rdma and key in before[ep.host].rdma
    ]
    return _unmoved(
        "FABRIC-SEQUENCE",
        _pair(client, server),
        deltas,
        path="RDMA sequence-error counters",
        why=" (packets were lost or reordered and went back-N: a lossy path)",
        unread=(
            "no sequence-error counters on either host",
            "RDMA hw_counters such as out_of_sequence / out_of_seq_request",
        ),
    )


def _drops(
    client: Endpoint, server: Endpoint, before: Mapping[str, HostCounters], after: Mapping[str, HostCounters]
) -> CheckResult:
    deltas = [
        (f"{ep.host} {counter}", d)
        for ep in (client, server)
        for counter, d in _drop_deltas(before[ep.host], after[ep.host])
    ]
    return _unmoved(
        "FABRIC-DROPS",
        _pair(client, server),
        deltas,
        path="drop and error counters",
        unread=("no drop counters readable", "netdev statistics or NIC discard counters"),
    )


def _unmoved(
    code: str, pair: str, deltas: list[tuple[str, int]], *, path: str, unread: tuple[str, str], why: str = ""
) -> CheckResult:
    """Check ``code`` on counters that must not move during the run (``(host counter, delta)`` of each counter read
    on both sides): skipped when none was read (``unread``: why, and what it needs), failed naming those that moved
    (``why`` after them), else passed with how many were read."""
    if not deltas:
        return _skipped(code, *unread)
    moved = [f"{name} +{d}" for name, d in deltas if d]
    if moved:
        return _failed(code, obj=pair, path=path, detail="; ".join(moved) + why, expected="0", got=", ".join(moved))
    return _passed(code, f"{len(deltas)} counters unchanged")


def _drop_deltas(b: HostCounters, a: HostCounters) -> Iterator[tuple[str, int]]:
    """(counter, delta) of every drop or error counter one host has in both snapshots: RDMA retry and buffer
    errors, netdev drops and errors, ethtool discards (a counter missing before counts as unchanged)."""
    for key in DROP_RDMA_KEYS:
        if key in a.rdma and key in b.rdma:
            yield key.counter, a.rdma[key] - b.rdma[key]
    for nd, stats in a.netdevs.items():
        for name in DROP_NETDEV:
            d = _delta(b.netdevs.get(nd, {}).get(name), stats.get(name))
            if d is not None:
                yield f"{nd} {name}", d
    if a.ethtool is not None and b.ethtool is not None:
        for c in a.ethtool.counters:
            if c.key.counter in ("discards", "priority_discards"):
                old = b.ethtool.raw.get(c.source)
                yield c.source, 0 if old is None else c.value - old


def _dscp(sniffed: Sniffed, server: Endpoint, tos: int, policy: Policy) -> CheckResult:
    prio = policy.qos.priority_of(tos >> 2)
    capture = sniffed.capture
    if capture is None:
        return _skipped(
            "FABRIC-DSCP",
            f"no capture on {server.host}: {sniffed.error}",
            "root on the receiving host for an AF_PACKET capture",
        )
    if capture.packets == 0:
        return _failed(
            "FABRIC-DSCP",
            obj=server.host,
            path=capture.interface,
            detail=f"no RoCE v2 packet seen on {server.host} {capture.interface}",
            expected=f"ToS {tos}",
            got="no packets",
        )
    wrong = {t: n for t, n in capture.tos.items() if t != tos}
    seen = ", ".join(f"ToS {t} x{n}" for t, n in sorted(capture.tos.items()))
    if wrong:
        return _failed(
            "FABRIC-DSCP",
            obj=server.host,
            path=capture.interface,
            detail=f"{server.host} {capture.interface}: {seen}",
            expected=f"ToS {tos} (DSCP {tos >> 2} -> priority {prio})",
            got=seen,
        )
    return _passed(
        "FABRIC-DSCP",
        f"{capture.packets} RoCE v2 packets on {server.host} {capture.interface}, all ToS "
        f"{tos} (DSCP {tos >> 2} -> priority {prio} by the intent)",
    )


def _priority_bytes(ep: Endpoint, b: HostCounters, a: HostCounters, *, payload: int, prio: int) -> CheckResult:
    """Bytes sent on priority ``prio`` (the intent's for the run's ToS) cover the payload."""
    eth_a, eth_b = a.ethtool, b.ethtool
    if eth_a is None or eth_b is None or not eth_a.priorities("priority_bytes"):
        driver = eth_a.driver if eth_a is not None else None
        return _skipped(
            "FABRIC-PRIORITY-BYTES",
            f"{ep.host} {ep.netdev} ({driver or 'unknown driver'}) counts no bytes per priority",
            f"a NIC with per-priority counters (e.g. mlx5 tx_prio{prio}_bytes)",
        )
    got = _delta(eth_b.get("priority_bytes", "tx", prio), eth_a.get("priority_bytes", "tx", prio)) or 0
    others = {
        p: (_delta(eth_b.get("priority_bytes", "tx", p), eth_a.get("priority_bytes", "tx", p)) or 0)
        for p in eth_a.priorities("priority_bytes")
        if p != prio
    }
    detail = f"{ep.host}: priority {prio} +{got} bytes; others " + ", ".join(
        f"{p}: +{v}" for p, v in sorted(others.items()) if v
    )
    if got >= payload:
        return _passed("FABRIC-PRIORITY-BYTES", detail)
    return _failed(
        "FABRIC-PRIORITY-BYTES",
        obj=ep.host,
        path=f"{ep.netdev} priority {prio} bytes",
        detail=detail,
        expected=f">= {payload}",
        got=str(got),
    )


def _pfc(
    client: Endpoint,
    server: Endpoint,
    before: Mapping[str, HostCounters],
    after: Mapping[str, HostCounters],
    policy: Policy,
) -> CheckResult:
    lossless = set(policy.pfc.priorities)
    counted: list[tuple[int, str]] = []
    readable = False
    for ep in (client, server):
        a, b = after[ep.host].ethtool, before[ep.host].ethtool
        readable = readable or (a is not None and bool(a.priorities("pause_frames")))
        if a is not None and b is not None:
            counted += [(p, f"{ep.host} {moved}") for p, moved in _pauses(b, a)]
    if not counted and not readable:
        return _skipped(
            "FABRIC-PFC",
            "no per-priority pause counters (Soft-RoCE on virtio-net implements no PFC; no virtual NIC here has DCB)",
            "a DCB-capable NIC (mlx5 rx_prio3_pause, bnxt, ice...)",
        )
    wrong = [moved for p, moved in counted if p not in lossless]
    if wrong:
        return _failed(
            "FABRIC-PFC",
            obj=_pair(client, server),
            path="pause frames per priority",
            detail="; ".join(wrong),
            expected=f"pauses only on {sorted(lossless)}",
            got=", ".join(wrong),
        )
    return _passed("FABRIC-PFC", "; ".join(m for _, m in counted) or "no pause frames during the run")


def _pauses(b: EthtoolStats, a: EthtoolStats) -> Iterator[tuple[int, str]]:
    """(priority, ``rx|tx prio P +N``) of every per-priority pause counter that moved on one NIC."""
    for p in a.priorities("pause_frames"):
        for direction in ("rx", "tx"):
            d = _delta(b.get("pause_frames", direction, p), a.get("pause_frames", direction, p))
            if d:
                yield p, f"{direction} prio {p} +{d}"


def _ecn(
    client: Endpoint, server: Endpoint, before: Mapping[str, HostCounters], after: Mapping[str, HostCounters]
) -> CheckResult:
    keys = (RdmaKey("cnp_sent", "tx"), RdmaKey("cnp_handled", "rx"), RdmaKey("ecn_marked_packets", "rx"))
    parts = []
    for ep in (client, server):
        for k in keys:
            if k in after[ep.host].rdma and k in before[ep.host].rdma:
                parts.append(f"{ep.host} {k.counter} +{after[ep.host].rdma[k] - before[ep.host].rdma[k]}")
    if not parts:
        return _skipped(
            "FABRIC-ECN",
            "no CNP/ECN counters (Soft-RoCE implements no ECN or DCQCN)",
            "a NIC with DCQCN counters (mlx5 np_cnp_sent, rp_cnp_handled, np_ecn_marked_roce_packets)",
        )
    return _passed("FABRIC-ECN", "; ".join(parts))


def validate_pair(
    client: Endpoint,
    server: Endpoint,
    client_runner: Runner,
    server_runner: Runner,
    *,
    policy: Policy,
    spec: TrafficSpec,
) -> PairReport:
    """Snapshot, capture, traffic, snapshot, assess. A pair that cannot run has ``ran=False``, the reason, and a
    failed FABRIC-TRAFFIC."""
    report = PairReport(client=client.host, server=server.host, ran=False)
    with tempfile.TemporaryDirectory(prefix="fabricd-validate-") as tmp:
        work = Path(tmp)
        try:
            before = {
                ep.host: _snap(r, ep, work, "before") for ep, r in ((client, client_runner), (server, server_runner))
            }
        except TrafficError as exc:
            return PairReport.not_run(client.host, server.host, f"counter snapshot failed: {exc.render()}")
        capture_s = 90 + (spec.duration_s or 0) + (spec.iterations or 0) * 0.05
        started = None
        capture_error: str | None = None
        try:
            started = sniff.start(server_runner, server.ip_netdev, seconds=capture_s, limit=400)
        except TrafficError as exc:
            capture_error = exc.render()
        run = run_pair(server_runner, client_runner, server.address, spec)
        capture = None
        if started is not None:
            try:
                capture = sniff.collect(started, server.ip_netdev, timeout_s=capture_s + 30)
            except TrafficError as exc:
                capture_error = exc.render()
        try:
            after = {
                ep.host: _snap(r, ep, work, "after") for ep, r in ((client, client_runner), (server, server_runner))
            }
        except TrafficError as exc:
            return PairReport.not_run(client.host, server.host, f"counter snapshot failed: {exc.render()}")
    report.ran = run.client is not None
    report.error = run.error if run.client is None else None
    report.checks = assess(
        run,
        client,
        server,
        before=before,
        after=after,
        sniffed=Sniffed(capture, capture_error),
        policy=policy,
        tos=spec.tos,
    )
    if run.client is not None:
        report.traffic = {
            "ops": [r.model_dump(mode="json") for r in run.client.results],
            "tos": spec.tos,
            "gid": run.client.gid,
            "peer_gid": run.client.peer_gid,
        }
    report.deltas = {h: counter_deltas(before[h], after[h]) for h in before}
    return report
