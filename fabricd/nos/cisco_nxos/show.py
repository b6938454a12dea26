"""Cisco NX-OS show outputs, as pure parsers (real captures and their sources in
tests/golden/readers/switch/cisco_nxos/).

- ``show interface priority-flow-control``: the summary ``Port Mode Oper(VL bmap) RxPPP TxPPP`` (all priorities,
  ``priority`` None; Nexus 5000 capture) and the ``detail`` form (per priority; Nexus 9000 capture);
- ``show queuing [interface IF]``: the Nexus 9000 text boxes (Nexus 9000 capture; what the exporter polls), the
  ``| json`` nesting (Cisco's NX-API schema; no public capture with values: a reference parse), and the Nexus 5000
  ``RX Queuing`` form (``Pkts discarded on ingress``);
- ``show queuing pfc-queue [interface IF] detail``: the PFC watchdog (schema JSON; text after a third-party
  fixture; no device capture of either form: unverified);
- ``show interface`` (``| b RX``): ``N Rx pause`` / ``N Tx pause`` (802.3x link pause), ``input discard``,
  ``output discard``, ``no buffer``;
- ``show interface counters errors``: stacked tables; ``--`` means not applicable.

NX-OS's ``| json`` forms nest rows in ``TABLE_<x>``/``ROW_<x>`` objects, a ``ROW`` being a dict for one row and a
list for several. A parse that reads nothing from a non-empty output returns a problem (never an empty success).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from typing import Any

from fabricd.nos.gnmi import counter
from fabricd.readers.framing import first_content, framed, framed_interface
from fabricd.readers.switch.model import InterfaceCounter, PfcCounter, PfcwdCounter, QueueCounter, SwitchCounters
from fabricd.readers.switch.tables import label_key, label_map, to_int

from .linkhealth import parse_show_interface_transceiver_details

PLATFORM = "cisco_nxos"

COMMANDS: dict[str, str] = {
    "pfc": "show interface priority-flow-control",
    "queuing": "show queuing interface",
    "pfcwd": "show queuing pfc-queue detail | json",
}
"""The commands the switch exporter runs on NX-OS, by role. ``pfc`` and ``queuing`` poll the text forms, which real
Nexus captures verify; their ``| json`` forms have no public capture with values (the parsers still read them, as
reference roles in fabricd/nos/roles.py). ``pfcwd`` has no device capture in either form (see its parser)."""

OPTIONAL_COMMANDS: dict[str, str] = {
    "errors": "show interface counters errors",
    "transceiver": "show interface transceiver details",
}
"""Commands whose failure (an older release, a platform without them) does not fail the poll; ``transceiver`` is
the DOM of every module (fabricd.nos.cisco_nxos.linkhealth)."""

_PFC_ROW = re.compile(
    r"^(?P<port>(?:Ethernet|Eth|Po|port-channel)\S+)\s+(?P<mode>\S+)\s+(?P<oper>On\s*\(\S+\)|\S+)"
    r"\s+(?P<rx>\d+)\s+(?P<tx>\d+)\s*$"
)


_SHORT_ETH = re.compile(r"^(?:Ethernet|Eth|Et|e)(\d.*)$", re.IGNORECASE)


def long_interface(name: str) -> str:
    """``Eth1/1``, ``e1/1`` -> ``Ethernet1/1`` (NX-OS prints and accepts both forms; labels use the long one)."""
    m = _SHORT_ETH.match(name)
    return f"Ethernet{m.group(1)}" if m else name


def parse_json_rows(data: Any) -> Iterator[dict[str, Any]]:
    """Every ``ROW_*`` dict inside NX-OS JSON (a single row is a dict, several are a list)."""
    if isinstance(data, dict):
        for key, value in data.items():
            if key.startswith("ROW_"):
                rows = value if isinstance(value, list) else [value]
                for row in rows:
                    if isinstance(row, dict):
                        yield row
                        yield from parse_json_rows(row)
            else:
                yield from parse_json_rows(value)
    elif isinstance(data, list):
        for item in data:
            yield from parse_json_rows(item)


_PFC_DETAIL_HEAD = re.compile(r"^(?P<port>(?:Ethernet|Eth|port-channel)\S+)\s*$")
_PFC_DETAIL_ROW = re.compile(r"^\s*(?P<dir>Rx|Tx)\s*\|(?P<cells>.*)$")


@framed
def parse_show_interface_priority_flow_control(text: str) -> SwitchCounters:
    """PFC frames per port: the summary table (``Port Mode Oper(VL bmap) RxPPP TxPPP``: all priorities together,
    ``priority`` None; real Nexus 5000 capture), the ``detail`` form (per port ``Rx |n |n ...`` and ``Tx |...`` rows
    under ``Priority0..7``; real Nexus 9000 capture), or ``| json`` rows (``if_name_str`` with ``rx_ppp``/``tx_ppp``
    or ``rx-ppp``/``tx-ppp``: no public capture or schema of this command's JSON was found, so the collector runs
    the text form)."""
    out: list[PfcCounter] = []
    data = _load_json(text)
    if data is not None:
        for row in parse_json_rows(data):
            name = row.get("if_name_str") or row.get("interface")
            if not name:
                continue
            rx, tx = row.get("rx_ppp", row.get("rx-ppp")), row.get("tx_ppp", row.get("tx-ppp"))
            out.append(PfcCounter(long_interface(str(name)), "rx", None, _num(rx)))
            out.append(PfcCounter(long_interface(str(name)), "tx", None, _num(tx)))
        return _empty_problem("show interface priority-flow-control", text, SwitchCounters(pfc=tuple(out)))
    port: str | None = None
    for line in text.splitlines():
        if m := _PFC_ROW.match(line.strip()):
            name = long_interface(m.group("port"))
            out.append(PfcCounter(name, "rx", None, int(m.group("rx"))))
            out.append(PfcCounter(name, "tx", None, int(m.group("tx"))))
        elif m := _PFC_DETAIL_HEAD.match(line):
            port = long_interface(m.group("port"))
        elif port is not None and (m := _PFC_DETAIL_ROW.match(line)):
            cells = [c.strip() for c in m.group("cells").split("|")]
            for prio, cell in enumerate(cells[:8]):
                out.append(PfcCounter(port, "rx" if m.group("dir") == "Rx" else "tx", prio, to_int(cell)))
    return _empty_problem("show interface priority-flow-control", text, SwitchCounters(pfc=tuple(out)))


_QUEUING_HEAD = re.compile(r"^(?P<port>\S+) queuing information:")
_QOS_GROUP = re.compile(r"^\s*qos-group (?P<g>\d+)\s*$")
_DISCARD = re.compile(r"^\s*Pkts discarded on ingress\s*:\s*(?P<n>\d+)")


@framed
def parse_show_queuing_interface(text: str) -> SwitchCounters:
    """Ingress discards per qos-group (``reason`` ``qos_group_<n>``, direction rx) of ``show queuing interface``."""
    out: list[InterfaceCounter] = []
    port: str | None = None
    group: str | None = None
    for line in text.splitlines():
        if m := _QUEUING_HEAD.match(line):
            port, group = long_interface(m.group("port")), None
        elif m := _QOS_GROUP.match(line):
            group = m.group("g")
        elif (m := _DISCARD.match(line)) and port and group is not None:
            out.append(InterfaceCounter(port, "rx", "discards", int(m.group("n")), f"qos_group_{group}"))
    return _empty_problem("show queuing interface", text, SwitchCounters(interfaces=tuple(out)))


_IF_HEAD = re.compile(r"^(?P<port>(?:Ethernet|Eth|port-channel)\S+) is ")
_PAIR = re.compile(r"(\d+) ([A-Za-z(][\w/().+\-]*(?: [A-Za-z(/][\w/().+\-]*)*?)(?=\s{2,}|\s+\d|$)")
"""``<number> <label>`` pairs of a RX/TX line; a label is words that may hold ``/ - ( ) . +`` (``0 CRC/FCS``)."""
_IF_FIELDS: dict[str, tuple[str, str | None]] = label_map(
    {
        "rx Rx pause": ("pause_frames", None),
        "tx Tx pause": ("pause_frames", None),
        "rx input discard": ("discards", None),
        "tx output discard": ("discards", None),
        "rx input error": ("errors", None),
        "tx output error": ("errors", None),
        "rx no buffer": ("discards", "no_buffer"),
        "rx CRC": ("errors", "fcs"),
        "rx CRC/FCS": ("errors", "fcs"),
        "rx input packets": ("packets", None),
        "tx output packets": ("packets", None),
    }
)


@framed_interface
def parse_show_interface(text: str, interface: str | None = None) -> SwitchCounters:
    """Counters from the RX/TX blocks of ``show interface [IF]`` (``interface`` names the port when the capture
    starts at ``RX``, as with ``| b RX``)."""
    out: list[InterfaceCounter] = []
    port = long_interface(interface) if interface else None
    section: str | None = None
    for line in text.splitlines():
        if m := _IF_HEAD.match(line):
            port, section = long_interface(m.group("port")), None
            continue
        stripped = line.strip()
        if stripped in ("RX", "TX"):
            section = stripped.lower()
            continue
        if port is None or section is None:
            continue
        for value, label in _PAIR.findall(stripped):
            meaning = _IF_FIELDS.get(label_key(f"{section} {label}"))
            if meaning is not None:
                out.append(
                    InterfaceCounter(port, "rx" if section == "rx" else "tx", meaning[0], int(value), meaning[1])
                )
    return _empty_problem("show interface", text, SwitchCounters(interfaces=tuple(out)))


_ERR_COLUMNS: dict[str, tuple[str | None, str, str | None]] = label_map(
    {
        "Align-Err": ("rx", "errors", "alignment"),
        "FCS-Err": ("rx", "errors", "fcs"),
        "Xmit-Err": ("tx", "errors", None),
        "Rcv-Err": ("rx", "errors", None),
        "UnderSize": ("rx", "errors", "undersize"),
        "OutDiscards": ("tx", "discards", None),
        "InDiscards": ("rx", "discards", None),
        "Runts": ("rx", "errors", "runts"),
        "Giants": ("rx", "errors", "giants"),
        "Symbol-Err": ("rx", "errors", "symbol"),
        "Stomped-CRC": ("rx", "errors", "stomped_crc"),
    }
)


@framed
def parse_show_interface_counters_errors(text: str) -> SwitchCounters:
    """``show interface counters errors``: the stacked tables, header by header; ``--`` cells are left out."""
    out: list[InterfaceCounter] = []
    header: list[str] = []
    for line in text.splitlines():
        cells = line.split()
        if not cells or set(line.strip()) <= {"-"}:
            continue
        if cells[0] == "Port":
            header = cells
            continue
        if not header or len(cells) != len(header):
            continue
        port = long_interface(cells[0])
        for col, cell in zip(header[1:], cells[1:], strict=True):
            meaning = _ERR_COLUMNS.get(label_key(col))
            value = to_int(cell)
            if meaning is None or value is None:
                continue
            direction, counter, reason = meaning
            out.append(InterfaceCounter(port, "rx" if direction == "rx" else "tx", counter, value, reason))
    return _empty_problem("show interface counters errors", text, SwitchCounters(interfaces=tuple(out)))


def _load_json(text: str) -> Any:
    start = text.find("{")
    if start < 0:
        return None
    try:
        return json.loads(text[start:])
    except ValueError:
        return None


def _num(value: Any) -> int | None:
    """An NX-API count: a text cell as NX-OS prints it (:func:`to_int`: ``15,437``; ``N/A`` is None), or a JSON
    integer (:func:`~fabricd.nos.gnmi.counter`: a bool is not one). NX-API prints no fractions: a float is None."""
    if isinstance(value, str):
        return to_int(value)
    return counter(value) if isinstance(value, int) else None


def _rows(container: Any, table: str) -> list[dict[str, Any]]:
    """The rows of ``TABLE_<table>`` in ``container``: NX-API gives ``ROW_<table>`` as a dict for one row and as a
    list for several."""
    if not isinstance(container, dict):
        return []
    tab = container.get(f"TABLE_{table}")
    if isinstance(tab, list):  # some releases wrap the TABLE in a list as well
        return [r for t in tab for r in _rows({f"TABLE_{table}": t}, table)]
    if not isinstance(tab, dict):
        return []
    rows = tab.get(f"ROW_{table}")
    rows = rows if isinstance(rows, list) else [rows]
    return [r for r in rows if isinstance(r, dict)]


def _find_rows(data: Any, table: str) -> list[dict[str, Any]]:
    """Every ``ROW_<table>`` row anywhere under ``data`` (``TABLE_module -> ROW_module -> TABLE_<table>`` on modular
    and fixed Nexus alike, or ``TABLE_<table>`` at the top)."""
    out: list[dict[str, Any]] = []
    if isinstance(data, dict):
        if f"TABLE_{table}" in data:
            return _rows(data, table)
        for value in data.values():
            out += _find_rows(value, table)
    elif isinstance(data, list):
        for item in data:
            out += _find_rows(item, table)
    return out


def _empty_problem(command: str, text: str, parsed: SwitchCounters) -> SwitchCounters:
    """A non-empty output that parsed to nothing is a problem, never an empty success."""
    first = first_content(text)
    if first is not None and not any((parsed.pfc, parsed.queues, parsed.pfcwd, parsed.interfaces)):
        return SwitchCounters(
            problems=(
                f"{command}: {len(text.splitlines())} lines of output but no row in a known NX-OS shape "
                f"(TABLE_*/ROW_* JSON or the Nexus 9000 text tables); line {first[0]}: {first[1]!r}",
            )
        )
    return parsed


# -- show queuing [interface IF] ---------------------------------------------------------------------------------

_EQ_FIELDS: dict[str, str] = label_map(
    {
        "Tx Pkts": "packets",
        "Tx Byts": "bytes",
        "WRED/AFD & Tail Drop Pkts": "dropped_packets",
        "WRED/AFD & Tail Drop Byts": "dropped_bytes",
        "ECN Pkts": "ecn_marked_packets",
        "ECN Byts": "ecn_marked_bytes",
    }
)
"""``eq-stat-type``/``eq-stat-units`` (JSON) or the row label (text, ``Tx Pkts``...) -> QueueCounter field. ``Q Depth``
(a gauge) and ``WD & Tail Drop`` (watchdog drops, counted by the pfc-queue parser) are not queue counters here."""


def _queues_from(port: str, group: int, values: dict[str, dict[str, int | None]]) -> list[QueueCounter]:
    out: list[QueueCounter] = []
    for kind in ("unicast", "multicast"):
        fields = values.get(kind)
        if fields:
            out.append(QueueCounter(port, group, "unicast" if kind == "unicast" else "multicast", **fields))
    return out


def _queuing_json(data: Any) -> SwitchCounters:
    queues: list[QueueCounter] = []
    pfc: list[PfcCounter] = []
    ifs: list[InterfaceCounter] = []
    for row in _find_rows(data, "queuing_interface"):
        name = row.get("if_name_str")
        if not name:
            continue
        port = long_interface(str(name))
        for grp in _rows(row, "qosgrp_egress_stats"):
            group = _num(grp.get("eq-qosgrp"))
            if group is None:  # "CONTROL QOS GROUP", "SPAN QOS GROUP": not a data queue
                continue
            values: dict[str, dict[str, int | None]] = {}
            for entry in _rows(grp, "qosgrp_egress_stats_entry"):
                field = _EQ_FIELDS.get(label_key(f"{entry.get('eq-stat-type')} {entry.get('eq-stat-units')}"))
                if field is None:
                    continue
                values.setdefault("unicast", {})[field] = _num(entry.get("eq-uc-stat-value"))
                if "eq-mc-stat-value" in entry:
                    values.setdefault("multicast", {})[field] = _num(entry.get("eq-mc-stat-value"))
            queues += _queues_from(port, group, values)
        for entry in _rows(row, "ingress_stats_entry"):
            if str(entry.get("ip-stat-type", "")).startswith("Ingress Overflow Drop"):
                ifs.append(
                    InterfaceCounter(port, "rx", "discards", _num(entry.get("ip-stat-value")), "ingress_overflow")
                )
        for entry in _rows(row, "pfc_stats"):
            cos = _num(entry.get("cos"))
            if cos is None or not 0 <= cos <= 7:
                continue
            pfc.append(PfcCounter(port, "rx", cos, _num(entry.get("rx-pause-count"))))
            pfc.append(PfcCounter(port, "tx", cos, _num(entry.get("tx-pause-count"))))
    return SwitchCounters(pfc=tuple(pfc), queues=tuple(queues), interfaces=tuple(ifs))


_EGRESS_HEAD = re.compile(r"^\s*Egress Queuing for (?P<port>\S+)")
_INGRESS_HEAD = re.compile(r"^\s*Ingress Queuing for (?P<port>\S+)")
_GROUP_BOX = re.compile(r"^\|\s*(?:(?P<special>CONTROL|SPAN) )?QOS GROUP\s*(?P<g>\d+)?\s*\|?\s*$")
_STAT_ROW = re.compile(r"^\|\s*(?P<label>[^|]*?)\s*\|(?P<cells>.*)$")
_PFC_HEAD = re.compile(r"^\s*(?:PFC_COS|COS)\b.*TxCount.*RxCount")
_PORT_INGRESS = re.compile(
    r"^\s*(?P<label>Ingress Overflow Drop Pkts|Hi Priority Drop Pkts|Low Priority Drop Pkts)"
    r"\s+(?P<n>\d+)\s*$"
)
_INGRESS_REASON = label_map(
    {
        "Ingress Overflow Drop Pkts": "ingress_overflow",
        "Hi Priority Drop Pkts": "hi_priority",
        "Low Priority Drop Pkts": "low_priority",
    }
)


class _QueuingText:
    """The Nexus 9000 text form, line by line: ``Egress Queuing for <if>`` with one ``QOS GROUP n`` box per queue
    (columns ``Unicast`` [``OOBFC Unicast``] ``Multicast``), ``Ingress Queuing for <if>`` with ``Per Port Ingress
    Statistics`` and ``PFC Statistics`` (``PFC_COS QOS_Group TxPause TxCount RxPause RxCount``). Each kind of line
    has its own step; the first that takes a line ends it."""

    def __init__(self, interface: str | None) -> None:
        self.port = long_interface(interface) if interface else None
        self.group: int | None = None
        self.columns: list[str] = []
        self.found: dict[tuple[str, int], dict[str, dict[str, int | None]]] = {}
        self.pfc: list[PfcCounter] = []
        self.ifs: list[InterfaceCounter] = []
        self.pfc_cols: list[str] | None = None
        self.per_port = False

    def feed(self, line: str) -> None:
        stripped = line.strip()
        if not (self._section(line, stripped) or self._pfc_row(line, stripped) or self._port_ingress(line)):
            self._queue_row(stripped)

    def _section(self, line: str, stripped: str) -> bool:
        """Headings: a port's egress or ingress part, a ``QOS GROUP`` box, the per-port and PFC tables."""
        if m := _EGRESS_HEAD.match(line) or _INGRESS_HEAD.match(line):
            self.port, self.group, self.pfc_cols, self.per_port = long_interface(m.group("port")), None, None, False
            return True
        if m := _GROUP_BOX.match(stripped):
            self.group = None if m.group("special") else _num(m.group("g"))
            return True
        if stripped.startswith("Per Port Ingress Statistics"):
            self.per_port = True
            return True
        if stripped.startswith("Per Slice") or stripped.startswith("PFC Statistics"):
            self.per_port = False
        if _PFC_HEAD.match(line):
            self.pfc_cols = line.split()
            return True
        return False

    def _pfc_row(self, line: str, stripped: str) -> bool:
        """A row of the PFC table (per CoS: TxCount, RxCount); anything but a rule line ends the table."""
        if self.pfc_cols is None or self.port is None:
            return False
        cells = line.split()
        if len(cells) == len(self.pfc_cols) and cells[0].isdigit():
            row = dict(zip(self.pfc_cols, cells, strict=True))
            cos = int(cells[0])
            self.pfc.append(PfcCounter(self.port, "rx", cos, to_int(row.get("RxCount"))))
            self.pfc.append(PfcCounter(self.port, "tx", cos, to_int(row.get("TxCount"))))
            return True
        if not set(stripped) <= {"-"}:
            self.pfc_cols = None
        return False

    def _port_ingress(self, line: str) -> bool:
        """A ``Per Port Ingress Statistics`` drop line."""
        if not self.per_port or self.port is None or (m := _PORT_INGRESS.match(line)) is None:
            return False
        self.ifs.append(
            InterfaceCounter(
                self.port, "rx", "discards", int(m.group("n")), _INGRESS_REASON[label_key(m.group("label"))]
            )
        )
        return True

    def _queue_row(self, stripped: str) -> None:
        """A row of a ``QOS GROUP`` box: its column header, or one statistic per column."""
        if (m := _STAT_ROW.match(stripped)) is None or self.port is None or self.group is None:
            return
        label, cells = m.group("label"), [c.strip() for c in m.group("cells").split("|")]
        if not label:  # the column header: |   |  Unicast  |OOBFC Unicast|Multicast |
            self.columns = [c for c in cells if c]
            return
        field = _EQ_FIELDS.get(label_key(label))
        if field is None:
            return
        for col, cell in zip(self.columns or ["Unicast", "Multicast"], cells, strict=False):
            kind = {"Unicast": "unicast", "Multicast": "multicast"}.get(col)
            if kind is not None:
                self.found.setdefault((self.port, self.group), {}).setdefault(kind, {})[field] = to_int(cell)

    def counters(self) -> SwitchCounters:
        queues = [q for (p, g), values in self.found.items() for q in _queues_from(p, g, values)]
        return SwitchCounters(pfc=tuple(self.pfc), queues=tuple(queues), interfaces=tuple(self.ifs))


