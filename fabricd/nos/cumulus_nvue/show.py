"""NVIDIA Cumulus Linux (NVUE) show outputs, as pure parsers, text and ``-o json`` forms.

Real captures (Cumulus Linux 5.14 documentation, tests/golden/readers/switch/cumulus_nvue/):

- ``nv show interface <if> counters qos``: sections "Ingress Buffer Statistics", "Egress Queue Statistics" (per
  traffic class tx-frames, tx-bytes, tx-uc-buffer-discards, wred-discards), "PFC Statistics" (per switch priority
  rx/tx pause frames and pause duration) and "Qos Port Statistics"; human units (``0 Bytes``, ``7.29 MB``);
- ``nv show interface <if> qos roce counters``: a key/value tree (``tx-ecn-stats`` ``ecn-marked-packets``, RoCE
  PFC pause packets and duration, no-buffer discards);
- ``nv show interface --view counters`` and ``cl-netstat``: RX_OK/RX_ERR/RX_DRP/... per interface;
- ``nv show interface <if> counters errors``.

- ``nv show interface <if> qos pfc-watchdog`` (Cumulus Linux 5.11 guide): a ``state`` row and a ``PFC WD Status``
  table per traffic class (status OK | DEADLOCK, deadlock-count), with a blank line under the table's rule.

The collector reads ``counters qos`` as ``-o json`` because the text prints bytes in human units (``92824.38 GB``),
which would make byte counters jump. That JSON form is **unverified**: no public capture exists; fabricd reads it
with the text's column names (``egress-queue-stats``/``pfc-stats`` keyed by class) and its golden says so. The
watchdog is read in its captured text form. Any of these outputs that reads nothing is a problem (the scrape fails),
never an empty success. Pause duration is taken as microseconds (Spectrum PPCNT); sizes use 1024-based units.
"""

from __future__ import annotations

import json
import re
from typing import Any

from fabricd.readers.framing import first_content, framed, framed_interface
from fabricd.readers.switch.model import InterfaceCounter, PfcCounter, PfcwdCounter, QueueCounter, SwitchCounters
from fabricd.readers.switch.tables import NETSTAT_COLUMNS, dashed_tables, is_prompt, to_int

from .linkhealth import (
    parse_nv_show_interface_counters_flaps,
    parse_nv_show_interface_link_phy_detail,
    parse_nv_show_interface_transceiver,
)

PLATFORM = "cumulus_nvue"

COMMANDS: dict[str, str] = {
    "qos": "nv show interface {interface} counters qos -o json",
}
"""Per-interface commands (``{interface}`` is filled from the inventory's ports)."""

OPTIONAL_COMMANDS: dict[str, str] = {
    "pfcwd": "nv show interface {interface} qos pfc-watchdog",
    "transceiver": "nv show interface {interface} transceiver",
    "flaps": "nv show interface {interface} counters",
    "fec": "nv show interface {interface} link phy-detail",
}
"""Commands whose failure (a release without the PFC watchdog, ports without it) does not fail the poll. The
watchdog is read in its text form: the Cumulus Linux 5.11 user guide prints it (a real shape); no ``-o json`` capture
of it exists. ``transceiver`` is the module DOM (fabricd.nos.cumulus_nvue.linkhealth; Cumulus Linux 5.11+);
``flaps`` the port's carrier transitions (its ``carrier-transitions`` line); ``fec`` the pre-/post-FEC BER and the
corrected codewords of ``link phy-detail`` (Cumulus Linux 5.10+; Spectrum 1 switches refuse it)."""

_UNITS = {"bytes": 1, "b": 1, "kb": 1024, "mb": 1024**2, "gb": 1024**3, "tb": 1024**4}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([A-Za-z]+)?\s*$")
_PROMPT_IF = re.compile(r"nv show interface (\S+)")


def to_bytes(cell: str | None) -> int | None:
    """``0 Bytes`` -> 0, ``7.29 MB`` -> 7644119 (1024-based), ``n/a``/``inf`` -> None."""
    if cell is None:
        return None
    m = _SIZE.match(cell.replace(",", ""))
    if m is None:
        return None
    unit = (m.group(2) or "bytes").lower()
    if unit not in _UNITS:
        return None
    return round(float(m.group(1)) * _UNITS[unit])


def _interface_from_prompt(text: str, interface: str | None) -> str | None:
    if interface:
        return interface
    for line in text.splitlines()[:3]:
        m = _PROMPT_IF.search(line)
        if m and not m.group(1).startswith("-"):
            return m.group(1)
    return None


