"""InfiniBand fabric collector: every port of the fabric, discovered with ``ibnetdiscover --ports`` and read with
``perfquery -x <lid> <port>`` (infiniband-diags), with bounded concurrency and a deadline per call.

The anchor is treydock/infiniband_exporter, which does the same over a whole fabric (``ibnetdiscover --ports``, then
``perfquery -l -x -G <guid> <ports>`` per node). fabricd exports the port counters under the host RDMA collector's
vocabulary (:mod:`fabricd.collectors.rdma`: ``data_bytes`` with ``direction``, ``errors`` with ``reason``...), as
``fabricd_ib_port_*`` with ``node``/``guid``/``lid``/``port`` labels, so a query written for a host's
``fabricd_rdma_port_*`` reads a switch port the same way. docs/metrics.md compares the two metric sets.

Where the outputs come from is an :class:`IbSource`: :class:`CommandSource` runs the commands (``argv``
templates, configurable, ``{lid}``/``{port}`` filled in; a missing executable is :class:`IbToolMissingError`, with
what to install), :class:`ReplaySource` reads a folder of captured outputs (layout in its docstring). Discovery
runs at most every ``discover_interval_s`` (ibnetdiscover walks the whole subnet); a port whose perfquery fails,
times out or prints no block for its LID and port is ``fabricd_ib_port_up 0`` and a problem (collector success
0); the others are exported.
"""

from __future__ import annotations

import logging
import os
import shlex
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from fabricd.errors import FabricdError, Fix
from fabricd.readers.ibnetdiscover import IbPort, parse_ibnetdiscover_ports
from fabricd.readers.perfquery import PerfqueryBlock, parse_perfquery
from fabricd.readers.rdma import RdmaKey
from fabricd.readers.textparse import TextParseError

from .core import MetricSpec, Scrape
from .rdma import counter_labels

log = logging.getLogger(__name__)

IBNETDISCOVER = ("ibnetdiscover", "--ports")
PERFQUERY = ("perfquery", "-x", "{lid}", "{port}")
SRC_PQ = "perfquery -x <lid> <port> (IBTA PortCounters/PortCountersExtended)"
SRC_DISC = "ibnetdiscover --ports"
PL = ("node", "guid", "lid", "port")
PLD = (*PL, "direction")


class IbToolMissingError(FabricdError):
    """An infiniband-diags command is not installed (or not on PATH)."""


class IbSource(Protocol):
    """Where the fabric's outputs come from: the ports report and one port's perfquery text."""

    def discover(self) -> str: ...

    def perfquery(self, lid: int, port: int) -> str: ...


def missing_tool(argv: Sequence[str], setting: str | None = None) -> IbToolMissingError:
    """``argv[0]`` is not installed; ``setting`` (``ibnetdiscover`` or ``perfquery``) is the exporter setting that
    holds the command (``argv``, or its template), for a fix that gives its full path."""
    words = [f"/path/to/{Path(argv[0]).name}", *argv[1:]]  # {lid} {port} stay as typed (no shell quoting of {})
    full = (
        [
            Fix(
                ("export", "ib"),
                {setting: " ".join(w if w.split() == [w] and "'" not in w else shlex.quote(w) for w in words)},
                "or give its full path",
            )
        ]
        if setting
        else []
    )
    return IbToolMissingError(
        f"{argv[0]}: not found (this host has no infiniband-diags, or it is not on PATH)",
        hint="install infiniband-diags (Debian/Ubuntu: apt install infiniband-diags; RHEL: dnf install "
        "infiniband-diags)",
        fixes=(*full, Fix(("export", "ib"), {"replay": "DIR"}, "or read captured outputs")),
    )


def command_argv(template: str | Sequence[str]) -> tuple[str, ...]:
    """A command template as argv (a string is split like a shell would, without running one)."""
    argv = tuple(shlex.split(template)) if isinstance(template, str) else tuple(template)
    if not argv:
        raise ValueError("empty command")
    return argv


