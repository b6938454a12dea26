"""EOS transceiver DOM: ``show interfaces transceiver`` (text table), as a pure parser.

Columns ``Port  Temp (Celsius)  Voltage (Volts)  Bias Current (mA)  Optical Tx Power (dBm)  Optical Rx Power (dBm)
Last Update``, one row per interface (a breakout port's lanes are interfaces of their own, ``Et3/17/1``..); the
short names are spelled out (``Ethernet3/17/1``); ``N/A`` is None. No public capture of the ``| json`` form was
found, so the text form is polled. Capture: tests/golden/readers/switch/arista_eos/transceiver--*.txt (ntc-templates).
"""

from __future__ import annotations

import re

from fabricd.readers.framing import framed
from fabricd.readers.switch.empty import unread
from fabricd.readers.switch.model import OpticQuantity, OpticReading, SwitchCounters

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