def _sections(text: str) -> dict[str, str]:
    """Split NVUE output into sections by their ``====`` underlined titles."""
    lines = text.splitlines()
    out: dict[str, list[str]] = {}
    title = ""
    for i, line in enumerate(lines):
        if i + 1 < len(lines) and set(lines[i + 1].strip()) == {"="} and line.strip():
            title = line.strip()
            out[title] = []
            continue
        if set(line.strip()) == {"="}:
            continue
        out.setdefault(title, []).append(line)
    return {k: "\n".join(v) for k, v in out.items()}


@framed_interface
def parse_counters_qos(text: str, interface: str | None = None) -> SwitchCounters:
    """``nv show interface <if> counters qos`` (text or ``-o json``): queue and PFC counters of one interface. A
    non-empty output that gives neither is a problem (the collector then reports the scrape failed)."""
    got = _counters_qos(text, interface)
    if not got.queues and not got.pfc and text.strip():
        port = _interface_from_prompt(text, interface) or ""
        return SwitchCounters(
            interfaces=got.interfaces, problems=_nothing_read(port, "nv show interface <if> counters qos", text)
        )
    return got


def _counters_qos(text: str, interface: str | None) -> SwitchCounters:
    port = _interface_from_prompt(text, interface) or ""
    start = text.find("{")
    head = text[:start].strip() if start >= 0 else ""
    if start >= 0 and all(is_prompt(line) for line in head.splitlines()):
        try:
            return _qos_json(json.loads(text[start:]), port)
        except ValueError:
            pass
    queues: list[QueueCounter] = []
    pfc: list[PfcCounter] = []
    sections = _sections(text)
    for title, body in sections.items():
        for table in dashed_tables(body):
            if title.startswith("Egress Queue") and "traffic-class" in table.columns:
                for row in table.rows:
                    tc = to_int(row.get("traffic-class"))
                    if tc is None:
                        continue
                    queues.append(
                        QueueCounter(
                            port,
                            tc,
                            "unicast",
                            packets=to_int(row.get("tx-frames")),
                            bytes=to_bytes(row.get("tx-bytes")),
                            dropped_bytes=to_bytes(row.get("tx-uc-buffer-discards")),
                            wred_dropped_packets=to_int(row.get("wred-discards")),
                        )
                    )
            elif title.startswith("PFC") and "switch-priority" in table.columns:
                for row in table.rows:
                    prio = to_int(row.get("switch-priority"))
                    if prio is None:
                        continue
                    for d in ("rx", "tx"):
                        pfc.append(
                            PfcCounter(
                                port,
                                d,
                                prio,
                                to_int(row.get(f"{d}-pause-frames")),
                                to_int(row.get(f"{d}-pause-duration")),
                            )
                        )
    return SwitchCounters(pfc=tuple(pfc), queues=tuple(queues))


