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

A check whose counters this NIC does not have is ``not_checkable`` with what it needs: Soft-RoCE (rxe) on
virtio-net implements no PFC, ECN, DCQCN or per-priority counters, so those need real NICs. Nothing is pretended.
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from fabricd.model import Policy
from fabricd.readers.ethtool import EthtoolStats, read_ethtool
from fabricd.readers.rdma import RdmaKey, read_rdma_device

from . import snapshot, sniff
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
    RdmaKey("out_of_sequence", "rx"), RdmaKey("packet_seq_errors", "rx"), RdmaKey("duplicate_requests", "rx"),
    RdmaKey("retransmits", "tx"), RdmaKey("retransmit_timeouts", "tx"), RdmaKey("implied_nak_seq_errors", "tx"),
    RdmaKey("local_ack_timeout_errors", "tx"),
)
DROP_RDMA_KEYS = (RdmaKey("retry_exceeded_errors", "tx"), RdmaKey("rnr_nak_retry_errors", "tx"),
                  RdmaKey("out_of_buffer", "rx"))
DROP_NETDEV = ("rx_dropped", "tx_dropped", "rx_errors", "tx_errors")


class CheckStatus(StrEnum):
    PASS = "pass"
    FAIL = "fail"
    NOT_CHECKABLE = "not_checkable"


@dataclass(frozen=True)
class Check:
    """One assertion of a pair. ``needs`` says what hardware a not-checkable one needs."""

    code: str
    title: str
    status: CheckStatus
    detail: str
    expected: str | None = None
    got: str | None = None
    needs: str | None = None


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


@dataclass
class PairReport:
    """The verdict for one pair: checks, the traffic measured and the counter deltas per host."""

    client: str
    server: str
    ran: bool
    error: str | None = None
    checks: list[Check] = field(default_factory=list)
    traffic: dict[str, Any] = field(default_factory=dict)
    deltas: dict[str, dict[str, int]] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.ran and self.error is None and all(c.status != CheckStatus.FAIL for c in self.checks)


def read_counters(root: Path, ep: Endpoint) -> HostCounters:
    dev = read_rdma_device(root, ep.rdma_device)
    port = next((p for p in dev.ports if p.port == ep.rdma_port), None)
    netdevs = {nd: snapshot.read_netdev_stats(root, nd).values for nd in dict.fromkeys((ep.netdev, ep.ip_netdev))}
    eth = read_ethtool(root, ep.netdev) if (root / "ethtool" / f"{ep.netdev}.stats").is_file() else None
    return HostCounters(rdma=port.normalised() if port else {}, unmapped_rdma=port.unmapped_hw_counters() if port
                        else {}, netdevs=netdevs, ethtool=eth)


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
            name = "rdma." + key.counter + (f".{key.direction}" if key.direction else "") + (
                f".{key.qualifier}" if key.qualifier else "")
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
) -> list[Check]:
    """The assertions of :data:`__doc__` on one pair's counters (pure: unit-tested on captured snapshots)."""
    checks: list[Check] = []
    session = run.client
    if session is None or run.error:
        checks.append(Check("FABRIC-TRAFFIC", "RDMA traffic ran and payloads verified", CheckStatus.FAIL,
                            run.error or "no result from the client"))
        return checks
    bad = [f"{r.op.value} {r.size}B: {r.verify.detail}" for r in session.results if r.verify and not r.verify.ok]
    payload = sum(r.bytes for r in session.results if r.op in (Op.WRITE, Op.WRITE_IMM, Op.SEND))
    gbit = max((r.gbit_s for r in session.results), default=0.0)
    checks.append(Check(
        "FABRIC-TRAFFIC", "RDMA traffic ran and payloads verified", CheckStatus.FAIL if bad else CheckStatus.PASS,
        "; ".join(bad) if bad else f"{payload} payload bytes at {gbit:.3f} Gb/s, every checked payload intact",
    ))
    cb, ca = before[client.host], after[client.host]
    checks.append(_rdma_bytes(client, cb, ca, payload))
    checks.append(_sequence(client, server, before, after))
    checks.append(_drops(client, server, before, after))
    checks.append(_dscp(sniffed, server, tos, policy))
    checks.append(_priority_bytes(client, cb, ca, payload=payload, prio=policy.qos.priority_of(tos >> 2)))
    checks.append(_pfc(client, server, before, after, policy))
    checks.append(_ecn(client, server, before, after))
    return checks