class CommandSource:
    """Runs the commands as subprocesses (no shell), each with ``timeout_s``. ``perfquery`` is an argv template
    whose ``{lid}`` and ``{port}`` are filled in (default ``perfquery -x {lid} {port}``; add ``-C mlx5_0 -P 1`` to
    choose the local port, or put ``sudo`` in front)."""

    def __init__(
        self,
        ibnetdiscover: Sequence[str] = IBNETDISCOVER,
        perfquery: Sequence[str] = PERFQUERY,
        *,
        timeout_s: float = 5.0,
        discover_timeout_s: float = 60.0,
    ) -> None:
        self.ibnetdiscover = tuple(ibnetdiscover)
        self.perfquery_argv = tuple(perfquery)
        self.timeout_s = timeout_s
        self.discover_timeout_s = discover_timeout_s

    def _run(self, argv: Sequence[str], timeout_s: float, setting: str, template: Sequence[str]) -> str:
        try:
            done = subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout_s, check=False)
        except FileNotFoundError as exc:
            raise missing_tool(template, setting) from exc
        except subprocess.TimeoutExpired as exc:
            raise FabricdError(f"{shlex.join(argv)}: no answer within {timeout_s:g} s (killed)") from exc
        except OSError as exc:
            raise FabricdError(f"{shlex.join(argv)}: {exc}") from exc
        if done.returncode != 0:
            err = " ".join((done.stderr or done.stdout).split())[:300]
            raise FabricdError(f"{shlex.join(argv)}: exit status {done.returncode}: {err or '(no output)'}")
        return done.stdout

    def discover(self) -> str:
        return self._run(self.ibnetdiscover, self.discover_timeout_s, "ibnetdiscover", self.ibnetdiscover)

    def perfquery(self, lid: int, port: int) -> str:
        argv = [a.format(lid=lid, port=port) for a in self.perfquery_argv]
        return self._run(argv, self.timeout_s, "perfquery", self.perfquery_argv)


class ReplaySource:
    """Captured outputs in a folder::

        DIR/ibnetdiscover.txt     the output of ``ibnetdiscover --ports``
        DIR/perfquery/*.txt       perfquery outputs (``-x <lid> <port>``, or ``-l -x`` of a whole node: any number
                                  of blocks per file, each found by the LID and port in its header)

    Files are read again on every discovery and scrape (a rewritten folder behaves like a live fabric). A port with
    no captured block is read as a failed perfquery."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)
        self._blocks: dict[tuple[int, int], str] = {}
        self._lock = threading.Lock()

    def discover(self) -> str:
        path = self.root / "ibnetdiscover.txt"
        try:
            text = path.read_text()
        except OSError as exc:
            raise FabricdError(
                f"{path}: {exc.strerror or exc}",
                hint="a replay folder holds ibnetdiscover.txt and perfquery/*.txt",
                fixes=(Fix(("docs",), operands=("metrics",), text="InfiniBand"),),
            ) from exc
        self._index()
        return text

    def _index(self) -> None:
        """Every block of every file by its header's ``(lid, port)``; a port with several blocks (``-x`` and ``-E``
        captures) gets them all, in file order, and :func:`read_port` picks the extended one."""
        blocks: dict[tuple[int, int], list[str]] = {}
        for path in sorted((self.root / "perfquery").glob("*.txt")):
            current: tuple[int, int] | None = None
            for line in path.read_text().splitlines():
                head = parse_header(line)
                if head is not None:
                    current = head
                if current is not None:
                    blocks.setdefault(current, []).append(line)
        with self._lock:
            self._blocks = {key: "\n".join(lines) + "\n" for key, lines in blocks.items()}

    def perfquery(self, lid: int, port: int) -> str:
        with self._lock:
            text = self._blocks.get((lid, port))
        if text is None:
            raise FabricdError(f"no perfquery output for LID {lid} port {port} in {self.root / 'perfquery'}")
        return text


def parse_header(line: str) -> tuple[int, int] | None:
    """``(lid, port)`` of a perfquery ``# ... counters: Lid N port M`` header line, else None."""
    if not line.startswith("#") or "counters:" not in line:
        return None
    words = line.split()
    try:
        i = words.index("Lid")
        return int(words[i + 1]), int(words[i + 3])
    except (ValueError, IndexError):
        return None


