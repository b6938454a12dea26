"""Transceiver DOM from a hex dump of the module EEPROM, as ``ethtool -m`` prints it when it does not decode the module.

``ethtool -m <if>`` prints ``Offset  Values`` and rows ``0x0000:  18 40 ...`` (16 bytes a row) instead of
``Name : value`` lines when it does not know the module's memory map (ethtool's ``dump_hex``; netlink/
module-eeprom.c ``eeprom_parse``: "If we cannot recognize the memory map, default to dumping the first 128 bytes in
hex"), when the driver's one-byte identifier read comes back wrong (the ice bug in tests/golden/readers/host/
ethtool-m-hex-qsfp28-dac-ice-zeroed.txt), and always with ``ethtool -m <if> hex on`` (the whole EEPROM the driver
exposes: 256 bytes for SFF-8636, 640 with upper pages 01h-03h; 512 for SFF-8472, A2h from offset 0x100).

When ethtool decodes which module (from its NEWS file, minimaxwell/ethtool NEWS at 7b296e1d): SFF-8472 diagnostics
since 3.7, SFF-8636 (QSFP+/QSFP28) since 4.8, QSFP-DD identity since 5.9 but CMIS diagnostics only since 5.16, OSFP
since 5.17, the other CMIS identifiers since 6.6 ("support for more CMIS transceiver modules").

Decoded here, from the bytes the dump holds, by the public specs (SFF-8024 Table 4-1 identifiers; units as each spec
gives them: temperature signed 1/256 degC, voltage 100 uV, bias 2 uA, optical power 0.1 uW):

- SFF-8636 (identifiers 0x0c/0x0d/0x11), lower page 00h: "Free Side Monitoring Values" (bytes 22-23 temperature,
  26-27 supply voltage) and "Channel Monitoring Values" (34-41 Rx power, 42-49 Tx bias, 50-57 Tx power, lanes 1-4).
  SFF-8636 has no bit saying monitors exist; like ethtool (qsfp.c ``sff8636_show_dom``: "A valid temperature reading
  is used as existence for TX/RX power") a temperature of 0x0000 or 0xffff means the module has none (a copper
  cable), and nothing is read.
- SFF-8472 (0x03 SFP, 0x02 soldered, 0x01 GBIC): only when A0h byte 92 ("Diagnostic Monitoring Type") says
  diagnostics are implemented (bit 6) and internally calibrated (bit 5), from A2h bytes 96-105 ("A/D Values and
  Status Bits": temperature, Vcc, Tx bias, Tx power, Rx power) at dump offset 0x100 + n. Externally calibrated
  modules (bit 4) need the A2h calibration constants: not decoded, said so.
- CMIS (0x18 QSFP-DD, 0x19 OSFP, 0x1b DSFP, 0x1e-0x20; memory map: CMIS Rev. 5 section 8.1.1, Figure 8-1), lower
  page 00h "Module-Level Monitors": bytes 14-15 TempMonValue and 16-17 VccMonValue. The lane monitors (Tx power, Tx
  bias, Rx power) are on page 11h bytes 154-201, which no hex dump of ethtool holds (its ioctl dump is the lower page,
  page 00h and, for a paged module, page 01h: cmis.c ``cmis_memory_map_init_buf``): lane values are MISSING, never 0.
  A flat-memory module (byte 2 bit 7: a passive cable) has no diagnostics; ethtool prints none for it
  (cmis.c ``cmis_show_dom``: "only relevant when the module memory model is paged and not flat"), nor does fabricd.

What could not be read is said in :attr:`ModuleDom.note` (identifier, what is missing, the ethtool version that
decodes it), not raised: a module ethtool cannot decode is not a broken host. Verification: SFF-8636 and SFF-8472
against real dumps (tests/golden/readers/host/ethtool-m-hex-*.txt); no public hex dump of a CMIS module was found,
so the CMIS decoding is **unverified** (spec only).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Literal

from fabricd.readers.switch.model import OpticQuantity, OpticReading

_ROW = re.compile(r"^\s*0x(?P<offset>[0-9a-f]{1,8}):\s+(?P<bytes>(?:[0-9a-f]{2}(?:\s+|$))+)$", re.IGNORECASE)
_HEADER = re.compile(r"^\s*Offset\s+Values\s*$", re.IGNORECASE)

Missing = Literal["lanes", "all"]

SFF8636 = {0x0C: "QSFP", 0x0D: "QSFP+", 0x11: "QSFP28"}
SFF8472 = {0x01: "GBIC", 0x02: "soldered module", 0x03: "SFP/SFP+/SFP28"}
CMIS = {
    0x18: "QSFP-DD",
    0x19: "OSFP",
    0x1B: "DSFP",
    0x1E: "QSFP+ or later with CMIS",
    0x1F: "SFP-DD with CMIS",
    0x20: "SFP+ or later with CMIS",
}
CMIS_ETHTOOL = {0x18: "5.16", 0x19: "5.17"}
"""The ethtool release whose NEWS first lists diagnostics for the identifier (others: 6.6)."""


@dataclass(frozen=True, slots=True)
class ModuleDom:
    """What ``ethtool -m`` text gave: the readings; the module identifier (``0x18 (QSFP-DD)``; None where the text
    does not say); ``missing`` (``lanes`` or ``all``) when monitors the module has could not be read; and, for a hex
    dump, ``note``: what fabricd made of it (why a monitor is not there, which ethtool decodes it)."""

    readings: tuple[OpticReading, ...]
    identifier: str | None = None
    missing: Missing | None = None
    note: str | None = None


def hex_dump(lines: list[tuple[int, str]]) -> dict[int, int] | None:
    """The bytes of an ethtool hex dump by offset, or None when the lines hold no ``Offset Values`` header and no
    ``0xNNNN:`` row (not a hex dump). Lines before the header (``netlink warning: ...``) are not read."""
    data: dict[int, int] = {}
    header = False
    for _, line in lines:
        if _HEADER.match(line):
            header = True
            continue
        m = _ROW.match(line)
        if m is None:
            continue
        base = int(m.group("offset"), 16)
        for i, byte in enumerate(m.group("bytes").split()):
            data[base + i] = int(byte, 16)
    return data if data or header else None


def u16(data: dict[int, int], at: int) -> int | None:
    """The big-endian 16-bit value at ``at`` (every monitor in these specs is one), None where the dump lacks it."""
    hi, lo = data.get(at), data.get(at + 1)
    return None if hi is None or lo is None else hi << 8 | lo


def celsius(raw: int) -> float:
    """A temperature monitor: signed, 1/256 degC."""
    return (raw - 0x10000 if raw & 0x8000 else raw) / 256.0


def dbm(raw: int) -> float:
    """An optical power monitor (0.1 uW units) in dBm, to ethtool's two decimals; 0 (no light) is -inf."""
    return -math.inf if raw == 0 else round(10 * math.log10(raw / 10000.0), 2)


