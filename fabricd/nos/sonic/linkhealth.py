"""SONiC link health, as pure parsers: FEC counters and BER (``show interfaces counters fec-stats``, which runs
``portstat -f``) and transceiver DOM (``show interfaces transceiver eeprom --dom``, sfpshow).

``portstat -f`` prints one row per port: ``IFACE STATE FEC_CORR FEC_UNCORR FEC_SYMBOL_ERR`` and, on releases with
the port FEC BER design (sonic-net/SONiC doc/port_fec_ber), ``FEC_PRE_BER FEC_POST_BER`` (later also FLR columns,
not read). Counters carry thousands separators; ``N/A`` is None. Capture: tests/golden/readers/switch/sonic/
``fec--*.txt``.

``show interfaces transceiver eeprom --dom`` prints, per port, ``EthernetN: SFP EEPROM detected`` (or ``... Not
detected``) and indented ``key: value`` lines; DOM values are under ``ChannelMonitorValues`` (``RX1Power: 2.9217dBm``,
``TX1Bias: 44.9420mA``, ``TX1Power: ...``) and ``ModuleMonitorValues`` (``Temperature: 27.4336C``,
``Vcc: 3.2883Volts``); threshold sections are skipped. Bias is exported in amperes. Capture:
``transceiver--*.txt``.
"""

from __future__ import annotations

import re

from fabricd.readers.framing import framed
from fabricd.readers.switch.empty import unread
from fabricd.readers.switch.model import LinkStat, LinkStatName, OpticQuantity, OpticReading, SwitchCounters
from fabricd.readers.switch.tables import dashed_tables, keyed_rows, to_int

FEC_COLUMNS: dict[str, LinkStatName] = {
    "FEC_CORR": "fec_corrected_codewords",
    "FEC_UNCORR": "fec_uncorrectable_codewords",
    "FEC_SYMBOL_ERR": "fec_symbol_errors",
}
BER_COLUMNS: dict[str, LinkStatName] = {"FEC_PRE_BER": "pre_fec_ber", "FEC_POST_BER": "post_fec_ber"}


def _float(cell: str | None) -> float | None:
    try:
        return float((cell or "").replace(",", "").strip())
    except ValueError:
        return None


@framed
def parse_fec_stats(text: str) -> SwitchCounters:
    """``show interfaces counters fec-stats`` (``portstat -f``): FEC codeword counters and BER per port."""
    stats: list[LinkStat] = []
    for port, row in keyed_rows(dashed_tables(text), "IFACE", "FEC_CORR")[0]:
        for col, name in FEC_COLUMNS.items():
            if col in row:
                stats.append(LinkStat(port, name, _int(row[col])))
        for col, name in BER_COLUMNS.items():
            if col in row:
                stats.append(LinkStat(port, name, _float(row[col])))
    if not stats:
        return SwitchCounters(
            problems=unread(
                "sonic", "show interfaces counters fec-stats", text, "an IFACE  STATE  FEC_CORR  FEC_UNCORR ... table"
            )
        )
    return SwitchCounters(link=tuple(stats))


def _int(cell: str | None) -> float | None:
    value = to_int(cell)
    return None if value is None else float(value)


_PORT = re.compile(r"^(\S+): SFP EEPROM (detected|not detected|Not detected|is not applicable.*)", re.IGNORECASE)
_LANE = re.compile(r"^(RX|TX)(\d+)(Power|Bias)$", re.IGNORECASE)
_NUM = re.compile(r"^\s*(-?\d+(?:\.\d+)?)\s*(dBm|mA|C|Volts|V)?\s*$", re.IGNORECASE)


@framed
def parse_transceiver_dom(text: str) -> SwitchCounters:
    """``show interfaces transceiver eeprom --dom``: per port, the module temperature and Vcc and each lane's rx/tx
    power and bias. A port without a module (``SFP EEPROM Not detected``) has no readings; a text with no port
    block is an unknown shape."""
    out: list[OpticReading] = []
    port: str | None = None
    section = ""
    blocks = 0
    for line in text.splitlines():
        m = _PORT.match(line.strip())
        if m and not line[:1].isspace():
            port, section = m.group(1), ""
            blocks += 1
            continue
        if port is None or not line.strip():
            continue
        key, sep, value = line.strip().partition(":")
        key = key.strip()
        if not sep:
            continue
        if not value.strip():
            section = key
            continue
        if section not in ("ChannelMonitorValues", "ModuleMonitorValues"):
            continue
        num = _NUM.match(value)
        reading = float(num.group(1)) if num else None
        lane = _LANE.match(key)
        quantity: OpticQuantity
        if lane:
            kind = lane.group(3).lower()
            if kind == "bias":
                quantity = "bias_amperes"
                reading = reading / 1000.0 if reading is not None else None
            else:
                quantity = "rx_power_dbm" if lane.group(1).upper() == "RX" else "tx_power_dbm"
            out.append(OpticReading(port, quantity, int(lane.group(2)), reading))
        elif key.lower() == "temperature":
            out.append(OpticReading(port, "temperature_celsius", None, reading))
        elif key.lower() in ("vcc", "voltage"):
            out.append(OpticReading(port, "voltage_volts", None, reading))
    return SwitchCounters(
        optics=tuple(out),
        problems=()
        if out or blocks
        else unread(
            "sonic", "show interfaces transceiver eeprom --dom", text, "'EthernetN: SFP EEPROM detected' blocks"
        ),
    )


FLAPS_COMMAND = "show interfaces flap"


@framed
def parse_show_interfaces_flap(text: str) -> SwitchCounters:
    """``show interfaces flap`` (sonic-utilities #3724, 2025): per port ``Interface  Flap Count  Admin  Oper  Link Down
    TimeStamp(UTC)  Link Up TimeStamp(UTC)``. The flap count is ``flap_count`` in APPL_DB ``PORT_TABLE``, which
    orchagent increments on every oper-status change (sonic-swss #3052: "the flap count increments when the port
    operational status changes"), so it is read as carrier transitions. The command prints ``Never`` where the field
    is absent: orchagent's count starts at 0 and is written at the first flap, so ``Never`` is 0 (a counter that
    appears only at its first increment would hide that increment from ``increase()``). Any other cell that is not a
    whole number is left out. Capture: tests/golden/readers/switch/sonic/flaps--sonic-utilities-test.txt."""
    stats: list[LinkStat] = []
    for port, row in keyed_rows(dashed_tables(text), "Interface", "Flap Count")[0]:
        cell = row.get("Flap Count", "").strip()
        value = 0 if cell == "Never" else to_int(cell)
        if value is not None:
            stats.append(LinkStat(port, "carrier_transitions", float(value)))
    if not stats:
        return SwitchCounters(
            problems=unread("sonic", FLAPS_COMMAND, text, "an 'Interface  Flap Count  Admin  Oper ...' table")
        )
    return SwitchCounters(link=tuple(stats))