PORT_INFO = MetricSpec(
    "fabricd_ib_port_info",
    "gauge",
    "An InfiniBand fabric port as ibnetdiscover reports it: node type (CA, SW, RT), link width and speed, and the "
    "port at the other end (empty when the port has no link); value 1.",
    (*PL, "node_type", "width", "speed", "remote_node", "remote_guid", "remote_lid", "remote_port"),
    SRC_DISC,
)
PORT_RATE = MetricSpec(
    "fabricd_ib_port_rate_bytes_per_second",
    "gauge",
    "Link rate of a connected port, in bytes per second: lanes x the speed's lane rate as the kernel reports it "
    "(4x EDR = 100 Gb/s).",
    PL,
    SRC_DISC,
)
PORT_UP = MetricSpec(
    "fabricd_ib_port_up",
    "gauge",
    "1 when the port's perfquery answered and its counters were read in this scrape, else 0 (failed, timed out, or "
    "no block for the port).",
    PL,
    SRC_PQ,
)
DISCOVERED = MetricSpec(
    "fabricd_ib_discovered_ports",
    "gauge",
    "Ports in the latest ibnetdiscover report, by node type and whether they have a link.",
    ("node_type", "linked"),
    SRC_DISC,
)
DISCOVERY_SUCCESS = MetricSpec(
    "fabricd_ib_discovery_last_success_timestamp_seconds",
    "gauge",
    "When ibnetdiscover last answered and parsed (Unix time); ports come from that report until the next one.",
    (),
    SRC_DISC,
)
DATA_BYTES = MetricSpec(
    "fabricd_ib_port_data_bytes_total",
    "counter",
    "Data bytes received (rx) or transmitted (tx) by the port, in bytes (PortRcvData/PortXmitData x 4).",
    PLD,
    SRC_PQ,
)
PACKETS = MetricSpec(
    "fabricd_ib_port_packets_total", "counter", "Packets received or transmitted by the port.", PLD, SRC_PQ
)
UNICAST = MetricSpec(
    "fabricd_ib_port_unicast_packets_total", "counter", "Unicast packets received or transmitted.", PLD, SRC_PQ
)
MULTICAST = MetricSpec(
    "fabricd_ib_port_multicast_packets_total", "counter", "Multicast packets received or transmitted.", PLD, SRC_PQ
)
DISCARDS = MetricSpec(
    "fabricd_ib_port_discards_total", "counter", "Packets the port discarded (PortXmitDiscards: tx).", PLD, SRC_PQ
)
ERRORS = MetricSpec(
    "fabricd_ib_port_errors_total",
    "counter",
    "Port error counters by reason: receive, symbol, remote_physical, switch_relay, rcv_constraint, xmit_constraint, "
    "local_link_integrity, buffer_overrun, vl15_dropped (the host RDMA series' reasons).",
    (*PL, "reason"),
    SRC_PQ,
)
XMIT_WAIT = MetricSpec(
    "fabricd_ib_port_transmit_wait_total",
    "counter",
    "Ticks during which the port had data to send but no flow-control credits (PortXmitWait): congestion.",
    PL,
    SRC_PQ,
)
LINK_DOWNED = MetricSpec(
    "fabricd_ib_port_link_downed_total", "counter", "Times the link went down (LinkDownedCounter).", PL, SRC_PQ
)
LINK_RECOVERY = MetricSpec(
    "fabricd_ib_port_link_error_recovery_total",
    "counter",
    "Link error recoveries (LinkErrorRecoveryCounter).",
    PL,
    SRC_PQ,
)
QP1_DROPPED = MetricSpec(
    "fabricd_ib_port_qp1_dropped_total",
    "counter",
    "Management packets (QP1) the port dropped (QP1Dropped, extended counters only).",
    PL,
    SRC_PQ,
)

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
}


@dataclass(frozen=True, slots=True)
class PortRead:
    """One port's perfquery result: its counters block, or why there is none."""

    port: IbPort
    block: PerfqueryBlock | None
    error: str | None


def read_port(source: IbSource, port: IbPort) -> PortRead:
    """perfquery one port and pick the block of its LID and port (an extended block over a plain one)."""
    try:
        text = source.perfquery(port.lid, port.port)
        blocks = [b for b in parse_perfquery(text) if b.lid == port.lid and b.port == port.port]
    except TextParseError as exc:
        return PortRead(port, None, exc.render())
    except FabricdError as exc:
        return PortRead(port, None, exc.render())
    if not blocks:
        return PortRead(port, None, f"perfquery printed no counters block for LID {port.lid} port {port.port}")
    extended = [b for b in blocks if "extended" in b.kind.lower()]
    return PortRead(port, (extended or blocks)[0], None)


