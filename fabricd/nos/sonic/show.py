"""SONiC show outputs (sonic-utilities ``pfcstat``, ``queuestat``, ``wredstat``, ``pfcwd``), as pure parsers.

Formats follow the real captures in tests/golden/readers/switch/sonic/: ``tabulate`` tables with a dashed rule,
thousands separators (``15,437``), ``N/A`` cells, prompt lines and several outputs in one text. Queue names are
``UC<n>`` (unicast), ``MC<n>`` (multicast) or ``ALL<n>``; ``<n>`` is SONiC's queue index, whose numbering differs per
ASIC (UC0-7 + MC8-15, or UC0-9 + MC10-19).
"""

from __future__ import annotations

import re

from fabricd.readers.common import Direction
from fabricd.readers.framing import first_content, framed
from fabricd.readers.switch.model import (
    InterfaceCounter,
    PfcCounter,
    PfcwdConfig,
    PfcwdCounter,
    QueueCounter,
    QueueKind,
    SwitchCounters,
)
from fabricd.readers.switch.tables import NETSTAT_COLUMNS, dashed_tables, keyed_rows, label_key, label_map, to_int

from .linkhealth import parse_fec_stats, parse_show_interfaces_flap, parse_transceiver_dom
from .watermark import (
    parse_pg_persistent_watermark,
    parse_pg_watermark_headroom,
    parse_pg_watermark_shared,
    parse_queue_persistent_watermark,
    parse_queue_watermark_multicast,
    parse_queue_watermark_unicast,
)

__all__ = [
    "parse_fec_stats",
    "parse_pg_persistent_watermark",
    "parse_queue_persistent_watermark",
    "parse_transceiver_dom",
]
"""The reference parsers re-exported here, where the role registry looks for a pack's show parsers."""

PLATFORM = "sonic"

COMMANDS: dict[str, str] = {
    "pfc": "show pfc counters",
    "queue": "show queue counters",
    "pfcwd": "show pfcwd stats",
}
"""The commands the switch exporter runs on SONiC, by role."""

OPTIONAL_COMMANDS: dict[str, str] = {
    "wred": "show queue wredcounters",
    "pfc_history": "show pfc counters --history",
    "pg_watermark_shared": "show priority-group watermark shared",
    "pg_watermark_headroom": "show priority-group watermark headroom",
    "queue_watermark_unicast": "show queue watermark unicast",
    "queue_watermark_multicast": "show queue watermark multicast",
    "fec": "show interfaces counters fec-stats",
    "transceiver": "show interfaces transceiver eeprom --dom",
    "flaps": "show interfaces flap",
}
"""Commands that older releases lack, whose failure does not fail the poll: ``show queue wredcounters`` came with
sonic-utilities' wredstat (2025-02, #2807), ``show pfc counters --history`` with #3778 (2025-08). On a release
without them, click answers ``Usage: ... Error: No such command/option`` and the driver raises, so the poller
records the command as unsupported instead of reading an error as counters. The watermark commands
(``watermarkstat``, fabricd.nos.sonic.watermark) are optional too: a platform without buffer telemetry answers them
with an error, and each ``watermarkstat`` run costs about a second. The link-health commands
(fabricd.nos.sonic.linkhealth: FEC counters and BER, transceiver DOM, flap counts) are optional: a virtual switch
has no FEC counters and no modules, and ``show interfaces flap`` came with sonic-utilities #3724 (2025)."""

_QUEUE = re.compile(r"^(UC|MC|ALL)(\d+)$")
_PFC_COL = re.compile(r"^PFC([0-7])$")
_KINDS: dict[str, QueueKind] = {"UC": "unicast", "MC": "multicast", "ALL": "all"}


def _pair(cell: str | None) -> tuple[int | None, int | None]:
    """``'0/41507426'`` -> (0, 41507426); missing halves -> None."""
    if not cell or "/" not in cell:
        return None, None
    a, b = cell.split("/", 1)
    return to_int(a), to_int(b)


@framed
def parse_show_pfc_counters(text: str) -> SwitchCounters:
    """``show pfc counters``: a ``Port Rx`` and a ``Port Tx`` table with PFC0..PFC7 columns (frames)."""
    out: list[PfcCounter] = []
    found = False
    for table in dashed_tables(text):
        first = table.columns[0] if table.columns else ""
        direction: Direction | None = "rx" if first.endswith("Rx") else "tx" if first.endswith("Tx") else None
        if direction is None:
            continue
        found = True
        prios = [(c, int(m.group(1))) for c in table.columns if (m := _PFC_COL.match(c))]
        for row in table.rows:
            port = row.get(first, "")
            if not port:
                continue
            for col, prio in prios:
                out.append(PfcCounter(port, direction, prio, to_int(row.get(col))))
    return SwitchCounters(pfc=tuple(out), problems=_unread(text, found, "show pfc counters", "Port Rx/Port Tx"))