def _num(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        return to_int(value) if to_int(value) is not None else to_bytes(value)
    return None


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _qos_json(data: Any, port: str) -> SwitchCounters:
    queues: list[QueueCounter] = []
    pfc: list[PfcCounter] = []
    data = _dict(data)
    for tc, row in sorted(_dict(data.get("egress-queue-stats")).items()):
        if str(tc).isdigit() and isinstance(row, dict):
            queues.append(
                QueueCounter(
                    port,
                    int(tc),
                    "unicast",
                    packets=_num(row.get("tx-frames")),
                    bytes=_num(row.get("tx-bytes")),
                    dropped_bytes=_num(row.get("tx-uc-buffer-discards")),
                    wred_dropped_packets=_num(row.get("wred-discards")),
                )
            )
    for prio, row in sorted(_dict(data.get("pfc-stats")).items()):
        if str(prio).isdigit() and isinstance(row, dict):
            for d in ("rx", "tx"):
                pfc.append(
                    PfcCounter(
                        port, d, int(prio), _num(row.get(f"{d}-pause-frames")), _num(row.get(f"{d}-pause-duration"))
                    )
                )
    ifs: list[InterfaceCounter] = []
    port_stats = _dict(data.get("port-stats"))
    for key, counter in (("ecn-marked-packets", "ecn_marked_packets"), ("pause-frames", "pause_frames")):
        entry = port_stats.get(key) or {}
        for col, direction in (("receive", "rx"), ("transmit", "tx")):
            value = _num(entry.get(col)) if isinstance(entry, dict) else None
            if value is not None and counter == "ecn_marked_packets":
                ifs.append(InterfaceCounter(port, "rx" if direction == "rx" else "tx", counter, value))
    return SwitchCounters(pfc=tuple(pfc), queues=tuple(queues), interfaces=tuple(ifs))


_RULE_LINE = re.compile(r"^\s*-{3,}(?:\s+-{3,})*\s*$")


def _close_rule_gaps(text: str) -> str:
    """Drop a blank line right under a table's rule of dashes: NVUE prints one in ``PFC WD Status`` (CL 5.11 guide),
    which would otherwise end the table before its first row."""
    out: list[str] = []
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if not line.strip() and i > 0 and _RULE_LINE.match(lines[i - 1]):
            continue
        out.append(line)
    return "\n".join(out)


def _nothing_read(port: str, command: str, text: str = "") -> tuple[str, ...]:
    first = first_content(text)
    where = f"; line {first[0]}: {first[1]!r}" if first is not None else ""
    return (
        f"{port or 'interface ?'}: nothing read from the non-empty output of `{command}` "
        f"(an output shape fabricd does not know{where})",
    )


@framed_interface
def parse_pfc_watchdog(text: str, interface: str | None = None) -> SwitchCounters:
    """``nv show interface <if> qos pfc-watchdog``: per traffic class ``status`` (OK | DEADLOCK) and
    ``deadlock-count`` (storms detected), from the ``PFC WD Status`` table of the Cumulus Linux 5.11 guide's
    capture. NVUE gives no restore count. A port whose watchdog ``state`` is ``disabled`` has no table; any other
    output without rows is a problem. The ``-o json`` form (``{"traffic-class": {tc: {"status", "deadlock-count"}}}``)
    is read too but unverified: no public capture of it exists."""
    port = _interface_from_prompt(text, interface) or ""
    rows: dict[str, dict[str, Any]] = {}
    state: str | None = None
    start = text.find("{")
    if start >= 0:
        try:
            data = _dict(json.loads(text[start:]))
        except ValueError:
            data = {}
        rows = _dict(data.get("traffic-class"))
        state = str(data.get("state") or "") or None
    else:
        for table in dashed_tables(_close_rule_gaps(text)):
            if "traffic-class" in table.columns:
                rows.update(
                    {
                        r["traffic-class"]: {"status": r.get("status"), "deadlock-count": r.get("deadlock-count")}
                        for r in table.rows
                        if r.get("traffic-class")
                    }
                )
        state = _tree(text).get("state")
    out = []
    for tc, row in sorted(rows.items()):
        if not str(tc).isdigit() or not isinstance(row, dict):
            continue
        status = str(row.get("status") or "")
        out.append(
            PfcwdCounter(
                port,
                int(tc),
                "stormed" if status.upper() == "DEADLOCK" else "operational" if status else None,
                _num(row.get("deadlock-count")),
                None,
            )
        )
    problems: tuple[str, ...] = ()
    if not out and text.strip() and (state or "").split()[:1] not in (["disabled"], ["disable"]):
        problems = _nothing_read(port, "nv show interface <if> qos pfc-watchdog", text)
    return SwitchCounters(pfcwd=tuple(out), problems=problems)


def _tree(text: str) -> dict[str, str]:
    """Flatten an NVUE key/value tree (``parent`` lines, indented ``key  value  description``) to
    ``{"parent.key": "value"}`` using the header's column offsets."""
    lines = text.splitlines()
    header_i = next(
        (
            i
            for i, ln in enumerate(lines)
            if "operational" in ln and i + 1 < len(lines) and lines[i + 1].lstrip().startswith("---")
        ),
        None,
    )
    if header_i is None:
        return {}
    col = lines[header_i].index("operational")
    rule = lines[header_i + 1]
    spans = [m.span() for m in re.finditer(r"-+", rule)]
    end = spans[1][1] if len(spans) > 1 else len(rule)
    out: dict[str, str] = {}
    stack: list[tuple[int, str]] = []
    for line in lines[header_i + 2 :]:
        if not line.strip() or set(line.strip()) == {"="}:
            continue
        indent = len(line) - len(line.lstrip())
        key = line[:col].strip()
        value = line[col:end].strip() if len(line) > col else ""
        while stack and stack[-1][0] >= indent:
            stack.pop()
        path = ".".join([s for _, s in stack] + [key])
        if value:
            out[path] = value
        else:
            stack.append((indent, key))
    return out


@framed_interface
def parse_qos_roce_counters(text: str, interface: str | None = None) -> SwitchCounters:
    """``nv show interface <if> qos roce counters``: RoCE PFC pause (priority None: the RoCE priority), ECN marks
    and buffer discards of one interface."""
    port = _interface_from_prompt(text, interface) or ""
    t = _tree(text)
    pfc = [
        PfcCounter(
            port,
            d,
            None,
            to_int(t.get(f"{d}-stats.{d}-pfc-stats.pause-packets")),
            to_int(t.get(f"{d}-stats.{d}-pfc-stats.pause-duration")),
        )
        for d in ("rx", "tx")
        if f"{d}-stats.{d}-pfc-stats.pause-packets" in t
    ]
    ifs: list[InterfaceCounter] = []
    marked = to_int(t.get("tx-stats.tx-ecn-stats.ecn-marked-packets"))
    if marked is not None:
        ifs.append(InterfaceCounter(port, "tx", "ecn_marked_packets", marked))
    for key, direction, reason in (
        ("rx-stats.rx-roce-stats.no-buffer-discard", "rx", "roce_no_buffer"),
        ("rx-stats.rx-non-roce-stats.no-buffer-discard", "rx", "non_roce_no_buffer"),
        ("tx-stats.tx-roce-stats.unicast-no-buffer-discard", "tx", "roce_no_buffer"),
        ("tx-stats.tx-cnp-stats.unicast-no-buffer-discard", "tx", "cnp_no_buffer"),
    ):
        value = to_int(t.get(key))
        if value is not None:
            ifs.append(InterfaceCounter(port, "rx" if direction == "rx" else "tx", "discards", value, reason))
    problems = (
        _nothing_read(port, "nv show interface <if> qos roce counters", text)
        if not (pfc or ifs) and text.strip()
        else ()
    )
    return SwitchCounters(pfc=tuple(pfc), interfaces=tuple(ifs), problems=problems)


@framed
def parse_interface_counters_table(text: str) -> SwitchCounters:
    """``nv show interface --view counters`` and ``cl-netstat``: packets, errors, drops and overruns per interface."""
    out: list[InterfaceCounter] = []
    lines = text.splitlines()
    header: list[str] = []
    for line in lines:
        cells = line.split()
        if not cells or is_prompt(line) or set(line.strip()) <= {"-", " "}:
            continue
        if "RX_OK" in cells:
            header = cells
            continue
        if not header or len(cells) < len(header) - 1:
            continue
        row = dict(zip(header, cells, strict=False))
        name = cells[0]
        for col, (direction, counter, reason) in NETSTAT_COLUMNS.items():
            value = to_int(row.get(col))
            if value is not None:
                out.append(InterfaceCounter(name, "rx" if direction == "rx" else "tx", counter, value, reason))
    problems = _nothing_read("", "nv show interface --view=counters", text) if not out and text.strip() else ()
    return SwitchCounters(interfaces=tuple(out), problems=problems)


@framed_interface
def parse_counters_errors(text: str, interface: str | None = None) -> SwitchCounters:
    """``nv show interface <if> counters errors``: per-reason receive/transmit errors (``n/a`` left out)."""
    port = _interface_from_prompt(text, interface) or ""
    out: list[InterfaceCounter] = []
    for table in dashed_tables(text):
        if "Counter" not in table.columns:
            continue
        for row in table.rows:
            name = row.get("Counter", "")
            reason = re.sub(r"[^0-9a-z]+", "_", name.lower().removesuffix(" errors")).strip("_") or None
            if reason == "total":
                reason = None
            for col, direction in (("Receive", "rx"), ("Transmit", "tx")):
                value = to_int(row.get(col))
                if value is not None:
                    out.append(InterfaceCounter(port, "rx" if direction == "rx" else "tx", "errors", value, reason))
    problems = _nothing_read(port, "nv show interface <if> counters errors", text) if not out and text.strip() else ()
    return SwitchCounters(interfaces=tuple(out), problems=problems)


PARSERS = {
    "qos": parse_counters_qos,
    "pfcwd": parse_pfc_watchdog,
    "transceiver": parse_nv_show_interface_transceiver,
    "flaps": parse_nv_show_interface_counters_flaps,
    "fec": parse_nv_show_interface_link_phy_detail,
}