class IbCollector:
    """``ib``: every linked port of the fabric (``all_ports``: the unlinked ones too), read on every scrape with at
    most ``concurrency`` perfquery calls at once. The ports report is reused for ``discover_interval_s`` seconds
    (0: discover on every scrape); a discovery that fails keeps the previous report (a problem)."""

    name = "ib"
    metrics: tuple[MetricSpec, ...] = (
        PORT_INFO,
        PORT_RATE,
        PORT_UP,
        DISCOVERED,
        DISCOVERY_SUCCESS,
        DATA_BYTES,
        PACKETS,
        UNICAST,
        MULTICAST,
        DISCARDS,
        ERRORS,
        XMIT_WAIT,
        LINK_DOWNED,
        LINK_RECOVERY,
        QP1_DROPPED,
    )

    def __init__(
        self,
        source: IbSource,
        *,
        concurrency: int = 8,
        discover_interval_s: float = 300.0,
        all_ports: bool = False,
        clock: Callable[[], float] = time.monotonic,
        wall: Callable[[], float] = time.time,
    ) -> None:
        self.source = source
        self.discover_interval_s = discover_interval_s
        self.all_ports = all_ports
        self._clock = clock
        self._wall = wall
        self._pool = ThreadPoolExecutor(max_workers=max(1, concurrency), thread_name_prefix="fabricd-perfquery")
        self._ports: tuple[IbPort, ...] | None = None
        self._discovered_at: float | None = None
        self._discovered_wall: float | None = None
        self.failures: list[str] = []
        """The ports the last scrape could not read, one line each (node, GUID, LID, port: why)."""

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)

    def _discover(self, scrape: Scrape) -> tuple[IbPort, ...]:
        now = self._clock()
        fresh = self._discovered_at is not None and now - self._discovered_at < self.discover_interval_s
        if self._ports is not None and fresh:
            return self._ports
        try:
            ports = parse_ibnetdiscover_ports(self.source.discover())
        except IbToolMissingError:
            raise
        except FabricdError as exc:
            scrape.problem(f"ibnetdiscover: {exc.render()}")
            return self._ports or ()
        self._ports, self._discovered_at, self._discovered_wall = ports, now, self._wall()
        return ports

    def collect(self, scrape: Scrape) -> None:
        fam = scrape.family
        ports = self._discover(scrape)
        if self._discovered_wall is not None:
            fam(DISCOVERY_SUCCESS).add((), self._discovered_wall)
        counts: dict[tuple[str, str], int] = {}
        seen: set[tuple[str, int]] = set()
        wanted: list[IbPort] = []
        for p in ports:
            kind = (p.node_type, "true" if p.peer is not None else "false")
            counts[kind] = counts.get(kind, 0) + 1
            if (p.guid, p.port) in seen or (p.peer is None and not self.all_ports):
                continue
            seen.add((p.guid, p.port))
            wanted.append(p)
        for kind, n in sorted(counts.items()):
            fam(DISCOVERED).add(kind, n)
        info, rate, up = fam(PORT_INFO), fam(PORT_RATE), fam(PORT_UP)
        failures: list[str] = []
        for read in self._pool.map(lambda p: read_port(self.source, p), wanted):
            p = read.port
            pl = (p.node, p.guid, str(p.lid), str(p.port))
            peer = p.peer
            info.add(
                (
                    *pl,
                    p.node_type,
                    p.width,
                    p.speed,
                    peer.node if peer else "",
                    peer.guid if peer else "",
                    str(peer.lid) if peer else "",
                    str(peer.port) if peer else "",
                ),
                1,
            )
            if peer is not None:
                rate.add(pl, p.rate_bytes_per_second)
            up.add(pl, 0 if read.block is None else 1)
            if read.block is None:
                failures.append(f"{p.node} ({p.guid}) LID {p.lid} port {p.port}: {read.error}")
                scrape.problem(failures[-1])
                continue
            key: RdmaKey
            for key, value in read.block.normalised().items():
                entry = _BY_COUNTER.get(key.counter)
                if entry is None:
                    continue
                spec, layout = entry
                fam(spec).add(counter_labels(pl, key, layout), value)
            fam(QP1_DROPPED).add(pl, read.block.counters.get("QP1Dropped"))
        self.failures = failures
