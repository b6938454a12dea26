"""EOS transceiver DOM: ``show interfaces transceiver`` (text table), as a pure parser.

Columns ``Port  Temp (Celsius)  Voltage (Volts)  Bias Current (mA)  Optical Tx Power (dBm)  Optical Rx Power (dBm)
Last Update``, one row per interface (a breakout port's lanes are interfaces of their own, ``Et3/17/1``..); the
short names are spelled out (``Ethernet3/17/1``); ``N/A`` is None. No public capture of the ``| json`` form was
found, so the text form is polled. Capture: tests/golden/readers/switch/arista_eos/transceiver--*.txt (ntc-templates).
"""

from __future__ import annotations

import json
import re
from typing import Any

from fabricd.readers.framing import framed
from fabricd.readers.switch.empty import unread
from fabricd.readers.switch.model import LinkStat, OpticQuantity, OpticReading, SwitchCounters

_ROW = re.compile(r"^(Et\S+|Ethernet\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)(?:\s|$)")
_ORDER: tuple[OpticQuantity, ...] = ("temperature_celsius", "voltage_volts", "bias_amperes", "tx_power_dbm",
                                     "rx_power_dbm")


def _num(cell: str) -> float | None:
    try:
        return float(cell)
    except ValueError:
        return None


@framed
def parse_show_interfaces_transceiver(text: str) -> SwitchCounters:
    """DOM readings per interface of ``show interfaces transceiver``. The table's header with no row is an empty
    answer (no module with diagnostics); any other output that reads no row is a problem naming its first line."""
    out: list[OpticReading] = []
    header = False
    for line in text.splitlines():
        if re.match(r"^Port\s+(?:Temp\s+)?\(Celsius\)", line.strip()):
            header = True
            continue
        m = _ROW.match(line.strip())
        if not header or m is None:
            continue
        port = m.group(1)
        if port.startswith("Et") and not port.startswith("Ethernet"):
            port = "Ethernet" + port[2:]
        for quantity, cell in zip(_ORDER, m.groups()[1:], strict=True):
            value = _num(cell)
            if quantity == "bias_amperes" and value is not None:
                value /= 1000.0
            lane = None if quantity in ("temperature_celsius", "voltage_volts") else 1
            out.append(OpticReading(port, quantity, lane, value))
    if not out:
        return SwitchCounters(problems=() if header else unread(
            "arista_eos", "show interfaces transceiver", text, "a 'Port  (Celsius)  (Volts)  (mA) ...' table"))
    return SwitchCounters(optics=tuple(out))


FLAPS_COMMAND = "show interfaces | json"


@framed
def parse_show_interfaces_flaps(text: str) -> SwitchCounters:
    """Carrier transitions per port from ``show interfaces | json`` (eAPI): ``interfaces.<port>.interfaceCounters.
    linkStatusChanges``, the count of link state changes since the counters were cleared (a counter; each flap is
    two). The port is the ``interfaces`` key (not the ``name`` field, which a hand-edited capture may leave stale).
    Interfaces without ``interfaceCounters`` (Vlan, Loopback) are skipped; a value that is not a whole number is left
    out, never read as 0. Capture: tests/golden/readers/switch/arista_eos/flaps--napalm.txt (napalm's EOS test
    data)."""
    start = text.find("{")
    if start < 0:
        return _flap_problem(text, "no JSON object in the output")
    try:
        data: Any = json.loads(text[start:])
    except ValueError as exc:
        return _flap_problem(text, f"the JSON output does not parse ({exc})")
    ports = data.get("interfaces") if isinstance(data, dict) else None
    if not isinstance(ports, dict):
        return _flap_problem(text, "no 'interfaces' object (expected interfaces.<port>.interfaceCounters."
                                   "linkStatusChanges)")
    out: list[LinkStat] = []
    for port, detail in ports.items():
        counters = detail.get("interfaceCounters") if isinstance(detail, dict) else None
        if not isinstance(counters, dict):
            continue
        value = counters.get("linkStatusChanges")
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            out.append(LinkStat(str(port), "carrier_transitions", float(value)))
    if not out and ports:
        return _flap_problem(text, "no port has an integer interfaceCounters.linkStatusChanges")
    return SwitchCounters(link=tuple(out))


def _flap_problem(text: str, why: str) -> SwitchCounters:
    if not text.strip():
        return SwitchCounters()
    head = " ".join(text.strip().split())[:60]
    return SwitchCounters(problems=(f"{FLAPS_COMMAND}: {why}; output starts {head!r}",))
