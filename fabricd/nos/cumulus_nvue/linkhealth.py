"""NVUE transceiver DOM: ``nv show interface <port> transceiver`` (Cumulus Linux 5.11+), as a pure parser.

``key : value`` lines: ``temperature : 42.56 degrees C / 108.61 degrees F``, ``voltage : 3.2888 V`` and per channel
``ch-N-rx-power : 0.8625 mW / -0.64 dBm``, ``ch-N-tx-power``, ``ch-N-tx-bias-current : 6.750 mA``; power is read
in dBm, bias in amperes. A port without a module (or without diagnostics) has no readings. Capture:
tests/golden/readers/switch/cumulus_nvue/transceiver--*.txt (NVIDIA's NVUE reference).
"""

from __future__ import annotations

import re

from fabricd.readers.framing import framed_interface
from fabricd.readers.switch.empty import unread
from fabricd.readers.switch.model import LinkStat, LinkStatName, OpticQuantity, OpticReading, SwitchCounters

_LINE = re.compile(r"^\s*([a-z0-9-]+)\s*:\s*(.*?)\s*$")
_CH = re.compile(r"^ch-(\d+)-(rx-power|tx-power|tx-bias-current)$")
_DBM = re.compile(r"/\s*(-?inf|-?\d+(?:\.\d+)?)\s*dBm", re.IGNORECASE)
_NUM = re.compile(r"^(-?\d+(?:\.\d+)?)")
_KIND: dict[str, OpticQuantity] = {
    "rx-power": "rx_power_dbm",
    "tx-power": "tx_power_dbm",
    "tx-bias-current": "bias_amperes",
}


_MODULE_KEYS = frozenset({"identifier", "status", "error-status", "diagnostics-status", "cable-type", "vendor-name"})
"""Keys of the module description: an output with one of them and no reading is a port without diagnostics."""


@framed_interface
def parse_nv_show_interface_transceiver(text: str, interface: str | None = None) -> SwitchCounters:
    """DOM readings of one port's ``nv show interface <port> transceiver`` (the port from the caller, else from the
    capture's prompt line). A module description without readings is an empty answer; any other output that reads
    no reading is a problem naming its first line."""
    port = interface or ""
    out: list[OpticReading] = []
    described = False
    for line in text.splitlines():
        m = _LINE.match(line)
        if not m:
            continue
        key, value = m.group(1), m.group(2)
        described = described or key in _MODULE_KEYS
        ch = _CH.match(key)
        if ch:
            quantity = _KIND[ch.group(2)]
            if quantity == "bias_amperes":
                num = _NUM.match(value)
                reading = float(num.group(1)) / 1000.0 if num else None
            else:
                dbm = _DBM.search(value)
                reading = (
                    None if dbm is None else (float("-inf") if "inf" in dbm.group(1).lower() else float(dbm.group(1)))
                )
            out.append(OpticReading(port, quantity, int(ch.group(1)), reading))
        elif key in ("temperature", "voltage"):
            num = _NUM.match(value)
            out.append(
                OpticReading(
                    port,
                    "temperature_celsius" if key == "temperature" else "voltage_volts",
                    None,
                    float(num.group(1)) if num else None,
                )
            )
    return SwitchCounters(
        optics=tuple(out),
        problems=()
        if out or described
        else unread(
            "cumulus_nvue",
            f"nv show interface {port or '<port>'} transceiver",
            text,
            "'key : value' lines (identifier, temperature, ch-N-rx-power ...)",
        ),
    )


_CARRIER = re.compile(r"^\s*carrier-transitions\s+(\d+)\s*$")


@framed_interface
def parse_nv_show_interface_counters_flaps(text: str, interface: str | None = None) -> SwitchCounters:
    """Carrier transitions (flaps) of one port from ``nv show interface <port> counters``: its first table holds
    ``carrier-transitions  4`` (Cumulus Linux 5.6 user guide); the same key sits under ``link stats`` (or
    ``counters link``) in ``nv show interface <port>``, so any line ``carrier-transitions N`` is read. The rest of the
    output (packet, drop and error tables) is left to the other readers. An output without the key is a problem
    naming its first line. Capture: tests/golden/readers/switch/cumulus_nvue/flaps--*.txt."""
    port = interface or ""
    out = [
        LinkStat(port, "carrier_transitions", float(m.group(1)))
        for line in text.splitlines()
        if (m := _CARRIER.match(line))
    ]
    if not out:
        return SwitchCounters(
            problems=unread(
                "cumulus_nvue",
                f"nv show interface {port or '<port>'} counters",
                text,
                "a 'carrier-transitions  N' line",
            )
        )
    return SwitchCounters(link=tuple(out[:1]))


_PHY_LINE = re.compile(r"^\s*([a-z][a-z0-9-]*)\s+(\S+)\s*$")
_BIN = re.compile(r"^rs-num-corr-err-bin(\d+)$")
_BER_KEYS: dict[str, LinkStatName] = {"raw-ber": "pre_fec_ber", "effective-ber": "post_fec_ber"}


def _ratio(cell: str) -> float | None:
    try:
        value = float(cell)
    except ValueError:
        return None
    return value if value >= 0 else None


@framed_interface
def parse_nv_show_interface_link_phy_detail(text: str, interface: str | None = None) -> SwitchCounters:
    """FEC and BER of one port from ``nv show interface <port> link phy-detail`` (Cumulus Linux 5.10+, Spectrum-2 and
    later): ``raw-ber`` (the bit error ratio before FEC, ``1E-7``) and ``effective-ber`` (after FEC) are read as the
    pre-/post-FEC BER; the RS-FEC histogram ``rs-num-corr-err-binN`` counts the codewords that arrived with N
    corrected symbols, so the sum of bins 1 and up is the corrected codewords (derived: the output prints no such
    total). The output has no uncorrectable-codeword count (``effective-errors`` and ``symbol-errors`` count bits, not
    codewords), so NVUE has no ``fec_uncorrectable_codewords`` series; the per-lane ``raw-ber-laneN`` are not read.
    An output with none of the keys is a problem naming its first line. Capture:
    tests/golden/readers/switch/cumulus_nvue/fec--*.txt (NVIDIA's NVUE command reference)."""
    port = interface or ""
    out: list[LinkStat] = []
    corrected: float | None = None
    for line in text.splitlines():
        m = _PHY_LINE.match(line)
        if not m:
            continue
        key, cell = m.group(1), m.group(2)
        if key in _BER_KEYS and (ratio := _ratio(cell)) is not None:
            out.append(LinkStat(port, _BER_KEYS[key], ratio))
        elif (b := _BIN.match(key)) and int(b.group(1)) >= 1 and cell.isdigit():
            corrected = (corrected or 0.0) + float(cell)
    if corrected is not None:
        out.append(LinkStat(port, "fec_corrected_codewords", corrected))
    if not out:
        return SwitchCounters(
            problems=unread(
                "cumulus_nvue",
                f"nv show interface {port or '<port>'} link phy-detail",
                text,
                "'raw-ber  1E-7' / 'rs-num-corr-err-binN  N' lines",
            )
        )
    return SwitchCounters(link=tuple(out))