def _queuing_text(text: str, interface: str | None) -> SwitchCounters:
    """The Nexus 9000 text form (:class:`_QueuingText`)."""
    reader = _QueuingText(interface)
    for line in text.splitlines():
        reader.feed(line)
    return reader.counters()


@framed_interface
def parse_show_queuing(text: str, interface: str | None = None) -> SwitchCounters:
    """``show queuing [interface IF]``, ``| json`` or text, in the shapes a Nexus 9000 prints.

    JSON (Cisco's NX-API schema for ``show queuing``, N9K show command reference 9.3(x); the nesting every public NX-API
    script walks; no public capture with values, so the exporter polls the text form): ``TABLE_module -> ROW_module ->
    TABLE_queuing_interface -> ROW_queuing_interface`` (``dir``, ``if_name_str``) ``-> TABLE_qosgrp_egress_stats ->
    ROW_qosgrp_egress_stats`` (``eq-qosgrp``) ``-> TABLE_qosgrp_egress_stats_entry -> ROW_qosgrp_egress_stats_entry``
    (``eq-stat-type`` ``Tx``/``WRED/AFD & Tail Drop``/``ECN``/``Q Depth``, ``eq-stat-units`` ``Pkts``/``Byts``,
    ``eq-uc-stat-value``, ``eq-mc-stat-value``); per-CoS PFC frames in ``TABLE_pfc_stats`` (``cos``, ``tx-pause-count``,
    ``rx-pause-count``); ingress overflow drops in ``TABLE_ingress_stats_entry``. A ``ROW_*`` is a dict for one row and
    a list for several.

    Text: the ``QOS GROUP n`` boxes, ``PFC Statistics`` and ``Per Port Ingress Statistics`` of a real Nexus 9000
    (tests/golden/readers/switch/cisco_nxos/show-queuing-interface-*-n9k-*.txt). ``interface`` names the port when a
    filtered capture starts below the ``Egress Queuing for <if>`` line. The Nexus 5000 ``RX Queuing`` form is
    :func:`parse_show_queuing_interface`. Non-empty output that yields nothing is a problem, not an empty result."""
    data = _load_json(text)
    parsed = _queuing_json(data) if isinstance(data, dict) else _queuing_text(text, interface)
    return _empty_problem("show queuing", text, parsed)


