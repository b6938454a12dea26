"""NX-OS transceiver DOM: ``show interface transceiver details`` (text), as a pure parser.

Per port a block opens with the interface name at the start of a line (``Ethernet3/1``); its diagnostics table has
one row per quantity with the current measurement first (``Temperature   35.66 C``, ``Voltage  3.29 V``, ``Current
0.43 mA`` (laser bias), ``Tx Power  -14.05 dBm``, ``Rx Power  -30.45 dBm``), then thresholds and alarm marks
(``--``), which are not read; ``N/A`` is None. A multi-lane module prints one table per ``Lane Number:N``.
Capture: tests/golden/readers/switch/cisco_nxos/transceiver--*.txt (ntc-templates).
"""

from __future__ import annotations

import re

from fabricd.readers.framing import framed
from fabricd.readers.switch.empty import unread
from fabricd.readers.switch.model import OpticQuantity, OpticReading, SwitchCounters

_PORT = re.compile(r"^(Ethernet\S+|Eth\S+)\s*$")
_LANE = re.compile(r"^Lane Number:\s*(\d+)")
_ROW = re.compile(r"^\s+(Temperature|Voltage|Current|Tx Power|Rx Power)\s+(N/A|-?\d+(?:\.\d+)?)\b")
_KIND: dict[str, OpticQuantity] = {
    "Temperature": "temperature_celsius",
    "Voltage": "voltage_volts",
    "Current": "bias_amperes",
    "Tx Power": "tx_power_dbm",
    "Rx Power": "rx_power_dbm",
}


@framed
def parse_show_interface_transceiver_details(text: str) -> SwitchCounters:
    """DOM readings per port (and lane) of ``show interface transceiver details``. Port blocks without
    diagnostics (no module) are an empty answer; any other output that reads no row is a problem naming its first
    line."""
    out: list[OpticReading] = []
    port: str | None = None
    lane = 1
    blocks = 0
    for line in text.splitlines():
        m = _PORT.match(line)
        if m:
            port, lane = m.group(1), 1
            blocks += 1
            continue
        m = _LANE.match(line.strip())
        if m:
            lane = int(m.group(1))
            continue
        m = _ROW.match(line)
        if m is None or port is None:
            continue
        quantity = _KIND[m.group(1)]
        value = None if m.group(2) == "N/A" else float(m.group(2))
        if quantity == "bias_amperes" and value is not None:
            value /= 1000.0
        module_level = quantity in ("temperature_celsius", "voltage_volts")
        out.append(OpticReading(port, quantity, None if module_level else lane, value))
    return SwitchCounters(
        optics=tuple(out),
        problems=()
        if out or blocks
        else unread("cisco_nxos", "show interface transceiver details", text, "'EthernetX/Y' port blocks"),
    )
