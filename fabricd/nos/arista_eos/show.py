"""Arista EOS show outputs, as pure parsers: text forms and ``| json`` (eAPI) forms.

What each parser reads, and what it was verified against (docs/platforms.md lists the same):

- ``show interfaces counters queue detail`` (text): a real capture (ntc-templates); per port, traffic class, drop
  precedence and destination type (UC/MC): OutEnqPkts, OutEnqOctets, OutDropPkts, OutDropOctets. Drop-precedence
  rows of the same queue are summed. **verified**.
- ``show qos interfaces ecn counters queue | json``: ``intfQueueCounters.<if>.queueCounters.<txq>`` holds the count
  of ECN-marked packets as a *string*, ``"-"`` for a queue without ECN (the real eAPI output in ANTA's unit tests,
  VerifyInterfacesECNCounters). **verified**.
- ``show priority-flow-control counters | json``: ``interfaceCounters.<if>.rxFrames/txFrames``, totals over all
  priorities (real eAPI output in ANTA's unit tests, VerifyInterfacesPFCCounters). **verified**. The ``detail`` form
  fabricd polls, ``interfaces.<if>.priorities.<p>.rxFrames/txFrames``: the key path a public production script reads
  (facebook/DNE-TaaC ``dsf_pfc_health_check.py``); no capture: **unverified**.
- ``show priority-flow-control counters watchdog | json``: ``interfaces.<if>.txQueues.<q>.stuckCount/
  recoveryCount``, and ``{"interfaces": {}}`` until a first watchdog event (facebook/DNE-TaaC
  ``pfc_wd_health_check.py``); no capture: **unverified**.
- ``show hardware counter drop`` (text): a real capture (ntc-templates). **verified**.

A parser that recognises nothing in a non-empty output returns a problem (the collector then reports failure),
never an empty success.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from fabricd.nos.gnmi import counter
from fabricd.readers.framing import framed
from fabricd.readers.switch.model import (
    DropCounter,
    InterfaceCounter,
    PfcCounter,
    PfcwdCounter,
    QueueCounter,
    QueueKind,
    SwitchCounters,
)
from fabricd.readers.switch.tables import to_int

from .discards import parse_show_interfaces_counters_discards
from .eapi import document, unrecognised
from .linkhealth import parse_show_interfaces_flaps, parse_show_interfaces_phy_detail, parse_show_interfaces_transceiver

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


def _dict(value: Any) -> dict[str, Any]:
    """``value`` when it is a JSON object, else an empty one (damaged or unexpected output)."""
    return value if isinstance(value, dict) else {}


def _per_port(data: dict[str, Any], key: str, sub: str) -> Iterator[tuple[str, str, Any]]:
    """(port, inner key, value) of every ``data[key].<port>.<sub>.<inner>`` (what is not an object reads empty)."""
    for name, entry in _dict(data.get(key)).items():
        for inner, value in _dict(_dict(entry).get(sub)).items():
            yield name, str(inner), value


def _per_queue(text: str, role: str, key: str, sub: str) -> list[tuple[str, int, Any]] | SwitchCounters:
    """(port, queue, value) of every numbered queue ``<key>.<port>.<sub>.<queue>`` (:func:`_per_port`) of the
    role's JSON answer; an inner key that is not a queue number is skipped. The problem when the answer is not
    JSON holding ``key``."""
    data = document(text, COMMANDS[role], keys=(key,), missing=f"no {key!r} in the JSON")
    if isinstance(data, SwitchCounters):
        return data
    return [(name, int(queue), value) for name, queue, value in _per_port(data, key, sub) if queue.isdigit()]


def _add(a: int | None, b: int | None) -> int | None:
    return b if a is None else a if b is None else a + b


_TC = re.compile(r"^TC(\d+)$")
_QUEUE_KINDS: dict[str, QueueKind] = {"ucastQueues": "unicast", "mcastQueues": "multicast"}


def _tc_sums(counters: Any) -> tuple[int | None, int | None, int | None, int | None]:
    """enqueued packets/bytes and dropped packets/bytes of one traffic class: its own keys, its ``countersSum``, or
    the sum over its ``dropPrecedences``."""
    c = _dict(counters)
    if "countersSum" in c:
        c = _dict(c["countersSum"])
    parts = [_dict(v) for v in _dict(c.get("dropPrecedences")).values()] or [c]
    out: list[int | None] = []
    for key in ("enqueuedPackets", "enqueuedBytes", "droppedPackets", "droppedBytes"):
        total: int | None = None
        for part in parts:
            total = _add(total, _int(part.get(key)))
        out.append(total)
    return out[0], out[1], out[2], out[3]


def _queue_json(data: dict[str, Any]) -> SwitchCounters:
    """The ``| json`` shapes of EOS queue counters (key paths from ANTA's VerifyInterfacesEgressQueueDrops and
    VerifyInterfacesVoqAndEgressQueueDrops and Arista's snmpext sample; **unverified** against a device capture in
    this repository): ``egressQueueCounters.interfaces.<if>.ucastQueues|mcastQueues.trafficClasses.TCn
    [.dropPrecedences.DPn]``, ``interfaces.<if>.trafficClasses.TCn.egressQueueCounters|ingressVoqCounters
    .countersSum`` and ``ingressVoqCounters.interfaces.<if>.trafficClasses.TCn``. Egress counters are queue rows
    (``all`` when the output does not split unicast and multicast); ingress VOQ drops are interface discards with
    reason ``voq_tc<n>``."""
    queues: list[QueueCounter] = []
    ifs: list[InterfaceCounter] = []

    def egress(port: str, kind: QueueKind, classes: Any) -> None:
        for tc, counters in _dict(classes).items():
            if (m := _TC.match(str(tc))) is not None:
                pk, by, dp, db = _tc_sums(counters)
                queues.append(QueueCounter(long_interface(port), int(m.group(1)), kind, pk, by, dp, db))

    def voq(port: str, tc: str, counters: Any) -> None:
        if (m := _TC.match(str(tc))) is not None and (dropped := _tc_sums(counters)[2]) is not None:
            ifs.append(InterfaceCounter(long_interface(port), "rx", "discards", dropped, f"voq_tc{m.group(1)}"))

    for port, entry in _dict(_dict(data.get("egressQueueCounters")).get("interfaces")).items():
        for key, kind in _QUEUE_KINDS.items():
            egress(port, kind, _dict(_dict(entry).get(key)).get("trafficClasses"))
    for port, entry in _dict(_dict(data.get("ingressVoqCounters")).get("interfaces")).items():
        for tc, counters in _dict(_dict(entry).get("trafficClasses")).items():
            voq(port, tc, counters)
    for port, entry in _dict(data.get("interfaces")).items():
        classes = _dict(_dict(entry).get("trafficClasses"))
        egress(
            port,
            "all",
            {tc: _dict(c).get("egressQueueCounters") for tc, c in classes.items() if "egressQueueCounters" in _dict(c)},
        )
        for tc, c in classes.items():
            if "ingressVoqCounters" in _dict(c):
                voq(port, tc, _dict(c)["ingressVoqCounters"])
    if not queues and not ifs:
        return unrecognised(
            COMMANDS["queue"] + " | json",
            json.dumps(data),
            "no egressQueueCounters/ingressVoqCounters/interfaces.<if>.trafficClasses in the JSON",
        )
    return SwitchCounters(queues=tuple(queues), interfaces=tuple(ifs))


@framed
def parse_show_interfaces_counters_queue_detail(text: str) -> SwitchCounters:
    """``show interfaces counters queue detail`` (egress section): per-queue enqueued and dropped packets/octets; the
    ``| json`` forms are read by :func:`_queue_json`."""
    if text.lstrip().startswith("{"):
        data = document(text, COMMANDS["queue"])
        return data if isinstance(data, SwitchCounters) else _queue_json(data)
    found: dict[tuple[str, int, QueueKind], QueueCounter] = {}
    for line in text.splitlines():
        m = _QROW.match(line.strip())
        if m is None:
            continue
        port, tc, kind = long_interface(m.group("port")), int(m.group("tc")), _KIND[m.group("dest")]
        row = QueueCounter(
            port,
            tc,
            kind,
            to_int(m.group("pkts")),
            to_int(m.group("octets")),
            to_int(m.group("dpkts")),
            to_int(m.group("doctets")),
        )
        old = found.get((port, tc, kind))
        if old is not None:
            row = QueueCounter(
                port,
                tc,
                kind,
                _add(old.packets, row.packets),
                _add(old.bytes, row.bytes),
                _add(old.dropped_packets, row.dropped_packets),
                _add(old.dropped_bytes, row.dropped_bytes),
            )
        found[(port, tc, kind)] = row
    if not found:
        return unrecognised(COMMANDS["queue"], text, "no 'Port TCn DPn UC|MC ...' row")
    return SwitchCounters(queues=tuple(found.values()))


@framed
def parse_show_priority_flow_control_counters(text: str) -> SwitchCounters:
    """``show priority-flow-control counters [detail]`` in ``| json`` form or text.

    ``| json``: ``interfaceCounters.<if>.rxFrames/txFrames`` (the plain form: totals over all priorities, ``priority``
    None) and ``interfaces.<if>.priorities.<p>.rxFrames/txFrames`` (``detail``: one row per priority). Text:
    ``Port RxPfc TxPfc`` rows (plain) or ``Port Priority RxPfc TxPfc`` (detail; written from EOS's documented
    columns, no capture).
    """
    out: list[PfcCounter] = []
    if text.lstrip().startswith("{"):
        data = document(text, COMMANDS["pfc"])
        if isinstance(data, SwitchCounters):
            return data
        if "interfaces" not in data and "interfaceCounters" not in data:
            return unrecognised(COMMANDS["pfc"], text, "neither 'interfaces' nor 'interfaceCounters' in the JSON")
        for name, prio, c in _per_port(data, "interfaces", "priorities"):
            if prio.isdigit():
                out.append(PfcCounter(name, "rx", int(prio), _int(_dict(c).get("rxFrames"))))
                out.append(PfcCounter(name, "tx", int(prio), _int(_dict(c).get("txFrames"))))
        for name, c in _dict(data.get("interfaceCounters")).items():
            out.append(PfcCounter(name, "rx", None, _int(_dict(c).get("rxFrames"))))
            out.append(PfcCounter(name, "tx", None, _int(_dict(c).get("txFrames"))))
        return SwitchCounters(pfc=tuple(out))
    for line in text.splitlines():
        cells = line.split()
        if len(cells) < 3 or to_int(cells[-1]) is None or to_int(cells[-2]) is None:
            continue  # a row ends in two counters (``Ethernet2/2 is up`` is not one)
        if len(cells) == 4 and cells[1].isdigit() and _PORT.match(cells[0]):
            port, priority = long_interface(cells[0]), int(cells[1])
            out.append(PfcCounter(port, "rx", priority, to_int(cells[2])))
            out.append(PfcCounter(port, "tx", priority, to_int(cells[3])))
        elif len(cells) == 3 and _PORT.match(cells[0]):
            port = long_interface(cells[0])
            out.append(PfcCounter(port, "rx", None, to_int(cells[1])))
            out.append(PfcCounter(port, "tx", None, to_int(cells[2])))
    if not out:
        return unrecognised(COMMANDS["pfc"], text, "no 'Port [Priority] RxPfc TxPfc' row")
    return SwitchCounters(pfc=tuple(out))


def _int(value: Any) -> int | None:
    """An eAPI count: a JSON number (:func:`~fabricd.nos.gnmi.counter`), or text (``15,437``; ``-`` is None)."""
    return to_int(value) if isinstance(value, str) else counter(value)


def pfcwd_counter(port: str, queue: int, detected: int | None, restored: int | None) -> PfcwdCounter:
    """A TX queue's watchdog from its stuck (detected) and recovery (restored) counts: ``stormed`` while detected >
    restored, else ``operational``; no status when either count is absent. The same over SSH and gNMI."""
    status = None
    if detected is not None and restored is not None:
        status = "stormed" if detected > restored else "operational"
    return PfcwdCounter(port, queue, status, detected, restored)


@framed
def parse_show_pfc_counters_watchdog(text: str) -> SwitchCounters:
    """``show priority-flow-control counters watchdog | json``: per interface and TX queue, ``stuckCount``
    (detected) and ``recoveryCount`` (restored). EOS prints ``{"interfaces": {}}`` until a first watchdog event and
    omits interfaces with no event yet (facebook/DNE-TaaC ``pfc_wd_health_check.py``): that is an empty, valid
    answer; JSON without ``interfaces`` is not."""
    rows = _per_queue(text, "pfcwd", "interfaces", "txQueues")
    if isinstance(rows, SwitchCounters):
        return rows
    return SwitchCounters(
        pfcwd=tuple(
            pfcwd_counter(name, queue, _int(_dict(raw).get("stuckCount")), _int(_dict(raw).get("recoveryCount")))
            for name, queue, raw in rows
        )
    )


@framed
def parse_show_qos_ecn_counters(text: str) -> SwitchCounters:
    """``show qos interfaces [IF] ecn counters queue | json``: ECN-marked packets per TX queue.

    ``intfQueueCounters.<if>.queueCounters.<txq>`` is the count as a string; ``"-"`` marks a queue without ECN
    configured, which is skipped (an absent counter, not 0).
    """
    rows = _per_queue(text, "ecn", "intfQueueCounters", "queueCounters")
    if isinstance(rows, SwitchCounters):
        return rows
    marks = ((name, queue, _int(value)) for name, queue, value in rows)
    return SwitchCounters(
        queues=tuple(QueueCounter(name, q, "unicast", ecn_marked_packets=m) for name, q, m in marks if m is not None)
    )


_DROP = re.compile(r"^(?P<type>[A-Z])\s+(?P<chip>\S+)\s+(?P<name>\S+)\s*:\s*(?P<count>\d+)\s*:")


@framed
def parse_show_hardware_counter_drop(text: str) -> SwitchCounters:
    """``show hardware counter drop``: per-chip drop counters (type A adverse, C congestion, P packet processor)."""
    out = [
        DropCounter(m.group("chip"), m.group("name"), int(m.group("count")), m.group("type"))
        for line in text.splitlines()
        if (m := _DROP.match(line.strip()))
    ]
    if not out and "Summary" not in text:
        return unrecognised("show hardware counter drop", text, "no 'Type Chip CounterName : Count :' row")
    return SwitchCounters(drops=tuple(out))


OPTIONAL_COMMANDS: dict[str, str] = {
    "discards": "show interfaces counters discards | json",
    "transceiver": "show interfaces transceiver",
    "flaps": "show interfaces | json",
    "fec": "show interfaces phy detail | json",
}
"""Commands whose failure does not fail the poll: per-port discards (fabricd.nos.arista_eos.discards), which older
releases and some platforms lack; transceiver DOM (fabricd.nos.arista_eos.linkhealth, text: no public capture of
its ``| json`` form), which a virtual switch answers without modules; link status changes per port (flaps,
``interfaceCounters.linkStatusChanges``); FEC codewords and pre-FEC BER per port (``phy detail``, unverified: key
paths from ANTA's VerifyInterfacesBER, no public capture)."""

PARSERS = {
    "pfc": parse_show_priority_flow_control_counters,
    "queue": parse_show_interfaces_counters_queue_detail,
    "ecn": parse_show_qos_ecn_counters,
    "pfcwd": parse_show_pfc_counters_watchdog,
    "discards": parse_show_interfaces_counters_discards,
    "transceiver": parse_show_interfaces_transceiver,
    "flaps": parse_show_interfaces_flaps,
    "fec": parse_show_interfaces_phy_detail,
}