# -- show queuing pfc-queue [interface IF] detail -----------------------------------------------------------------

_WD_STATS = label_map(
    {
        "Shutdown": "shutdown",
        "Restored": "restored",
        "Total pkts dropped": "dropped",
        "Total Ingress pkts dropped": "ingress_dropped",
    }
)
_WD_HEAD = re.compile(r"^(?P<port>\S+) Interface PFC watchdog: \[(?P<wd>[^\]]*)\]")
_WD_GROUP = re.compile(r"^\|\s*QOS GROUP (?P<g>\d+) \[(?P<state>[^\]]*)\]")
_STORMED_STATES = frozenset({"shutdown", "wait-to-restore", "wait to restore"})
_LEADING_INT = re.compile(r"^\s*(\d+)(?!\S)")


def _pfcwd(port: str, group: int, state: str, stats: dict[str, int | None]) -> PfcwdCounter:
    status = ("stormed" if state.strip().lower() in _STORMED_STATES else "operational") if state else None
    return PfcwdCounter(
        port,
        group,
        status,
        stats.get("shutdown"),
        stats.get("restored"),
        tx_drop=stats.get("dropped"),
        rx_drop=stats.get("ingress_dropped"),
    )


def _pfc_queue_json(data: Any) -> list[PfcwdCounter]:
    out: list[PfcwdCounter] = []
    for row in _find_rows(data, "queuing_interface"):
        name = str(row.get("if_name_str") or "").split()
        if not name:
            continue
        for grp in _rows(row, "qosgrp_stats"):
            lead = _LEADING_INT.match(str(grp.get("eq-qosgrp", "")))
            if lead is None:
                continue
            group = int(lead.group(1))
            stats: dict[str, int | None] = {}
            for entry in _rows(grp, "qosgrp_stats_entry"):
                for key, field in (
                    ("q-shutdown", "shutdown"),
                    ("q-restored", "restored"),
                    ("q-pkt-dropped", "dropped"),
                    ("q-ing-pkt-dropped", "ingress_dropped"),
                ):
                    if key in entry and stats.get(field) is None:
                        stats[field] = _num(entry[key])
            out.append(_pfcwd(long_interface(name[0]), group, str(grp.get("eq-qosgrp-state") or ""), stats))
    return out