def _rdma_bytes(ep: Endpoint, b: HostCounters, a: HostCounters, payload: int) -> Check:
    title = "bytes counted on the sender match the payload"
    key = RdmaKey("data_bytes", "tx")
    counted: int
    if key in a.rdma and key in b.rdma:
        counted, source = a.rdma[key] - b.rdma[key], f"{ep.rdma_device} port_xmit_data (PMA, x4 octets)"
        slack = 0
    else:
        counted_n = _delta(b.netdevs.get(ep.ip_netdev, {}).get("tx_bytes"), a.netdevs.get(ep.ip_netdev, {}).get(
            "tx_bytes"))
        if counted_n is None:
            return Check("FABRIC-RDMA-BYTES", title, CheckStatus.NOT_CHECKABLE,
                         f"{ep.host}: neither RDMA byte counters nor {ep.ip_netdev} statistics are readable",
                         needs="RDMA PMA counters (port_xmit_data) or netdev statistics")
        counted, slack = int(counted_n), OOB_SLACK_BYTES
        source = f"{ep.ip_netdev} tx_bytes ({ep.rdma_device} has no RDMA byte counters)"
    if payload <= 0:
        return Check("FABRIC-RDMA-BYTES", title, CheckStatus.NOT_CHECKABLE, "no payload-carrying operation ran")
    ratio = counted / payload
    ok = payload <= counted <= payload * RDMA_BYTES_MAX_RATIO + slack
    return Check("FABRIC-RDMA-BYTES", title, CheckStatus.PASS if ok else CheckStatus.FAIL,
                 f"{ep.host}: {counted} bytes on {source} for {payload} payload bytes (x{ratio:.3f})",
                 expected=f"{payload}..{int(payload * RDMA_BYTES_MAX_RATIO + slack)} bytes", got=str(counted))


def _sequence(client: Endpoint, server: Endpoint, before: Mapping[str, HostCounters],
              after: Mapping[str, HostCounters]) -> Check:
    title = "no out-of-sequence, duplicate or retransmitted packets"
    moved, seen = [], []
    for ep in (client, server):
        b, a = before[ep.host], after[ep.host]
        for key in SEQUENCE_KEYS:
            if key in a.rdma and key in b.rdma:
                seen.append(f"{ep.host}.{key.counter}")
                d = a.rdma[key] - b.rdma[key]
                if d:
                    moved.append(f"{ep.host} {key.counter} +{d}")
    if not seen:
        return Check("FABRIC-SEQUENCE", title, CheckStatus.NOT_CHECKABLE, "no sequence-error counters on either host",
                     needs="RDMA hw_counters such as out_of_sequence / out_of_seq_request")
    if moved:
        return Check("FABRIC-SEQUENCE", title, CheckStatus.FAIL,
                     "; ".join(moved) + " (packets were lost or reordered and went back-N: a lossy path)",
                     expected="0", got=", ".join(moved))
    return Check("FABRIC-SEQUENCE", title, CheckStatus.PASS, f"{len(seen)} counters unchanged")


