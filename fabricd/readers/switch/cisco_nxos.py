"""Cisco NX-OS show outputs, as pure parsers (text forms over the real captures in
tests/golden/readers/switch/cisco_nxos/).

- ``show interface priority-flow-control``: ``Port Mode Oper(VL bmap) RxPPP TxPPP``: PFC frames over all priorities
  (``priority`` None); ``=`` rule lines and trailing spaces;
- ``show queuing interface``: per qos-group ``Pkts discarded on ingress`` (lossless ingress drops) and per-priority
  pause status;
- ``show interface`` (``| b RX``): ``N Rx pause`` / ``N Tx pause`` (802.3x link pause), ``input discard``,
  ``output discard``, ``no buffer``;
- ``show interface counters errors``: stacked tables; ``--`` means not applicable.

NX-OS's ``| json`` forms nest rows in ``TABLE_*``/``ROW_*`` objects; :func:`parse_json_rows` flattens them and
:func:`parse_show_interface_priority_flow_control` accepts either form (``if_name_str``/``rx_ppp``/``tx_ppp`` keys
are written from the text's columns: no public JSON capture exists).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from .model import InterfaceCounter, PfcCounter, PfcwdCounter, QueueCounter, SwitchCounters
from .tables import dashed_tables, to_int

PLATFORM = "cisco_nxos"

COMMANDS: dict[str, str] = {
    "pfc": "show interface priority-flow-control | json",
    "queuing": "show queuing | json",
    "pfcwd": "show queuing pfc-queue | json",
}
"""The commands the switch exporter runs on NX-OS, by role."""

OPTIONAL_COMMANDS: dict[str, str] = {"errors": "show interface counters errors"}
"""Commands whose failure (an older release, a platform without them) does not fail the poll."""

_PFC_ROW = re.compile(r"^(?P<port>(?:Ethernet|Eth|Po|port-channel)\S+)\s+(?P<mode>\S+)\s+(?P<oper>On\s*\(\S+\)|\S+)"
                      r"\s+(?P<rx>\d+)\s+(?P<tx>\d+)\s*$")


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


def parse_show_interface_priority_flow_control(text: str) -> SwitchCounters:
    """PFC frames received (RxPPP) and sent (TxPPP) per port, over all priorities."""
    out: list[PfcCounter] = []
    start = text.find("{")
    if start >= 0:
        try:
            data = json.loads(text[start:])
        except ValueError:
            data = None
        if data is not None:
            for row in parse_json_rows(data):
                name = row.get("if_name_str") or row.get("interface")
                if not name:
                    continue
                port = long_interface(str(name))
                out.append(PfcCounter(port, "rx", None, to_int(str(row.get("rx_ppp", "")))))
                out.append(PfcCounter(port, "tx", None, to_int(str(row.get("tx_ppp", "")))))
            return SwitchCounters(pfc=tuple(out))
    for line in text.splitlines():
        m = _PFC_ROW.match(line.strip())
        if m is None:
            continue
        port = long_interface(m.group("port"))
        out.append(PfcCounter(port, "rx", None, int(m.group("rx"))))
        out.append(PfcCounter(port, "tx", None, int(m.group("tx"))))
    return SwitchCounters(pfc=tuple(out))


_QUEUING_HEAD = re.compile(r"^(?P<port>\S+) queuing information:")
_QOS_GROUP = re.compile(r"^\s*qos-group (?P<g>\d+)\s*$")
_DISCARD = re.compile(r"^\s*Pkts discarded on ingress\s*:\s*(?P<n>\d+)")


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
    return SwitchCounters(interfaces=tuple(out))


_IF_HEAD = re.compile(r"^(?P<port>(?:Ethernet|Eth|port-channel)\S+) is ")
_PAIR = re.compile(r"(\d+) ([a-zA-Z][a-zA-Z ]*?)(?=\s{2,}|\s+\d|$)")
_IF_FIELDS = {
    ("rx", "Rx pause"): ("pause_frames", None),
    ("tx", "Tx pause"): ("pause_frames", None),
    ("rx", "input discard"): ("discards", None),
    ("tx", "output discard"): ("discards", None),
    ("rx", "input error"): ("errors", None),
    ("tx", "output error"): ("errors", None),
    ("rx", "no buffer"): ("discards", "no_buffer"),
    ("rx", "CRC"): ("errors", "fcs"),
    ("rx", "input packets"): ("packets", None),
    ("tx", "output packets"): ("packets", None),
}


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
            meaning = _IF_FIELDS.get((section, label.strip()))
            if meaning is not None:
                out.append(InterfaceCounter(port, "rx" if section == "rx" else "tx", meaning[0], int(value),
                                            meaning[1]))
    return SwitchCounters(interfaces=tuple(out))


_ERR_COLUMNS: dict[str, tuple[str | None, str, str | None]] = {
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
            meaning = _ERR_COLUMNS.get(col)
            value = to_int(cell)
            if meaning is None or value is None:
                continue
            direction, counter, reason = meaning
            out.append(InterfaceCounter(port, "rx" if direction == "rx" else "tx", counter, value, reason))
    return SwitchCounters(interfaces=tuple(out))


def _load_json(text: str) -> Any:
    start = text.find("{")
    if start < 0:
        return None
    try:
        return json.loads(text[start:])
    except ValueError:
        return None


def _num(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    return to_int(str(value)) if value is not None else None


_TX_STAT = re.compile(r"^\s*(?P<label>Pkts sent to the port|Bytes sent to the port|Pkts discarded on egress|"
                      r"WRED/ECN marked packets)\s*:\s*(?P<n>\d+)")
_TX_FIELDS = {"Pkts sent to the port": "packets", "Bytes sent to the port": "bytes",
              "Pkts discarded on egress": "dropped_packets", "WRED/ECN marked packets": "ecn_marked_packets"}


def parse_show_queuing(text: str) -> SwitchCounters:
    """``show queuing [interface IF]``: per qos-group egress statistics, in text (``TX Queuing`` blocks) or ``| json``
    (``interfaces.<if>[]`` rows with ``qos-group``, ``tx_pkts``, ``tx_bytes``, ``drop_pkts``, ``ecn_marked_pkts``,
    ``rx_pfc_ppp``/``tx_pfc_ppp``). The JSON names have no public capture; they are the ones fabricd's lab simulator
    prints, after Cisco's documented statistics. PFC frames per qos-group are reported as that priority (the
    standard network-qos maps CoS N to qos-group N). The RX block of the real Nexus 5000 capture (ingress discards)
    is parsed by :func:`parse_show_queuing_interface`."""
    data = _load_json(text)
    if isinstance(data, dict):
        queues: list[QueueCounter] = []
        pfc: list[PfcCounter] = []
        interfaces = data.get("interfaces")
        for name, rows in (interfaces.items() if isinstance(interfaces, dict) else []):
            port = long_interface(str(name))
            for row in rows if isinstance(rows, list) else []:
                if not isinstance(row, dict):
                    continue
                group = _num(row.get("qos-group"))
                if group is None:
                    continue
                queues.append(QueueCounter(port, group, "unicast", packets=_num(row.get("tx_pkts")),
                                           bytes=_num(row.get("tx_bytes")), dropped_packets=_num(row.get("drop_pkts")),
                                           ecn_marked_packets=_num(row.get("ecn_marked_pkts"))))
                if 0 <= group <= 7:
                    pfc.append(PfcCounter(port, "rx", group, _num(row.get("rx_pfc_ppp"))))
                    pfc.append(PfcCounter(port, "tx", group, _num(row.get("tx_pfc_ppp"))))
        return SwitchCounters(pfc=tuple(p for p in pfc if p.frames is not None), queues=tuple(queues))
    found: dict[tuple[str, int], dict[str, int]] = {}
    current: str | None = None
    qgroup: int | None = None
    tx = False
    for line in text.splitlines():
        if m := _QUEUING_HEAD.match(line):
            current, qgroup, tx = long_interface(m.group("port")), None, False
        elif line.strip() in ("TX Queuing", "RX Queuing"):
            tx = line.strip() == "TX Queuing"
        elif m := _QOS_GROUP.match(line):
            qgroup = int(m.group("g"))
        elif tx and current is not None and qgroup is not None and (m := _TX_STAT.match(line)):
            found.setdefault((current, qgroup), {})[_TX_FIELDS[m.group("label")]] = int(m.group("n"))
    return SwitchCounters(queues=tuple(
        QueueCounter(p, g, "unicast", packets=v.get("packets"), bytes=v.get("bytes"),
                     dropped_packets=v.get("dropped_packets"), ecn_marked_packets=v.get("ecn_marked_packets"))
        for (p, g), v in found.items()))


def parse_show_queuing_pfc_queue(text: str) -> SwitchCounters:
    """``show queuing pfc-queue`` (the PFC watchdog): per interface and qos-group, state, shutdown (storms detected),
    restored and dropped packets; text table or ``| json`` (``TABLE_pfc_queue``/``ROW_pfc_queue``). No public
    capture exists; the names are those of Cisco's watchdog documentation as fabricd's lab simulator prints them."""
    out: list[PfcwdCounter] = []
    data = _load_json(text)
    rows: list[dict[str, Any]]
    if data is not None:
        rows = list(parse_json_rows(data))
    else:
        rows = []
        for table in dashed_tables(text):
            if "QOS-GROUP" in table.columns:
                rows += [{"if_name": r.get("Interface"), "qos_group": r.get("QOS-GROUP"), "state": r.get("State"),
                          "shutdown": r.get("Shutdown"), "restored": r.get("Restored"),
                          "dropped": r.get("Total-pkts-dropped")} for r in table.rows]
    for row in rows:
        name, group = row.get("if_name"), _num(row.get("qos_group"))
        if not name or group is None:
            continue
        state = str(row.get("state") or "")
        status = "stormed" if state.lower() == "active" else "operational" if state else None
        out.append(PfcwdCounter(long_interface(str(name)), group, status, _num(row.get("shutdown")),
                                _num(row.get("restored")), tx_drop=_num(row.get("dropped"))))
    return SwitchCounters(pfcwd=tuple(out))


PARSERS = {
    "pfc": parse_show_interface_priority_flow_control,
    "queuing": parse_show_queuing,
    "pfcwd": parse_show_queuing_pfc_queue,
    "errors": parse_show_interface_counters_errors,
}
