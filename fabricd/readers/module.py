"""Host link health from ethtool's text, as pure readers: transceiver DOM (``ethtool -m <if>``) and FEC
(``ethtool [-I] --show-fec <if>``).

``ethtool -m`` decodes the module EEPROM (SFF-8472 for SFP, SFF-8636 for QSFP, CMIS for QSFP-DD/OSFP) into
``Name : value`` lines. The DOM lines read here:

- ``Module temperature : 47.30 degrees C / 117.13 degrees F`` and ``Module voltage : 3.2576 V``;
- SFP (one lane): ``Laser bias current : 17.650 mA``, ``Laser output power : 0.2132 mW / -6.71 dBm``,
  ``Receiver signal average optical power : 0.2740 mW / -5.62 dBm`` (or ``Receiver signal OMA``);
- QSFP/CMIS (per lane): ``Laser tx bias current (Channel 1)``, ``Transmit avg optical power (Channel 1)``,
  ``Rcvr signal avg optical power(Channel 1)`` (ethtool prints no space before the parenthesis there; later
  releases do) or ``Rcvr signal OMA(Channel 1)``;

threshold lines (``... threshold``) and alarm flags are not values and are skipped. Power is read in dBm (the
figure after ``/``; ``-inf dBm`` is no light at all and reads as -inf), bias in amperes (ethtool prints mA).

``ethtool --show-fec`` prints ``Active FEC encoding: RS``; with ``-I`` (``--include-statistics``, ethtool 5.13+ and
a driver that reports them) a ``Statistics:`` block follows with ``corrected_blocks: N``, ``uncorrectable_blocks: N``
and, where the driver counts them, ``corrected_bits: N`` (per-lane ``Lane n: N`` lines under each are summed by the
kernel into the total and are not read).

When ethtool does not decode the module (too old for its management interface, a driver whose identifier read fails,
``hex on``) it prints a hex dump of the EEPROM instead: :func:`read_ethtool_module` reads that too
(:mod:`fabricd.readers.module_eeprom`) and says in its result what the bytes could not give (CMIS lane monitors).

Both read their text through the framing step (:func:`fabricd.readers.framing.framed_interface`: prompts, the
echoed command, CRLF and pager marks gone); a non-empty output they read nothing from is a :class:`TextParseError`
naming its first line with content.

Captures: tests/golden/readers/host/ethtool-m-*.txt (ethtool-m-hex-*.txt: hex dumps), ethtool-show-fec-*.txt.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace

from fabricd.readers.switch.model import LinkStat, OpticQuantity, OpticReading

from .framing import framed_interface
from .module_eeprom import ModuleDom, decode, hex_dump
from .textparse import TextParseError, content_lines

_LINE = re.compile(r"^\s*(?P<key>[^:]+?)\s*:\s*(?P<value>.*?)\s*$")
_CHANNEL = re.compile(r"\(\s*Channel\s+(\d+)\s*\)\s*$", re.IGNORECASE)
_DBM = re.compile(r"/\s*(-?inf|-?\d+(?:\.\d+)?)\s*dBm", re.IGNORECASE)
_NUM = re.compile(r"^(-?\d+(?:\.\d+)?)")

_KEYS: tuple[tuple[re.Pattern[str], OpticQuantity], ...] = (
    (re.compile(r"^module temperature$", re.I), "temperature_celsius"),
    (re.compile(r"^module voltage$", re.I), "voltage_volts"),
    (re.compile(r"^laser (?:tx )?bias current$", re.I), "bias_amperes"),
    (re.compile(r"^(?:laser output power|transmit avg optical power)$", re.I), "tx_power_dbm"),
    (
        re.compile(
            r"^(?:receiver signal average optical power|receiver signal oma|rcvr signal avg optical power|"
            r"rcvr signal oma|receiver signal avg optical power)$",
            re.I,
        ),
        "rx_power_dbm",
    ),
)


def _quantity(key: str) -> tuple[OpticQuantity, int | None] | None:
    lane: int | None = None
    m = _CHANNEL.search(key)
    if m:
        lane = int(m.group(1))
        key = key[: m.start()].strip()
    for pattern, quantity in _KEYS:
        if pattern.match(key):
            if lane is None and quantity in ("bias_amperes", "tx_power_dbm", "rx_power_dbm"):
                lane = 1  # SFP: one lane
            return quantity, lane
    return None


def _source(command: str, interface: str | None) -> str:
    return f"{command} {interface}" if interface else command


def _reading(source: str, n: int, key: str, value: str) -> OpticReading | None:
    """One ``Name : value`` line as a reading (None: not a DOM line); a DOM line whose value is not a number is a
    :class:`TextParseError` at its line."""
    if "threshold" in key.lower():
        return None
    found = _quantity(key)
    if found is None:
        return None
    quantity, lane = found
    reading: float | None
    if quantity in ("tx_power_dbm", "rx_power_dbm"):
        dbm = _DBM.search(value)
        reading = None if dbm is None else (-math.inf if "inf" in dbm.group(1).lower() else float(dbm.group(1)))
    else:
        num = _NUM.match(value)
        reading = float(num.group(1)) if num else None
        if reading is not None and quantity == "bias_amperes":
            reading /= 1000.0
    if reading is None and value:
        raise TextParseError(
            source,
            n,
            f"{key}: not a reading",
            expected="a number with its unit (mA, V, degrees C, mW / dBm)",
            got=value,
        )
    module_level = quantity in ("temperature_celsius", "voltage_volts")
    return OpticReading("", quantity, None if module_level else lane, reading)


def _decoded(source: str, port: str, lines: list[tuple[int, str]]) -> ModuleDom:
    """The ``Name : value`` form ethtool prints when it decodes the module."""
    out: list[OpticReading] = []
    identifier: str | None = None
    for n, line in lines:
        m = _LINE.match(line)
        if not m:
            continue
        key, value = m.group("key"), m.group("value")
        if key.strip().lower() == "identifier":
            identifier = identifier or value
            continue
        reading = _reading(source, n, key, value)
        if reading is not None:
            out.append(replace(reading, interface=port))
    if lines and identifier is None and not out:
        n, first = lines[0]
        raise TextParseError(
            source,
            n,
            "no module identifier and no reading",
            expected="ethtool -m output ('Identifier : ...') or its hex dump ('Offset Values', '0x0000: ...')",
            got=first.strip(),
        )
    return ModuleDom(tuple(out), identifier)


@framed_interface
def read_ethtool_module(text: str, interface: str | None = None) -> ModuleDom:
    """The DOM of ``interface`` in ``ethtool -m`` text: the decoded ``Name : value`` form, or the hex dump of the
    module EEPROM that ethtool prints for a module it cannot decode (an ethtool older than the module's management
    interface, a driver whose identifier read fails, ``hex on``), decoded by :mod:`fabricd.readers.module_eeprom`.
    What could not be read is the result's ``note`` (not an error). A module without diagnostics (a DAC) has no
    readings; a text that is neither form (``Cannot get module EEPROM information: ...``) is a
    :class:`TextParseError` naming its first line."""
    source = _source("ethtool -m", interface)
    port = interface or ""
    lines = content_lines(text)
    data = hex_dump(lines)
    if data is not None:
        dom = decode(data, port)
        return replace(dom, note=f"{source}: {dom.note}") if dom.note else dom
    return _decoded(source, port, lines)


@framed_interface
def parse_ethtool_module(text: str, interface: str | None = None) -> list[OpticReading]:
    """The DOM readings of ``interface`` in ``ethtool -m`` text (:func:`read_ethtool_module` without its note)."""
    return list(read_ethtool_module(text, interface).readings)


@dataclass(frozen=True, slots=True)
class FecState:
    """``ethtool [-I] --show-fec``: the active FEC encoding (``RS``, ``BaseR``, ``Off``, ``None``...) and the FEC
    statistics the driver reports (corrected/uncorrectable blocks, corrected bits)."""

    interface: str
    active: str | None
    configured: str | None
    stats: tuple[LinkStat, ...] = ()
    corrected_bits: int | None = None


_FEC_STATS = {"corrected_blocks": "fec_corrected_codewords", "uncorrectable_blocks": "fec_uncorrectable_codewords"}


@framed_interface
def parse_ethtool_fec(text: str, interface: str | None = None) -> FecState:
    """``ethtool --show-fec <if>`` (with or without ``-I``). Raises :class:`TextParseError` naming the first line
    when the text holds neither an encoding line nor a statistic (not ethtool's output), blank text included."""
    port = interface or ""
    active = configured = None
    stats: list[LinkStat] = []
    bits: int | None = None
    section = ""
    lines = content_lines(text)
    for _, line in lines:
        m = _LINE.match(line)
        if not m:
            continue
        key, value = m.group("key").strip(), m.group("value").strip()
        low = key.lower()
        if low == "active fec encoding":
            active = value or None
        elif low in ("configured fec encodings", "supported/configured fec encodings"):
            configured = value or None
        elif low == "statistics":
            section = "stats"
        elif low.startswith("lane"):
            continue
        elif low in _FEC_STATS and value.isdigit():
            stats.append(LinkStat(port, _FEC_STATS[low], float(value)))  # type: ignore[arg-type]
        elif low == "corrected_bits" and value.isdigit():
            bits = int(value)
    if active is None and configured is None and not stats and section != "stats":
        n, first = lines[0] if lines else (1, "")
        raise TextParseError(
            _source("ethtool --show-fec", interface),
            n,
            "no FEC encoding line",
            expected="'Active FEC encoding: ...'",
            got=first.strip(),
        )
    return FecState(port, active, configured, tuple(stats), bits)
