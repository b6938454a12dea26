"""RDMA collector: port state, PMA counters and RoCE hw_counters from ``/sys/class/infiniband`` under a root.

Unlike Debian's node_exporter 1.5 it exports ``hw_counters`` (CNP, ECN, out-of-sequence, out-of-buffer, timeouts,
retransmits) of mlx5_ib, bnxt_re, irdma and Soft-RoCE rxe under one vocabulary (per-driver maps merged in
:data:`fabricd.readers.rdma.HW_COUNTER_MAP`), and keeps every other hw_counter as
``fabricd_rdma_hw_counters_total{counter}``. ``port_rcv_data``/``port_xmit_data`` are converted from 4-octet units
to bytes.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass

from fabricd.readers.common import SATURATED_U32
from fabricd.readers.rdma import (
    HW_COUNTER_MAP,
    NOT_COUNTERS,
    DeviceLayout,
    RdmaDevice,
    RdmaKey,
    RdmaValues,
    list_rdma_devices,
    parse_rate,
    parse_state,
    read_rdma_device,
)
from fabricd.readers.rdma_stat import parse_rdma_statistic
from fabricd.readers.textparse import TextParseError
from fabricd.sources.kept import Clock, Layouts
from fabricd.sources.kept_files import RdmaFiles

from .core import Family, MetricSpec, Scrape

BUNDLE = ("rdma", "statistic.txt")
"""A replay root's ``rdma statistic show`` output (a support bundle's), read for devices without sysfs."""

PMA = "sysfs ports/<n>/counters (IBTA PMA; counters_ext when present)"
HW = "sysfs ports/<n>/hw_counters"
DP = ("device", "port")
DPD = ("device", "port", "direction")

DEVICE_INFO = MetricSpec(
    "fabricd_rdma_device_info",
    "gauge",
    "RDMA device identity (fw_ver, board_id, hca_type, node_guid); value 1.",
    ("device", "firmware", "board_id", "hca_type", "node_guid"),
    "sysfs /sys/class/infiniband/<dev>",
)
PORT_INFO = MetricSpec(
    "fabricd_rdma_port_info",
    "gauge",
    "RDMA port link layer (Ethernet = RoCE), rate text and netdevs; value 1.",
    ("device", "port", "link_layer", "rate", "netdev"),
    "sysfs ports/<n>/{link_layer,rate}, device/net",
)
PORT_STATE = MetricSpec(
    "fabricd_rdma_port_state",
    "gauge",
    "Port state number: 1 DOWN, 2 INIT, 3 ARMED, 4 ACTIVE, 5 ACTIVE_DEFER.",
    DP,
    "sysfs ports/<n>/state",
)
PORT_PHYS_STATE = MetricSpec(
    "fabricd_rdma_port_phys_state",
    "gauge",
    "Port physical state number: 1 Sleep, 2 Polling, 3 Disabled, 4 PortConfigurationTraining, 5 LinkUp, "
    "6 LinkErrorRecovery, 7 PhyTest.",
    DP,
    "sysfs ports/<n>/phys_state",
)
PORT_RATE = MetricSpec(
    "fabricd_rdma_port_rate_bytes_per_second",
    "gauge",
    "Port data rate, in bytes per second.",
    DP,
    "sysfs ports/<n>/rate",
)
DATA_BYTES = MetricSpec(
    "fabricd_rdma_port_data_bytes_total",
    "counter",
    "Data bytes received (rx) or transmitted (tx) by the port, in bytes (PMA 4-octet units x 4).",
    DPD,
    PMA,
)
PACKETS = MetricSpec(
    "fabricd_rdma_port_packets_total",
    "counter",
    "Packets received or transmitted by the port (rxe: hw_counters rcvd_pkts/sent_pkts).",
    DPD,
    f"{PMA}; {HW}",
)
UNICAST = MetricSpec(
    "fabricd_rdma_port_unicast_packets_total", "counter", "Unicast packets received or transmitted.", DPD, PMA
)
MULTICAST = MetricSpec(
    "fabricd_rdma_port_multicast_packets_total", "counter", "Multicast packets received or transmitted.", DPD, PMA
)
DISCARDS = MetricSpec(
    "fabricd_rdma_port_discards_total", "counter", "Packets the port discarded (port_rcv/xmit_discards).", DPD, PMA
)
ERRORS = MetricSpec(
    "fabricd_rdma_port_errors_total",
    "counter",
    "Port error counters by reason: receive, symbol, remote_physical, switch_relay, rcv_constraint, "
    "xmit_constraint, local_link_integrity, buffer_overrun, vl15_dropped.",
    ("device", "port", "reason"),
    PMA,
)
XMIT_WAIT = MetricSpec(
    "fabricd_rdma_port_transmit_wait_total",
    "counter",
    "Ticks during which the port had data to send but could not (port_xmit_wait; saturates at 2^32-1 on 32-bit PMAs).",
    DP,
    PMA,
)
LINK_DOWNED = MetricSpec(
    "fabricd_rdma_port_link_downed_total", "counter", "Times the link went down (link_downed).", DP, PMA
)
LINK_RECOVERY = MetricSpec(
    "fabricd_rdma_port_link_error_recovery_total", "counter", "Link error recoveries (link_error_recovery).", DP, PMA
)
SATURATED = MetricSpec(
    "fabricd_rdma_port_saturated",
    "gauge",
    "1 for a 32-bit PMA counter stuck at 4294967295 (its rate reads 0 from then on; clear it or use counters_ext).",
    ("device", "port", "counter"),
    PMA,
)
CNP_SENT = MetricSpec(
    "fabricd_rdma_cnp_sent_total",
    "counter",
    "CNPs this NIC sent as DCQCN notification point (np_cnp_sent): it received ECN-marked RoCE packets.",
    DP,
    HW,
)
CNP_HANDLED = MetricSpec(
    "fabricd_rdma_cnp_handled_total",
    "counter",
    "CNPs this NIC handled as DCQCN reaction point (rp_cnp_handled): it slowed down.",
    DP,
    HW,
)
CNP_IGNORED = MetricSpec(
    "fabricd_rdma_cnp_ignored_total", "counter", "CNPs received and ignored (rp_cnp_ignored).", DP, HW
)
ECN_MARKED = MetricSpec(
    "fabricd_rdma_ecn_marked_packets_total",
    "counter",
    "RoCE packets received with ECN CE set (np_ecn_marked_roce_packets).",
    DP,
    HW,
)
OUT_OF_SEQUENCE = MetricSpec(
    "fabricd_rdma_out_of_sequence_total",
    "counter",
    "Out-of-sequence packets received (mlx5 out_of_sequence, rxe out_of_seq_request): loss upstream.",
    DP,
    HW,
)
OUT_OF_BUFFER = MetricSpec(
    "fabricd_rdma_out_of_buffer_total",
    "counter",
    "Packets dropped for lack of a receive WQE (out_of_buffer): the application did not post receives in time.",
    DP,
    HW,
)
PACKET_SEQ_ERRORS = MetricSpec(
    "fabricd_rdma_packet_seq_errors_total",
    "counter",
    "NAK sequence errors received (mlx5 packet_seq_err, rxe rcvd_seq_err).",
    DP,
    HW,
)
LOCAL_ACK_TIMEOUT = MetricSpec(
    "fabricd_rdma_local_ack_timeout_errors_total",
    "counter",
    "Times the sender's ACK timer expired (local_ack_timeout_err): packets were lost.",
    DP,
    HW,
)
IMPLIED_NAK = MetricSpec(
    "fabricd_rdma_implied_nak_seq_errors_total", "counter", "Implied NAK sequence errors (implied_nak_seq_err).", DP, HW
)
RETRANSMITS = MetricSpec(
    "fabricd_rdma_retransmits_total",
    "counter",
    "Retransmission events (mlx5 roce_adp_retrans adaptive retransmissions, rxe completer_retry_err).",
    DP,
    HW,
)
RETRANSMIT_TIMEOUTS = MetricSpec(
    "fabricd_rdma_retransmit_timeouts_total",
    "counter",
    "Adaptive retransmission timeouts (roce_adp_retrans_to).",
    DP,
    HW,
)
DUPLICATE_REQUESTS = MetricSpec(
    "fabricd_rdma_duplicate_requests_total", "counter", "Duplicate requests received (duplicate_request).", DP, HW
)
RNR_NAK_RETRY = MetricSpec(
    "fabricd_rdma_rnr_nak_retry_errors_total", "counter", "RNR NAK retry errors (rnr_nak_retry_err).", DP, HW
)
RETRY_EXCEEDED = MetricSpec(
    "fabricd_rdma_retry_exceeded_errors_total",
    "counter",
    "Requests that exhausted their transport retries (rxe retry_exceeded_err, mlx5 req_transport_retries_exceeded).",
    DP,
    HW,
)
HW_OTHER = MetricSpec(
    "fabricd_rdma_hw_counters_total",
    "counter",
    "Every other hw_counter, by its driver name (e.g. req_cqe_error, rx_write_requests, rdma_sends).",
    ("device", "port", "counter"),
    HW,
)

# normalised counter -> (spec, label layout): "d" adds direction, "r" adds the qualifier as reason, "" device+port
_BY_COUNTER: dict[str, tuple[MetricSpec, str]] = {
    "data_bytes": (DATA_BYTES, "d"),
    "packets": (PACKETS, "d"),
    "unicast_packets": (UNICAST, "d"),
    "multicast_packets": (MULTICAST, "d"),
    "discards": (DISCARDS, "d"),
    "errors": (ERRORS, "r"),
    "xmit_wait_ticks": (XMIT_WAIT, ""),
    "link_downed": (LINK_DOWNED, ""),
    "link_error_recovery": (LINK_RECOVERY, ""),
    "cnp_sent": (CNP_SENT, ""),
    "cnp_handled": (CNP_HANDLED, ""),
    "cnp_ignored": (CNP_IGNORED, ""),
    "ecn_marked_packets": (ECN_MARKED, ""),
    "out_of_sequence": (OUT_OF_SEQUENCE, ""),
    "out_of_buffer": (OUT_OF_BUFFER, ""),
    "packet_seq_errors": (PACKET_SEQ_ERRORS, ""),
    "local_ack_timeout_errors": (LOCAL_ACK_TIMEOUT, ""),
    "implied_nak_seq_errors": (IMPLIED_NAK, ""),
    "retransmits": (RETRANSMITS, ""),
    "retransmit_timeouts": (RETRANSMIT_TIMEOUTS, ""),
    "duplicate_requests": (DUPLICATE_REQUESTS, ""),
    "rnr_nak_retry_errors": (RNR_NAK_RETRY, ""),
    "retry_exceeded_errors": (RETRY_EXCEEDED, ""),
}


_COUNTER_SPECS: tuple[MetricSpec, ...] = tuple(dict.fromkeys(spec for spec, _ in _BY_COUNTER.values()))
_SLOT = {spec.name: i for i, spec in enumerate(_COUNTER_SPECS)}


def counter_labels(port: tuple[str, ...], key: RdmaKey, layout: str) -> tuple[str, ...]:
    """A normalised counter's labels: the port's, then its direction (layout ``d``) or its qualifier as reason
    (``r``). The ``ib`` collector labels its fabric ports the same way."""
    if layout == "d":
        return (*port, key.direction or "")
    if layout == "r":
        return (*port, key.qualifier or "")
    return port


@dataclass(frozen=True, slots=True)
class _PortRoutes:
    """Precomputed samples of one port of a :class:`DeviceLayout`: label tuples and the value each one takes."""

    port: str
    dp: tuple[str, str]
    counters: tuple[tuple[int, tuple[str, ...], int, int], ...]
    """``(family slot in _COUNTER_SPECS, labels, ints index, multiplier)``."""
    unmapped: tuple[tuple[tuple[str, ...], int], ...]
    saturable: tuple[tuple[tuple[str, ...], int], ...]


def _routes(layout: DeviceLayout) -> tuple[_PortRoutes, ...]:
    name = layout.device
    out = []
    for port in layout.ports:
        ps = str(port.port)
        counters = []
        for key, index, scale in port.meanings:
            entry = _BY_COUNTER.get(key.counter)
            if entry is not None:
                counters.append((_SLOT[entry[0].name], counter_labels((name, ps), key, entry[1]), index, scale))
        out.append(
            _PortRoutes(
                ps,
                (name, ps),
                tuple(counters),
                tuple(((name, ps, counter), index) for counter, index in port.unmapped),
                tuple(((name, ps, counter), index) for counter, index in port.saturable),
            )
        )
    return tuple(out)


class _Families:
    """The families of one scrape, and the two ways a device's samples are added to them: from kept-open files
    with a precomputed layout (:meth:`kept`), or from a :class:`RdmaDevice` snapshot (:meth:`snapshot`)."""

    def __init__(self, scrape: Scrape) -> None:
        fam = scrape.family
        self.lists = [fam(spec).samples for spec in _COUNTER_SPECS]
        self.families: dict[str, Family] = {spec.name: fam(spec) for spec, _ in _BY_COUNTER.values()}
        self.dev_info, self.port_info = fam(DEVICE_INFO), fam(PORT_INFO)
        self.state, self.phys, self.rate = fam(PORT_STATE), fam(PORT_PHYS_STATE), fam(PORT_RATE)
        self.saturated, self.other = fam(SATURATED), fam(HW_OTHER)

    def kept(self, name: str, values: RdmaValues, routes: tuple[_PortRoutes, ...]) -> None:
        """One device read through its kept-open files: every value re-read, labels precomputed."""
        layout = values.layout
        ints, text = values.ints, values.text
        self.dev_info.samples.append(
            (
                (
                    name,
                    text(layout.fw_ver) or "",
                    text(layout.board_id) or "",
                    text(layout.hca_type) or "",
                    text(layout.node_guid) or "",
                ),
                1,
            )
        )
        netdevs = ",".join(values.netdevs)
        lists, saturated = self.lists, self.saturated
        for pl, port in zip(layout.ports, routes, strict=True):
            dp = port.dp
            link_layer, rate_text = text(pl.link_layer), text(pl.rate)
            self.port_info.samples.append(((name, port.port, link_layer or "", rate_text or "", netdevs), 1))
            self.state.add(dp, parse_state(text(pl.state))[0])
            self.phys.add(dp, parse_state(text(pl.phys_state))[0])
            gbps = parse_rate(rate_text)
            self.rate.add(dp, None if gbps is None else gbps * 1e9 / 8)
            for labels, index in port.saturable:
                if ints[index] == SATURATED_U32:
                    saturated.samples.append((labels, 1))
            for slot, labels, index, scale in port.counters:
                lists[slot].append((labels, ints[index] * scale))
            self.other.samples.extend([(labels, ints[index]) for labels, index in port.unmapped])

    def snapshot(self, dev: RdmaDevice) -> None:
        """One device read as a snapshot (:func:`fabricd.readers.rdma.read_rdma_device`)."""
        name = dev.name
        self.dev_info.add((name, dev.fw_ver or "", dev.board_id or "", dev.hca_type or "", dev.node_guid or ""), 1)
        for port in dev.ports:
            ps = str(port.port)
            dp = (name, ps)
            self.port_info.add((name, ps, port.link_layer or "", port.rate or "", ",".join(dev.netdevs)), 1)
            self.state.add(dp, port.state)
            self.phys.add(dp, port.phys_state)
            self.rate.add(dp, port.rate_bytes_per_second)
            for counter in port.saturated:
                self.saturated.add((name, ps, counter), 1)
            key: RdmaKey
            for key, value in port.normalised().items():
                self.counter(name, ps, key, value)
            for counter, value in port.unmapped_hw_counters().items():
                self.other.samples.append(((name, ps, counter), value))

    def counter(self, device: str, port: str, key: RdmaKey, value: int) -> bool:
        """A normalised counter's sample in its family; False (nothing added) for a counter with no family."""
        entry = _BY_COUNTER.get(key.counter)
        if entry is None:
            return False
        spec, layout_kind = entry
        self.families[spec.name].samples.append((counter_labels((device, port), key, layout_kind), value))
        return True


