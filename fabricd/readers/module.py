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

Both read their text through the framing step (:func:`fabricd.readers.framing.framed_interface`: prompts, the
echoed command, CRLF and pager marks gone); a non-empty output they read nothing from is a :class:`TextParseError`
naming its first line with content.

Captures: tests/golden/readers/host/ethtool-m-*.txt, ethtool-show-fec-*.txt.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from fabricd.readers.switch.model import LinkStat, OpticQuantity, OpticReading

from .framing import framed_interface
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


@framed_interface
def parse_ethtool_module(text: str, interface: str | None = None) -> list[OpticReading]:
    """The DOM readings of ``interface`` in ``ethtool -m`` text. A module without diagnostics (a DAC) has none;
    a text with neither an ``Identifier`` line nor a reading (``Cannot get module EEPROM information: ...``) is
    not a module dump (:class:`TextParseError` naming its first line)."""
    source = _source("ethtool -m", interface)
    port = interface or ""
    out: list[OpticReading] = []
    identified = False
    lines = content_lines(text)
    for n, line in lines:
        m = _LINE.match(line)
        if not m:
            continue
        key, value = m.group("key"), m.group("value")
        identified = identified or key.strip().lower() == "identifier"
        if "threshold" in key.lower():
            continue
        found = _quantity(key)
        if found is None:
            continue
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
        out.append(
            OpticReading(
                port, quantity, None if quantity in ("temperature_celsius", "voltage_volts") else lane, reading
            )
        )
    if lines and not identified and not out:
        n, first = lines[0]
        raise TextParseError(
            source,
            n,
            "no module identifier and no reading",
            expected="ethtool -m output ('Identifier : ...')",
            got=first.strip(),
        )
    return out


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
