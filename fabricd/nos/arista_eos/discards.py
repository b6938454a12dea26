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

from fabricd.readers.common import Direction
from fabricd.readers.framing import framed
from fabricd.readers.switch.model import InterfaceCounter, SwitchCounters

from .eapi import is_count, top_object, unrecognised

COMMAND = "show interfaces counters discards | json"
_FIELDS: dict[str, Direction] = {"inDiscards": "rx", "outDiscards": "tx"}


@framed
def parse_show_interfaces_counters_discards(text: str) -> SwitchCounters:
    """Per-port discards from the eAPI JSON (EOS may print a banner line before the object)."""
    ports = top_object(text, COMMAND, key="interfaces", expected="interfaces.<port>.inDiscards/outDiscards")
    if isinstance(ports, SwitchCounters):
        return ports
    out: list[InterfaceCounter] = []
    for port, counters in ports.items():
        if not isinstance(counters, dict):
            continue
        for key, direction in _FIELDS.items():
            value = counters.get(key)
            if is_count(value):
                out.append(InterfaceCounter(str(port), direction, "discards", value))
    if not out and ports:
        return unrecognised(COMMAND, text, "no port has an integer inDiscards or outDiscards")
    return SwitchCounters(interfaces=tuple(out))