_Decoded = tuple[list[OpticReading], str | None, Missing | None]
"""Readings, why some are not there (None: nothing to say), and what is missing that the module has."""


def _module_level(port: str, data: dict[int, int], temp_at: int, vcc_at: int) -> list[OpticReading]:
    temp, vcc = u16(data, temp_at), u16(data, vcc_at)
    out = []
    if temp is not None:
        out.append(OpticReading(port, "temperature_celsius", None, celsius(temp)))
    if vcc is not None:
        out.append(OpticReading(port, "voltage_volts", None, vcc / 10000.0))
    return out


def _lane(port: str, quantity: OpticQuantity, lane: int, raw: int | None) -> list[OpticReading]:
    if raw is None:
        return []
    value = raw * 2e-6 if quantity == "bias_amperes" else dbm(raw)
    return [OpticReading(port, quantity, lane, value)]


def _no_monitors(data: dict[int, int], temp_at: int) -> bool:
    return u16(data, temp_at) in (0x0000, 0xFFFF)


def _sff8636(port: str, data: dict[int, int]) -> _Decoded:
    if _no_monitors(data, 22):
        return [], "no valid temperature (bytes 22-23 are 0x0000 or 0xffff): the module has no monitors", None
    out = _module_level(port, data, 22, 26)
    for lane in range(4):
        out += _lane(port, "rx_power_dbm", lane + 1, u16(data, 34 + 2 * lane))
        out += _lane(port, "bias_amperes", lane + 1, u16(data, 42 + 2 * lane))
        out += _lane(port, "tx_power_dbm", lane + 1, u16(data, 50 + 2 * lane))
    if len(out) < 14:
        return out, "the dump ends before byte 58 (lane monitors)", "lanes" if out else "all"
    return out, None, None


def _sff8472(port: str, data: dict[int, int]) -> _Decoded:
    kind = data.get(92)
    if kind is None:
        return [], "the dump ends before A0h byte 92 (Diagnostic Monitoring Type)", "all"
    if not kind & 0x40:
        return [], "the module does not implement digital diagnostics (A0h byte 92 bit 6 clear)", None
    if not kind & 0x20:
        return [], "not internally calibrated (A0h byte 92 bit 5 clear): external calibration is not decoded", "all"
    a2 = {k - 0x100: v for k, v in data.items() if k >= 0x100}
    if u16(a2, 96) is None:
        return [], "the dump holds no A2h page (ethtool -m <if> hex on prints it)", "all"
    out = _module_level(port, a2, 96, 98)
    out += _lane(port, "bias_amperes", 1, u16(a2, 100))
    out += _lane(port, "tx_power_dbm", 1, u16(a2, 102))
    out += _lane(port, "rx_power_dbm", 1, u16(a2, 104))
    return out, None, None


def _cmis(ident: int, port: str, data: dict[int, int]) -> _Decoded:
    if data.get(2, 0) & 0x80:
        return [], "flat memory (byte 2 bit 7): a passive cable without diagnostics", None
    out = [] if _no_monitors(data, 14) else _module_level(port, data, 14, 16)
    version = CMIS_ETHTOOL.get(ident, "6.6")
    why = (
        f"ethtool too old to decode CMIS; upgrade ethtool to >= {version} (its NEWS: CMIS diagnostics) for the lane "
        "monitors, which are on page 11h and in no hex dump"
    )
    return out, why, "lanes"


def decode(data: dict[int, int], port: str) -> ModuleDom:
    """The DOM readings of a hex-dumped module EEPROM (module docstring), with what is missing said."""
    ident = data.get(0)
    if ident is None:
        return ModuleDom((), None, "all", "hex dump without byte 0: no module identifier, nothing decoded")
    name = SFF8636.get(ident) or SFF8472.get(ident) or CMIS.get(ident)
    label = f"0x{ident:02x} ({name or 'unknown to fabricd'})"
    if name is None:
        hint = " (0x00: the driver's read may have failed)" if ident == 0 else ""
        return ModuleDom((), label, "all", f"hex dump of a module with identifier {label}: nothing read{hint}")
    decoded: _Decoded
    if ident in CMIS:
        decoded = _cmis(ident, port, data)
    elif ident in SFF8636:
        decoded = _sff8636(port, data)
    else:
        decoded = _sff8472(port, data)
    readings, why, missing = decoded
    note = f"hex dump of a {label} module: {why or 'decoded by fabricd'}"
    return ModuleDom(tuple(readings), label, missing, note)