_QUEUE_COLUMNS = {
    "packets": "Counter/pkts",
    "bytes": "Counter/bytes",
    "dropped_packets": "Drop/pkts",
    "dropped_bytes": "Drop/bytes",
}
_WRED_COLUMNS = {
    "wred_dropped_packets": "WredDrp/pkts",
    "wred_dropped_bytes": "WredDrp/bytes",
    "ecn_marked_packets": "EcnMarked/pkts",
    "ecn_marked_bytes": "EcnMarked/bytes",
}
"""QueueCounter field -> the ``queuestat``/``wredstat`` column it is read from."""


def _queue_counters(text: str, command: str, *, header: str, columns: dict[str, str]) -> SwitchCounters:
    """The ``Port  TxQ ...`` rows of a queue table (``UC<n>``/``MC<n>``/``ALL<n>``), ``columns`` read per queue."""
    rows, found = keyed_rows(dashed_tables(text), "Port", "TxQ")
    return SwitchCounters(
        queues=tuple(
            QueueCounter(
                port,
                int(m.group(2)),
                _KINDS[m.group(1)],
                **{name: to_int(row.get(col)) for name, col in columns.items()},
            )
            for port, row in rows
            if (m := _QUEUE.match(row.get("TxQ", ""))) is not None
        ),
        problems=_unread(text, found, command, header),
    )


@framed
def parse_show_queue_counters(text: str) -> SwitchCounters:
    """``show queue counters [IF]``: Counter/pkts, Counter/bytes, Drop/pkts, Drop/bytes per queue. Newer releases
    print one ``For namespace :`` block per port (sonic-utilities tests/queue_counter_test.py)."""
    return _queue_counters(text, "show queue counters", header="Port, TxQ, Counter/pkts, ...", columns=_QUEUE_COLUMNS)


@framed
def parse_show_queue_wredcounters(text: str) -> SwitchCounters:
    """``show queue wredcounters [IF]``: WredDrp/pkts|bytes and EcnMarked/pkts|bytes per queue (``N/A`` where the
    ASIC lacks the counter)."""
    return _queue_counters(
        text, "show queue wredcounters", header="Port, TxQ, WredDrp/pkts, ...", columns=_WRED_COLUMNS
    )


@framed
def parse_show_pfcwd_stats(text: str) -> SwitchCounters:
    """``show pfcwd stats`` / ``pfcwd show stats``: QUEUE ``<port>:<queue>``, STATUS, and OK/DROP pairs.

    When the text holds several outputs (a capture of repeated runs), the last row of each queue wins.
    """
    found: dict[tuple[str, int], PfcwdCounter] = {}
    rows, seen = keyed_rows(dashed_tables(text), "QUEUE")
    for cell, row in rows:
        port, _, queue = cell.rpartition(":")
        if not port or not queue.isdigit():
            continue
        detected, restored = _pair(row.get("STORM DETECTED/RESTORED"))
        tx_ok, tx_drop = _pair(row.get("TX OK/DROP"))
        rx_ok, rx_drop = _pair(row.get("RX OK/DROP"))
        txl_ok, txl_drop = _pair(row.get("TX LAST OK/DROP"))
        rxl_ok, rxl_drop = _pair(row.get("RX LAST OK/DROP"))
        found[(port, int(queue))] = PfcwdCounter(
            interface=port,
            queue=int(queue),
            status=row.get("STATUS") or None,
            detected=detected,
            restored=restored,
            tx_ok=tx_ok,
            tx_drop=tx_drop,
            rx_ok=rx_ok,
            rx_drop=rx_drop,
            tx_last_ok=txl_ok,
            tx_last_drop=txl_drop,
            rx_last_ok=rxl_ok,
            rx_last_drop=rxl_drop,
        )
    return SwitchCounters(
        pfcwd=tuple(found.values()),
        problems=_unread(text, seen, "show pfcwd stats", "QUEUE, STATUS, STORM DETECTED/RESTORED"),
    )


@framed
def parse_show_pfcwd_config(text: str) -> SwitchCounters:
    """``show pfcwd config``: PORT, ACTION, DETECTION TIME, RESTORATION TIME (milliseconds)."""
    rows, found = keyed_rows(dashed_tables(text), "PORT")
    out = [
        PfcwdConfig(
            interface=port,
            action=row.get("ACTION") or None,
            detection_ms=to_int(row.get("DETECTION TIME")),
            restoration_ms=to_int(row.get("RESTORATION TIME")),
        )
        for port, row in rows
    ]
    return SwitchCounters(
        pfcwd_config=tuple(out), problems=_unread(text, found, "show pfcwd config", "PORT, ACTION, DETECTION TIME")
    )


_HISTORY_ROW = re.compile(r"^\s*\S+\s+PFC[0-7]\s")


def _join_port_blocks(text: str) -> str:
    """``pfcstat --history`` prints one block per port with an empty line between them, under one header; drop
    those empty lines so the blocks read as one table (an empty line ends a table everywhere else)."""
    lines = text.splitlines()
    return "\n".join(
        line
        for i, line in enumerate(lines)
        if line.strip() or i + 1 >= len(lines) or not _HISTORY_ROW.match(lines[i + 1])
    )


