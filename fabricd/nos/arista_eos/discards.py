"""Arista EOS ``show interfaces counters discards | json`` (eAPI), as a pure parser.

Shape (the eAPI output in ANTA's unit tests, VerifyInterfaceDiscards; capture in
tests/golden/readers/switch/arista_eos/discards--anta.txt)::

    {"inDiscardsTotal": 0,
     "interfaces": {"Ethernet2": {"outDiscards": 42, "inDiscards": 0}, ...},
     "outDiscardsTotal": 0}

Each port's ``inDiscards``/``outDiscards`` become the port's total discards received/sent (``reason`` empty, as the
other platforms' per-port totals); the device totals are left out (Prometheus sums the ports). A value that is not a
whole number is left out, never read as 0. A non-empty output without one port's counter is a problem.
"""

from __future__ import annotations

import json
from typing import Any

from fabricd.readers.common import Direction
from fabricd.readers.framing import framed
from fabricd.readers.switch.model import InterfaceCounter, SwitchCounters

COMMAND = "show interfaces counters discards | json"
_FIELDS: dict[str, Direction] = {"inDiscards": "rx", "outDiscards": "tx"}


@framed
def parse_show_interfaces_counters_discards(text: str) -> SwitchCounters:
    """Per-port discards from the eAPI JSON (EOS may print a banner line before the object)."""
    start = text.find("{")
    if start < 0:
        return _problem(text, "no JSON object in the output")
    try:
        data: Any = json.loads(text[start:])
    except ValueError as exc:
        return _problem(text, f"the JSON output does not parse ({exc})")
    ports = data.get("interfaces") if isinstance(data, dict) else None
    if not isinstance(ports, dict):
        return _problem(text, "no 'interfaces' object (expected interfaces.<port>.inDiscards/outDiscards)")
    out: list[InterfaceCounter] = []
    for port, counters in ports.items():
        if not isinstance(counters, dict):
            continue
        for key, direction in _FIELDS.items():
            value = counters.get(key)
            if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
                out.append(InterfaceCounter(str(port), direction, "discards", value))
    if not out and ports:
        return _problem(text, "no port has an integer inDiscards or outDiscards")
    return SwitchCounters(interfaces=tuple(out))


def _problem(text: str, why: str) -> SwitchCounters:
    if not text.strip():
        return SwitchCounters()
    head = " ".join(text.strip().split())[:60]
    return SwitchCounters(problems=(f"{COMMAND}: {why}; output starts {head!r}",))