class RdmaCollector:
    """``rdma``: every RDMA device and port under ``<root>/sys/class/infiniband`` (optionally filtered by a regex).

    Devices are read through :class:`fabricd.sources.kept_files.RdmaFiles` (kept-open files, layout cached, every value
    re-read) and, when that cannot be used now, through :func:`fabricd.readers.rdma.read_rdma_device`; both give
    the same samples. ``kept_files=False`` (or an ``on_snapshot`` callback, which needs snapshots) always takes
    the second way; ``clock`` is the layouts' wall clock (tests).
    """

    name = "rdma"
    metrics: tuple[MetricSpec, ...] = (
        DEVICE_INFO,
        PORT_INFO,
        PORT_STATE,
        PORT_PHYS_STATE,
        PORT_RATE,
        DATA_BYTES,
        PACKETS,
        UNICAST,
        MULTICAST,
        DISCARDS,
        ERRORS,
        XMIT_WAIT,
        LINK_DOWNED,
        LINK_RECOVERY,
        SATURATED,
        CNP_SENT,
        CNP_HANDLED,
        CNP_IGNORED,
        ECN_MARKED,
        OUT_OF_SEQUENCE,
        OUT_OF_BUFFER,
        PACKET_SEQ_ERRORS,
        LOCAL_ACK_TIMEOUT,
        IMPLIED_NAK,
        RETRANSMITS,
        RETRANSMIT_TIMEOUTS,
        DUPLICATE_REQUESTS,
        RNR_NAK_RETRY,
        RETRY_EXCEEDED,
        HW_OTHER,
    )

    def __init__(
        self,
        root: str | os.PathLike[str] = "/",
        *,
        include: re.Pattern[str] | None = None,
        on_snapshot: Callable[[RdmaDevice], None] | None = None,
        kept_files: bool = True,
        clock: Clock = time.time_ns,
    ) -> None:
        self.root = os.fspath(root)
        self.include = include
        self.on_snapshot = on_snapshot
        self.files = RdmaFiles(self.root, Layouts(clock=clock, enabled=kept_files and on_snapshot is None))
        self._routes: dict[str, tuple[DeviceLayout, tuple[_PortRoutes, ...]]] = {}

    def collect(self, scrape: Scrape) -> None:
        out = _Families(scrape)
        seen: set[str] = set()
        for name in list_rdma_devices(self.root):
            if self.include is not None and not self.include.search(name):
                continue
            seen.add(name)
            values = self.files.read(name)
            if values is not None:
                out.kept(name, values, self._layout_routes(name, values.layout))
                continue
            dev = read_rdma_device(self.root, name)
            for problem in dev.problems:
                scrape.problem(str(problem))
            if self.on_snapshot is not None:
                self.on_snapshot(dev)
            if dev.ports or not dev.problems:
                out.snapshot(dev)
        self.files.forget_others(seen)
        for gone in [n for n in self._routes if n not in seen]:
            del self._routes[gone]
        self._collect_bundle(scrape, seen, out)

    def _layout_routes(self, name: str, layout: DeviceLayout) -> tuple[_PortRoutes, ...]:
        """The precomputed samples of a device's layout, rebuilt when the layout changes."""
        cached = self._routes.get(name)
        if cached is None or cached[0] is not layout:
            cached = self._routes[name] = (layout, _routes(layout))
        return cached[1]

    def _collect_bundle(self, scrape: Scrape, seen: set[str], out: _Families) -> None:
        """hw counters of devices that have no sysfs under the root, from a bundle's ``rdma statistic show`` text
        (``<root>/rdma/statistic.txt``, readers/rdma_stat.py): the same metric names as from sysfs. A file that
        does not parse is a problem (collector success 0) with the reader's located message."""
        path = os.path.join(self.root, *BUNDLE)
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except FileNotFoundError:
            return
        except (OSError, UnicodeDecodeError) as exc:
            scrape.problem(f"{path}: {exc}")
            return
        try:
            records = parse_rdma_statistic(text, path)
        except TextParseError as exc:
            scrape.problem(exc.render())
            return
        for rec in records:
            if rec.device in seen or rec.port is None or rec.cntn is not None:
                continue  # sysfs wins; per-QP counters (qp show) are not port counters
            if self.include is not None and not self.include.search(rec.device):
                continue
            ps = str(rec.port)
            for counter, value in rec.counters.items():
                meaning = HW_COUNTER_MAP.get(counter)
                if meaning is not None and out.counter(rec.device, ps, RdmaKey(*meaning), value):
                    continue
                if counter not in NOT_COUNTERS:
                    out.other.samples.append(((rec.device, ps, counter), value))