@framed
def parse_show_pfc_counters_history(text: str) -> SwitchCounters:
    """``show pfc counters --history`` (sonic-utilities ``pfcstat --history``, PFC historical statistics): one block
    of PFC0..PFC7 rows per port under one header, an empty line between ports. Read per port and priority: the
    total RX pause time in microseconds (``Total RX Pause Time US``; ``N/A`` where the platform's PFC watchdog
    detect script does not estimate it). Real shape: sonic-utilities tests/pfcstat_input/assert_show_output.py."""
    out: list[PfcCounter] = []
    found = False
    for table in dashed_tables(_join_port_blocks(text)):
        if "Total RX Pause Time US" not in table.columns:
            continue
        found = True
        for row in table.rows:
            port = row.get("Port", "")
            m = _PFC_COL.match(row.get("Priority", ""))
            if not port or m is None:
                continue
            out.append(PfcCounter(port, "rx", int(m.group(1)), None, to_int(row.get("Total RX Pause Time US"))))
    return SwitchCounters(
        pfc=tuple(out),
        problems=_unread(text, found, "show pfc counters --history", "Port, Priority, ..., Total RX Pause Time US"),
    )


def _unread(text: str, found: bool, command: str, header: str) -> tuple[str, ...]:
    """A problem when a non-empty output held no table this parser reads (an empty parse is never a success)."""
    first = None if found else first_content(text)
    if first is None:
        return ()
    return (
        f"sonic: {command!r}: line {first[0]}: no table read from a non-empty output (expected a {header} "
        f"header; got {first[1]!r})",
    )


_PORTSTAT: dict[str, tuple[Direction, str, str | None]] = label_map(NETSTAT_COLUMNS)


@framed
def parse_show_interfaces_counters(text: str) -> SwitchCounters:
    """``show interfaces counters`` (portstat) and ``show interface counters errors``: OK/ERR/DRP/OVR per port.

    Rates and utilisation columns are left out (Prometheus computes rates from the counters).
    """
    found: dict[tuple[str, str, str, str | None], InterfaceCounter] = {}
    rows, seen = keyed_rows(dashed_tables(text), "IFACE")
    for port, row in rows:
        for col, cell in row.items():
            meaning = _PORTSTAT.get(label_key(col))
            if meaning is None:
                continue
            direction, counter, reason = meaning
            value = to_int(cell)
            if value is not None:  # a repeated output (several runs in one text): the last one wins
                key = (port, direction, counter, reason)
                found[key] = InterfaceCounter(port, direction, counter, value, reason)
    return SwitchCounters(
        interfaces=tuple(found.values()),
        problems=_unread(text, seen, "show interfaces counters", "IFACE, STATE, RX_OK, ..."),
    )


_DETAILED = re.compile(r"^(?P<label>[A-Za-z][^.]*?)\.{2,}\s*(?P<value>\S+)\s*$")
_DETAILED_MAP: dict[str, tuple[Direction, str, str | None]] = label_map(
    {
        "Total Packets Received Without Errors": ("rx", "packets", None),
        "Total Packets Transmitted Successfully": ("tx", "packets", None),
        "Overruns Received": ("rx", "discards", "overrun"),
        "Undersize Received": ("rx", "errors", "undersize"),
        "Jabbers Received": ("rx", "errors", "jabber"),
        "Fragments Received": ("rx", "errors", "fragments"),
        "WRED Green Dropped Packets": ("tx", "discards", "wred_green"),
        "WRED Yellow Dropped Packets": ("tx", "discards", "wred_yellow"),
        "WRED Red Dropped Packets": ("tx", "discards", "wred_red"),
        "WRED Total Dropped Packets": ("tx", "discards", "wred"),
        "Trimmed Dropped Packets": ("tx", "discards", "trimmed"),
    }
)


@framed
def parse_show_interfaces_counters_detailed(text: str, interface: str) -> SwitchCounters:
    """``show interfaces counters detailed <IF>``: dotted ``Label....... value`` lines (``N/A`` left out)."""
    out: list[InterfaceCounter] = []
    for line in text.splitlines():
        m = _DETAILED.match(line.strip())
        if m is None:
            continue
        meaning = _DETAILED_MAP.get(label_key(m.group("label")))
        value = to_int(m.group("value"))
        if meaning is not None and value is not None:
            out.append(InterfaceCounter(interface, meaning[0], meaning[1], value, meaning[2]))
    return SwitchCounters(
        interfaces=tuple(out),
        problems=_unread(
            text, bool(out), f"show interfaces counters detailed {interface}", "'Label....... value' lines"
        ),
    )


PARSERS = {
    "pfc": parse_show_pfc_counters,
    "pfc_history": parse_show_pfc_counters_history,
    "queue": parse_show_queue_counters,
    "wred": parse_show_queue_wredcounters,
    "pfcwd": parse_show_pfcwd_stats,
    "pg_watermark_shared": parse_pg_watermark_shared,
    "pg_watermark_headroom": parse_pg_watermark_headroom,
    "queue_watermark_unicast": parse_queue_watermark_unicast,
    "queue_watermark_multicast": parse_queue_watermark_multicast,
    "fec": parse_fec_stats,
    "transceiver": parse_transceiver_dom,
    "flaps": parse_show_interfaces_flap,
}
"""Role -> parser, matching :data:`COMMANDS`."""