def _drops(client: Endpoint, server: Endpoint, before: Mapping[str, HostCounters],
           after: Mapping[str, HostCounters]) -> Check:
    title = "no drops or errors"
    moved, seen = [], 0
    for ep in (client, server):
        b, a = before[ep.host], after[ep.host]
        for key in DROP_RDMA_KEYS:
            if key in a.rdma and key in b.rdma:
                seen += 1
                if a.rdma[key] - b.rdma[key]:
                    moved.append(f"{ep.host} {key.counter} +{a.rdma[key] - b.rdma[key]}")
        for nd, stats in a.netdevs.items():
            for name in DROP_NETDEV:
                d = _delta(b.netdevs.get(nd, {}).get(name), stats.get(name))
                if d is not None:
                    seen += 1
                    if d:
                        moved.append(f"{ep.host} {nd} {name} +{d}")
        if a.ethtool is not None and b.ethtool is not None:
            for c in a.ethtool.counters:
                if c.key.counter in ("discards", "priority_discards"):
                    old = b.ethtool.raw.get(c.source)
                    seen += 1
                    if old is not None and c.value - old:
                        moved.append(f"{ep.host} {c.source} +{c.value - old}")
    if not seen:
        return Check("FABRIC-DROPS", title, CheckStatus.NOT_CHECKABLE, "no drop counters readable",
                     needs="netdev statistics or NIC discard counters")
    if moved:
        return Check("FABRIC-DROPS", title, CheckStatus.FAIL, "; ".join(moved), expected="0", got=", ".join(moved))
    return Check("FABRIC-DROPS", title, CheckStatus.PASS, f"{seen} counters unchanged")


def _dscp(sniffed: Sniffed, server: Endpoint, tos: int, policy: Policy) -> Check:
    title = "RoCE packets carry the intent's DSCP"
    prio = policy.qos.priority_of(tos >> 2)
    capture = sniffed.capture
    if capture is None:
        return Check("FABRIC-DSCP", title, CheckStatus.NOT_CHECKABLE, f"no capture on {server.host}: {sniffed.error}",
                     needs="root on the receiving host for an AF_PACKET capture")
    if capture.packets == 0:
        return Check("FABRIC-DSCP", title, CheckStatus.FAIL, f"no RoCE v2 packet seen on {server.host} "
                     f"{capture.interface}", expected=f"ToS {tos}", got="no packets")
    wrong = {t: n for t, n in capture.tos.items() if t != tos}
    seen = ", ".join(f"ToS {t} x{n}" for t, n in sorted(capture.tos.items()))
    if wrong:
        return Check("FABRIC-DSCP", title, CheckStatus.FAIL, f"{server.host} {capture.interface}: {seen}",
                     expected=f"ToS {tos} (DSCP {tos >> 2} -> priority {prio})", got=seen)
    return Check("FABRIC-DSCP", title, CheckStatus.PASS,
                 f"{capture.packets} RoCE v2 packets on {server.host} {capture.interface}, all ToS {tos} "
                 f"(DSCP {tos >> 2} -> priority {prio} by the intent)")


def _priority_bytes(ep: Endpoint, b: HostCounters, a: HostCounters, *, payload: int, prio: int) -> Check:
    """Bytes sent on priority ``prio`` (the intent's for the run's ToS) cover the payload."""
    title = "bytes on the intended priority"
    eth_a, eth_b = a.ethtool, b.ethtool
    if eth_a is None or eth_b is None or not eth_a.priorities("priority_bytes"):
        driver = eth_a.driver if eth_a is not None else None
        return Check("FABRIC-PRIORITY-BYTES", title, CheckStatus.NOT_CHECKABLE,
                     f"{ep.host} {ep.netdev} ({driver or 'unknown driver'}) counts no bytes per priority",
                     needs=f"a NIC with per-priority counters (e.g. mlx5 tx_prio{prio}_bytes)")
    got = _delta(eth_b.get("priority_bytes", "tx", prio), eth_a.get("priority_bytes", "tx", prio)) or 0
    others = {p: (_delta(eth_b.get("priority_bytes", "tx", p), eth_a.get("priority_bytes", "tx", p)) or 0)
              for p in eth_a.priorities("priority_bytes") if p != prio}
    ok = got >= payload
    return Check("FABRIC-PRIORITY-BYTES", title, CheckStatus.PASS if ok else CheckStatus.FAIL,
                 f"{ep.host}: priority {prio} +{got} bytes; others "
                 + ", ".join(f"{p}: +{v}" for p, v in sorted(others.items()) if v), expected=f">= {payload}",
                 got=str(got))


