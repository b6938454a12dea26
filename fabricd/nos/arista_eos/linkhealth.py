"""EOS transceiver DOM: ``show interfaces transceiver`` (text table), as a pure parser.

Columns ``Port  Temp (Celsius)  Voltage (Volts)  Bias Current (mA)  Optical Tx Power (dBm)  Optical Rx Power (dBm)
Last Update``, one row per interface (a breakout port's lanes are interfaces of their own, ``Et3/17/1``..); the
short names are spelled out (``Ethernet3/17/1``); ``N/A`` is None. No public capture of the ``| json`` form was
found, so the text form is polled. Capture: tests/golden/readers/switch/arista_eos/transceiver--*.txt (ntc-templates).
"""

from __future__ import annotations

import re
from typing import Any

from fabricd.readers.framing import framed
from fabricd.readers.switch.empty import unread
from fabricd.readers.switch.model import LinkStat, LinkStatName, OpticQuantity, OpticReading, SwitchCounters

from .eapi import is_count, top_object, unrecognised

_ROW = re.compile(r"^(Et\S+|Ethernet\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)(?:\s|$)")
_ORDER: tuple[OpticQuantity, ...] = (
    "temperature_celsius",
    "voltage_volts",
    "bias_amperes",
    "tx_power_dbm",
    "rx_power_dbm",
)


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
    return SwitchCounters(
        optics=tuple(out),
        problems=()
        if out or header
        else unread("arista_eos", "show interfaces transceiver", text, "a 'Port  (Celsius)  (Volts)  (mA) ...' table"),
    )


FLAPS_COMMAND = "show interfaces | json"


@framed
def parse_show_interfaces_flaps(text: str) -> SwitchCounters:
    """Carrier transitions per port from ``show interfaces | json`` (eAPI): ``interfaces.<port>.interfaceCounters.
    linkStatusChanges``, the count of link state changes since the counters were cleared (a counter; each flap is
    two). The port is the ``interfaces`` key (not the ``name`` field, which a hand-edited capture may leave stale).
    Interfaces without ``interfaceCounters`` (Vlan, Loopback) are skipped; a value that is not a whole number is left
    out, never read as 0. Capture: tests/golden/readers/switch/arista_eos/flaps--napalm.txt (napalm's EOS test
    data)."""
    ports = top_object(
        text, FLAPS_COMMAND, key="interfaces", expected="interfaces.<port>.interfaceCounters.linkStatusChanges"
    )
    if isinstance(ports, SwitchCounters):
        return ports
    out: list[LinkStat] = []
    for port, detail in ports.items():
        counters = detail.get("interfaceCounters") if isinstance(detail, dict) else None
        if not isinstance(counters, dict):
            continue
        value = counters.get("linkStatusChanges")
        if is_count(value):
            out.append(LinkStat(str(port), "carrier_transitions", float(value)))
    if not out and ports:
        return unrecognised(FLAPS_COMMAND, text, "no port has an integer interfaceCounters.linkStatusChanges")
    return SwitchCounters(link=tuple(out))


FEC_COMMAND = "show interfaces phy detail | json"
_FEC_KEYS: dict[str, LinkStatName] = {
    "correctedCodewords": "fec_corrected_codewords",
    "uncorrectedCodewords": "fec_uncorrectable_codewords",
}


def _phy_value(node: Any) -> float | None:
    """``{"value": N, "changes": .., "lastChange": ..}`` -> N (a number, not a bool), else None."""
    value = node.get("value") if isinstance(node, dict) else None
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0:
        return float(value)
    return None


@framed
def parse_show_interfaces_phy_detail(text: str) -> SwitchCounters:
    """FEC codeword counters and pre-FEC BER per port from ``show interfaces phy detail | json`` (eAPI):
    ``interfacePhyStatuses.<port>.phyStatuses[].fec.correctedCodewords.value``, ``...uncorrectedCodewords.value``
    (Reed-Solomon FEC; counters) and ``phyStatuses[].preFecBer.value`` (a ratio). Only the first PHY of a port is
    read (the one facing the link). UNVERIFIED: no public capture of this output was found; the key paths are the
    ones ANTA's VerifyInterfacesBER reads (aristanetworks/anta anta/tests/interfaces.py). A port without FEC (or a
    Fire-code FEC, counted per lane) has no series; an output with ports and none of the keys is a problem."""
    ports = top_object(
        text,
        FEC_COMMAND,
        key="interfacePhyStatuses",
        expected="interfacePhyStatuses.<port>.phyStatuses[].fec.correctedCodewords.value",
    )
    if isinstance(ports, SwitchCounters):
        return ports
    out: list[LinkStat] = []
    for port, detail in ports.items():
        phys = detail.get("phyStatuses") if isinstance(detail, dict) else None
        phy = phys[0] if isinstance(phys, list) and phys and isinstance(phys[0], dict) else None
        if phy is None:
            continue
        fec = phy.get("fec")
        if isinstance(fec, dict):
            for key, name in _FEC_KEYS.items():
                if key in fec and (value := _phy_value(fec[key])) is not None:
                    out.append(LinkStat(str(port), name, value))
        if "preFecBer" in phy and (ber := _phy_value(phy["preFecBer"])) is not None:
            out.append(LinkStat(str(port), "pre_fec_ber", ber))
    if not out and any(isinstance(d, dict) and d.get("phyStatuses") for d in ports.values()):
        return unrecognised(
            FEC_COMMAND, text, "no port has fec.correctedCodewords, fec.uncorrectedCodewords or preFecBer values"
        )
    return SwitchCounters(link=tuple(out))