def _pfc_queue_text(text: str) -> list[PfcwdCounter]:
    out: list[PfcwdCounter] = []
    port: str | None = None
    current: tuple[int, str] | None = None
    stats: dict[str, int | None] = {}

    def flush() -> None:
        if port is not None and current is not None:
            out.append(_pfcwd(port, current[0], current[1], dict(stats)))

    for line in text.splitlines():
        stripped = line.strip()
        if m := _WD_HEAD.match(stripped):
            flush()
            port, current, stats = long_interface(m.group("port")), None, {}
        elif m := _WD_GROUP.match(stripped):
            flush()
            current, stats = (int(m.group("g")), m.group("state")), {}
        elif current is not None and (m := _STAT_ROW.match(stripped)):
            field = _WD_STATS.get(label_key(m.group("label")))
            if field is not None:
                stats[field] = to_int(m.group("cells").split("|")[0])
    flush()
    return out


@framed
def parse_show_queuing_pfc_queue(text: str) -> SwitchCounters:
    """``show queuing pfc-queue [interface IF] detail`` (the PFC watchdog), ``| json`` or text.

    JSON: Cisco's NX-API schema (N9K show command reference 9.3(x)): ``TABLE_queuing_interface ->
    ROW_queuing_interface`` (``if_name_str``, ``wd-status``, ``disable-action``, ``intf-multi``) ``-> TABLE_qosgrp_stats
    -> ROW_qosgrp_stats`` (``eq-qosgrp``, ``eq-qosgrp-state``, ``pfc-cos``) ``-> TABLE_qosgrp_stats_entry ->
    ROW_qosgrp_stats_entry`` (``q-shutdown``, ``q-restored``, ``q-pkt-dropped``, ``q-ing-pkt-dropped``...). No public
    capture of the JSON with values exists: the key names are the schema's (``q-shutdown``, ``q-restored``,
    ``q-pkt-drained``, ``q-pkt-dropped`` are also the fields a Cisco engineer's NX-API collector,
    paregupt/nexus_traffic_monitor, stores from this command). That collector reads the port as the first word of
    ``if_name_str`` and the group as the leading number of ``eq-qosgrp`` (values with trailing text, where the schema
    shows plain ones), so this parser takes the leading word and number of both. Text: ``<if> Interface PFC watchdog:
    [Enabled]`` then one ``| QOS GROUP n [state] PFC [YES] PFC-COS [n]`` box per no-drop queue (Shutdown, Restored,
    Total pkts dropped, Total Ingress pkts dropped), after a third-party test fixture
    (tests/golden/readers/switch/cisco_nxos/show-queuing-pfc-queue-detail-otel.txt): unverified against a device.
    ``detected`` = Shutdown, ``restored`` = Restored, ``tx_drop`` = pkts dropped, ``rx_drop`` = ingress pkts dropped; a
    queue in state Shutdown is ``stormed``."""
    data = _load_json(text)
    rows = _pfc_queue_json(data) if data is not None else _pfc_queue_text(text)
    if isinstance(data, dict) and any(k.startswith("glb-") for k in data):
        # the schema's global block (glb-wd-status, glb-wd-timer...) with no interface rows: no port has a
        # watchdog queue, which is an answer, not an unreadable output
        return SwitchCounters(pfcwd=tuple(rows))
    return _empty_problem("show queuing pfc-queue", text, SwitchCounters(pfcwd=tuple(rows)))


PARSERS: dict[str, Callable[..., SwitchCounters]] = {
    "pfc": parse_show_interface_priority_flow_control,
    "queuing": parse_show_queuing,
    "pfcwd": parse_show_queuing_pfc_queue,
    "errors": parse_show_interface_counters_errors,
    "transceiver": parse_show_interface_transceiver_details,
}
