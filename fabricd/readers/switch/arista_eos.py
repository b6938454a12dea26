"""Arista EOS show outputs, as pure parsers: text forms and ``| json`` (eAPI) forms.

- ``show interfaces counters queue detail``: real capture (ntc-templates); per port, traffic class, drop precedence
  and destination type (UC/MC): OutEnqPkts, OutEnqOctets, OutDropPkts, OutDropOctets. Drop-precedence rows of the
  same queue are summed.
- ``show priority-flow-control counters [detail] | json`` and text, ``show priority-flow-control counters watchdog |
  json`` and ``show qos interfaces ecn counters queue | json``: no public capture exists; the field names are EOS's
  documented ones (``rxFrames``/``txFrames``, ``stuckCount``/``recoveryCount`` as used by facebook/DNE-TaaC
  ``pfc_wd_health_check.py``, ``ecnMarkedPackets``) and the goldens say so.
"""

from __future__ import annotations

import json
import re
from typing import Any

from .model import DropCounter, PfcCounter, PfcwdCounter, QueueCounter, QueueKind, SwitchCounters
from .tables import to_int

PLATFORM = "arista_eos"

COMMANDS: dict[str, str] = {
    "pfc": "show priority-flow-control counters detail | json",
    "queue": "show interfaces counters queue detail",
    "ecn": "show qos interfaces ecn counters queue | json",
    "pfcwd": "show priority-flow-control counters watchdog | json",
}

_QROW = re.compile(
    r"^(?P<port>(?:Et|Ethernet|Po|Port-Channel)\S+)\s+TC(?P<tc>\d+)\s+(?P<dp>DP\S+)\s+(?P<dest>UC|MC|ALL)\s+"
    r"(?P<pkts>\S+)\s+(?P<octets>\S+)\s+(?P<dpkts>\S+)\s+(?P<doctets>\S+)\s*$"
)
_PORT = re.compile(r"^(?:Et|Ethernet|Po|Port-Channel)\d")
_KIND: dict[str, QueueKind] = {"UC": "unicast", "MC": "multicast", "ALL": "all"}


def long_interface(name: str) -> str:
    """``Et3/1/1`` -> ``Ethernet3/1/1``, ``Po10`` -> ``Port-Channel10`` (EOS prints both; labels use the long form)."""
    if name.startswith("Et") and not name.startswith("Ethernet"):
        return "Ethernet" + name[2:]
    if name.startswith("Po") and not name.startswith("Port-Channel"):
        return "Port-Channel" + name[2:]
    return name


def _load(text: str) -> Any:
    start = text.find("{")
    if start < 0:
        return {}
    try:
        return json.loads(text[start:])
    except ValueError:
        return {}


def _dict(value: Any) -> dict[str, Any]:
    """``value`` when it is a JSON object, else an empty one (damaged or unexpected output)."""
    return value if isinstance(value, dict) else {}


def _add(a: int | None, b: int | None) -> int | None:
    return b if a is None else a if b is None else a + b


def parse_show_interfaces_counters_queue_detail(text: str) -> SwitchCounters:
    """``show interfaces counters queue detail`` (egress section): per-queue enqueued and dropped packets/octets."""
    found: dict[tuple[str, int, QueueKind], QueueCounter] = {}
    for line in text.splitlines():
        m = _QROW.match(line.strip())
        if m is None:
            continue
        port, tc, kind = long_interface(m.group("port")), int(m.group("tc")), _KIND[m.group("dest")]
        row = QueueCounter(port, tc, kind, to_int(m.group("pkts")), to_int(m.group("octets")),
                           to_int(m.group("dpkts")), to_int(m.group("doctets")))
        old = found.get((port, tc, kind))
        if old is not None:
            row = QueueCounter(port, tc, kind, _add(old.packets, row.packets), _add(old.bytes, row.bytes),
                               _add(old.dropped_packets, row.dropped_packets),
                               _add(old.dropped_bytes, row.dropped_bytes))
        found[(port, tc, kind)] = row
    return SwitchCounters(queues=tuple(found.values()))