def _pfc(client: Endpoint, server: Endpoint, before: Mapping[str, HostCounters],
         after: Mapping[str, HostCounters], policy: Policy) -> Check:
    title = "pause frames only on lossless priorities"
    lossless = set(policy.pfc.priorities)
    counted, wrong = [], []
    for ep in (client, server):
        a, b = after[ep.host].ethtool, before[ep.host].ethtool
        if a is None or b is None or not a.priorities("pause_frames"):
            continue
        for p in a.priorities("pause_frames"):
            for direction in ("rx", "tx"):
                d = _delta(b.get("pause_frames", direction, p), a.get("pause_frames", direction, p))
                if d:
                    counted.append(f"{ep.host} {direction} prio {p} +{d}")
                    if p not in lossless:
                        wrong.append(f"{ep.host} {direction} prio {p} +{d}")
    if not counted and not any(after[e.host].ethtool is not None and after[e.host].ethtool.priorities(  # type: ignore[union-attr]
            "pause_frames") for e in (client, server)):
        return Check("FABRIC-PFC", title, CheckStatus.NOT_CHECKABLE,
                     "no per-priority pause counters (Soft-RoCE on virtio-net implements no PFC; no virtual NIC here "
                     "has DCB)", needs="a DCB-capable NIC (mlx5 rx_prio3_pause, bnxt, ice...)")
    if wrong:
        return Check("FABRIC-PFC", title, CheckStatus.FAIL, "; ".join(wrong),
                     expected=f"pauses only on {sorted(lossless)}", got=", ".join(wrong))
    return Check("FABRIC-PFC", title, CheckStatus.PASS, "; ".join(counted) or "no pause frames during the run")


def _ecn(client: Endpoint, server: Endpoint, before: Mapping[str, HostCounters],
         after: Mapping[str, HostCounters]) -> Check:
    title = "ECN/CNP counters readable (DCQCN)"
    keys = (RdmaKey("cnp_sent", "tx"), RdmaKey("cnp_handled", "rx"), RdmaKey("ecn_marked_packets", "rx"))
    parts = []
    for ep in (client, server):
        for k in keys:
            if k in after[ep.host].rdma and k in before[ep.host].rdma:
                parts.append(f"{ep.host} {k.counter} +{after[ep.host].rdma[k] - before[ep.host].rdma[k]}")
    if not parts:
        return Check("FABRIC-ECN", title, CheckStatus.NOT_CHECKABLE,
                     "no CNP/ECN counters (Soft-RoCE implements no ECN or DCQCN)",
                     needs="a NIC with DCQCN counters (mlx5 np_cnp_sent, rp_cnp_handled, np_ecn_marked_roce_packets)")
    return Check("FABRIC-ECN", title, CheckStatus.PASS, "; ".join(parts))


def validate_pair(
    client: Endpoint, server: Endpoint, client_runner: Runner, server_runner: Runner, *, policy: Policy,
    spec: TrafficSpec,
) -> PairReport:
    """Snapshot, capture, traffic, snapshot, assess. A pair that cannot run has ``ran=False`` and the reason."""
    report = PairReport(client=client.host, server=server.host, ran=False)
    with tempfile.TemporaryDirectory(prefix="fabricd-validate-") as tmp:
        work = Path(tmp)
        try:
            before = {ep.host: _snap(r, ep, work, "before") for ep, r in ((client, client_runner),
                                                                           (server, server_runner))}
        except TrafficError as exc:
            report.error = f"counter snapshot failed: {exc.render()}"
            return report
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
            after = {ep.host: _snap(r, ep, work, "after") for ep, r in ((client, client_runner),
                                                                         (server, server_runner))}
        except TrafficError as exc:
            report.error = f"counter snapshot failed: {exc.render()}"
            return report
    report.ran = run.client is not None
    report.error = run.error if run.client is None else None
    report.checks = assess(run, client, server, before=before, after=after, sniffed=Sniffed(capture, capture_error),
                           policy=policy, tos=spec.tos)
    if run.client is not None:
        report.traffic = {"ops": [r.model_dump(mode="json") for r in run.client.results], "tos": spec.tos,
                          "gid": run.client.gid, "peer_gid": run.client.peer_gid}
    report.deltas = {h: counter_deltas(before[h], after[h]) for h in before}
    return report