def parse_show_priority_flow_control_counters(text: str) -> SwitchCounters:
    """``show priority-flow-control counters [detail]`` in text or ``| json`` form.

    The plain form gives totals over all priorities (``priority`` None); ``detail`` gives one row per priority.
    """
    out: list[PfcCounter] = []
    data = _load(text)
    if isinstance(data, dict) and data:
        for name, entry in _dict(data.get("interfaces")).items():
            for prio, c in _dict(_dict(entry).get("priorities")).items():
                if str(prio).isdigit():
                    out.append(PfcCounter(name, "rx", int(prio), _int(_dict(c).get("rxFrames"))))
                    out.append(PfcCounter(name, "tx", int(prio), _int(_dict(c).get("txFrames"))))
        for name, c in _dict(data.get("interfaceCounters")).items():
            out.append(PfcCounter(name, "rx", None, _int(_dict(c).get("rxFrames"))))
            out.append(PfcCounter(name, "tx", None, _int(_dict(c).get("txFrames"))))
        return SwitchCounters(pfc=tuple(out))
    for line in text.splitlines():
        cells = line.split()
        if len(cells) == 4 and cells[1].isdigit() and _PORT.match(cells[0]):
            port, priority = long_interface(cells[0]), int(cells[1])
            out.append(PfcCounter(port, "rx", priority, to_int(cells[2])))
            out.append(PfcCounter(port, "tx", priority, to_int(cells[3])))
        elif len(cells) == 3 and _PORT.match(cells[0]):
            port = long_interface(cells[0])
            out.append(PfcCounter(port, "rx", None, to_int(cells[1])))
            out.append(PfcCounter(port, "tx", None, to_int(cells[2])))
    return SwitchCounters(pfc=tuple(out))


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        return to_int(value)
    return None


def parse_show_pfc_counters_watchdog(text: str) -> SwitchCounters:
    """``show priority-flow-control counters watchdog | json``: per interface and TX queue, ``stuckCount``
    (detected), ``recoveryCount`` (restored) and ``droppedPackets``. EOS omits interfaces with no event yet."""
    out: list[PfcwdCounter] = []
    data = _load(text)
    for name, entry in _dict(_dict(data).get("interfaces")).items():
        for queue, raw in _dict(_dict(entry).get("txQueues")).items():
            c = _dict(raw)
            if not str(queue).isdigit():
                continue
            detected, restored = _int(c.get("stuckCount")), _int(c.get("recoveryCount"))
            status = None
            if detected is not None and restored is not None:
                status = "stormed" if detected > restored else "operational"
            dropped = _int(c.get("droppedPackets"))
            out.append(PfcwdCounter(name, int(queue), status, detected, restored, tx_drop=dropped))
    return SwitchCounters(pfcwd=tuple(out))


def parse_show_qos_ecn_counters(text: str) -> SwitchCounters:
    """``show qos interfaces [IF] ecn counters queue | json``: ECN-marked packets per TX queue."""
    out: list[QueueCounter] = []
    data = _load(text)
    for name, entry in _dict(_dict(data).get("interfaces")).items():
        for queue, c in _dict(_dict(entry).get("txQueues")).items():
            if str(queue).isdigit():
                marked = _int(_dict(c).get("ecnMarkedPackets"))
                out.append(QueueCounter(name, int(queue), "unicast", ecn_marked_packets=marked))
    return SwitchCounters(queues=tuple(out))


_DROP = re.compile(r"^(?P<type>[A-Z])\s+(?P<chip>\S+)\s+(?P<name>\S+)\s*:\s*(?P<count>\d+)\s*:")


def parse_show_hardware_counter_drop(text: str) -> SwitchCounters:
    """``show hardware counter drop``: per-chip drop counters (type A adverse, C congestion, P packet processor)."""
    out = [
        DropCounter(m.group("chip"), m.group("name"), int(m.group("count")), m.group("type"))
        for line in text.splitlines()
        if (m := _DROP.match(line.strip()))
    ]
    return SwitchCounters(drops=tuple(out))


OPTIONAL_COMMANDS: dict[str, str] = {}
"""Commands whose failure does not fail the poll (none on EOS)."""

PARSERS = {
    "pfc": parse_show_priority_flow_control_counters,
    "queue": parse_show_interfaces_counters_queue_detail,
    "ecn": parse_show_qos_ecn_counters,
    "pfcwd": parse_show_pfc_counters_watchdog,
}
