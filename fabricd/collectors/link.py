"""``link`` collector: host link health. Carrier changes (flaps) from sysfs, transceiver DOM per lane from
``ethtool -m`` text and FEC mode and counters from ``ethtool -I --show-fec`` text (:mod:`fabricd.readers.module`).

Sources, under the root:

- ``sys/class/net/<if>/carrier_changes``: live sysfs or a replay root (the kernel counts every carrier up and down);
- ``ethtool/<if>.module`` and ``ethtool/<if>.fec``: a replay root's (or a support bundle's) ``ethtool -m <if>`` and
  ``ethtool -I --show-fec <if>`` outputs;
- on a live host (``text``: :class:`fabricd.sources.ethtool_text.EthtoolTextSource`), the same two outputs run live
  for an interface without those files: the module DOM per lane, the FEC mode, and the IEEE FEC block counters of
  drivers that report them there (ice/E810 counts FEC nowhere else; mlx5 too);
- the FEC counters a driver prints under ``ethtool -S`` (``stats``: the same source the ``nic`` collector reads, live
  ETHTOOL_GSTATS or a replay root's ``<if>.stats``), normalised by the NIC profile's names (bnxt_en
  ``rx_fec_corrected_blocks``/``rx_fec_uncorrectable_blocks``/``rx_corrected_bits``, mlx5 ``rx_corrected_bits_phy``):
  used for an interface whose ``--show-fec`` (file or live) has no statistics, so the two never count the same
  blocks twice. The statistics are read a second time per scrape (the ``nic`` collector reads them too).

An interface is one under ``sys/class/net`` that has a ``device`` (a NIC, not veth/bridge/lo) or one of the ethtool
files. A file that does not parse is a problem (collector success 0) naming the file, and its series are skipped.
A module ``ethtool -m`` prints only as a hex dump of its EEPROM (an ethtool older than the module's management
interface, a driver whose identifier read fails) is not a problem: fabricd decodes what the dumped bytes hold
(:mod:`fabricd.readers.module_eeprom`), and what they cannot give is ``fabricd_nic_optic_undecoded_info`` with the
module identifier and ``missing`` (``lanes``: CMIS lane monitors, on a page no hex dump holds; ``all``), and a log line
saying why and which ethtool decodes it. The interface's other series and every other interface still export.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Callable
from typing import Protocol, TypeVar

from fabricd.errors import FabricdError
from fabricd.readers.counter_names import FEC_CORRECTED_BITS, FEC_CORRECTED_CODEWORDS, FEC_UNCORRECTABLE_CODEWORDS
from fabricd.readers.ethtool import EthtoolStats
from fabricd.readers.module import parse_ethtool_fec, read_ethtool_module
from fabricd.readers.nic_config import list_net_interfaces

from .core import MetricSpec, Scrape

log = logging.getLogger(__name__)

IF = ("interface",)
SYSFS = "sysfs /sys/class/net/<if>/carrier_changes"
MODULE = "ethtool -m <if> (live, or replay root ethtool/<if>.module)"
FEC_FILE = "ethtool -I --show-fec <if> (live, or replay root ethtool/<if>.fec)"
FEC = f"{FEC_FILE}, else the driver's ethtool -S FEC counters"

CARRIER_CHANGES = MetricSpec(
    "fabricd_nic_carrier_changes_total",
    "counter",
    "Times the interface's carrier went up or down (two changes are one flap).",
    IF,
    SYSFS,
)
OPTIC_TEMPERATURE = MetricSpec(
    "fabricd_nic_optic_temperature_celsius", "gauge", "Transceiver module temperature, in degrees Celsius.", IF, MODULE
)
OPTIC_VOLTAGE = MetricSpec(
    "fabricd_nic_optic_voltage_volts", "gauge", "Transceiver supply voltage, in volts.", IF, MODULE
)
OPTIC_RX_POWER = MetricSpec(
    "fabricd_nic_optic_rx_power_dbm",
    "gauge",
    "Optical power the NIC's transceiver receives on a lane, in dBm (-Inf: no light).",
    (*IF, "lane"),
    MODULE,
)
OPTIC_TX_POWER = MetricSpec(
    "fabricd_nic_optic_tx_power_dbm",
    "gauge",
    "Optical power the NIC's transceiver sends on a lane, in dBm.",
    (*IF, "lane"),
    MODULE,
)
OPTIC_BIAS = MetricSpec(
    "fabricd_nic_optic_bias_amperes", "gauge", "Laser bias current of a lane, in amperes.", (*IF, "lane"), MODULE
)
OPTIC_UNDECODED = MetricSpec(
    "fabricd_nic_optic_undecoded_info",
    "gauge",
    "1 for a transceiver whose DOM ethtool -m did not decode (a hex dump of the EEPROM: an ethtool older than the "
    "module, e.g. < 5.16 for CMIS QSFP-DD, or a driver's failed identifier read) and fabricd could not read in full "
    "from the dumped bytes: missing is lanes (CMIS lane monitors are on page 11h, in no dump: no lane series, never 0) "
    "or all.",
    (*IF, "identifier", "missing"),
    MODULE,
)
FEC_MODE = MetricSpec(
    "fabricd_nic_fec_mode_info",
    "gauge",
    "The interface's active FEC encoding (RS, BaseR, Off, None...); value 1.",
    (*IF, "mode"),
    FEC_FILE,
)
FEC_CORRECTED = MetricSpec(
    "fabricd_nic_fec_corrected_codewords_total",
    "counter",
    "FEC blocks (codewords) received with errors the NIC corrected.",
    IF,
    FEC,
)
FEC_UNCORRECTABLE = MetricSpec(
    "fabricd_nic_fec_uncorrectable_codewords_total",
    "counter",
    "FEC blocks (codewords) the NIC could not correct: dropped frames.",
    IF,
    FEC,
)
FEC_BITS = MetricSpec(
    "fabricd_nic_fec_corrected_bits_total",
    "counter",
    "Bits the NIC's FEC corrected, where the driver counts them.",
    IF,
    FEC,
)

OPTICS = {
    "temperature_celsius": OPTIC_TEMPERATURE,
    "voltage_volts": OPTIC_VOLTAGE,
    "rx_power_dbm": OPTIC_RX_POWER,
    "tx_power_dbm": OPTIC_TX_POWER,
    "bias_amperes": OPTIC_BIAS,
}
FEC_STATS = {"fec_corrected_codewords": FEC_CORRECTED, "fec_uncorrectable_codewords": FEC_UNCORRECTABLE}

_T = TypeVar("_T")


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read()
    except OSError:
        return None


class EthtoolText(Protocol):
    """Live ``ethtool -m`` / ``ethtool -I --show-fec`` text of an interface, None where it has none
    (:class:`fabricd.sources.ethtool_text.EthtoolTextSource`)."""

    def module(self, ifname: str) -> str | None: ...

    def fec(self, ifname: str) -> str | None: ...


class LinkCollector:
    """``link``: carrier changes, transceiver DOM and FEC per interface under ``root``."""

    name = "link"
    metrics: tuple[MetricSpec, ...] = (
        CARRIER_CHANGES,
        *OPTICS.values(),
        OPTIC_UNDECODED,
        FEC_MODE,
        FEC_CORRECTED,
        FEC_UNCORRECTABLE,
        FEC_BITS,
    )

    def __init__(
        self,
        root: str | os.PathLike[str] = "/",
        *,
        include: re.Pattern[str] | None = None,
        stats: Callable[[str], EthtoolStats] | None = None,
        text: EthtoolText | None = None,
    ) -> None:
        self.root = os.fspath(root)
        self.include = include
        self.stats = stats
        """Reads one interface's ``ethtool -S`` (an ethtool source's ``read``); None: FEC only from ``.fec`` files."""
        self.text = text
        """Live ``ethtool -m``/``--show-fec`` for interfaces without replay files; None: files only (replay)."""
        self._notes: dict[str, str] = {}
        """The last note logged per interface (a module's note is logged when it changes, not every scrape)."""

    def _stats_fec(self, scrape: Scrape, ifname: str) -> None:
        """FEC counters of ``ifname`` from its driver's ``ethtool -S`` names (nothing when the driver has none; a
        read that fails is the ``nic`` collector's problem to report, not this one's)."""
        if self.stats is None:
            return
        try:
            stats = self.stats(ifname)
        except (FabricdError, OSError):
            return
        for kind, spec in (
            (FEC_CORRECTED_CODEWORDS, FEC_CORRECTED),
            (FEC_UNCORRECTABLE_CODEWORDS, FEC_UNCORRECTABLE),
            (FEC_CORRECTED_BITS, FEC_BITS),
        ):
            value = stats.get(kind, "rx")
            if value is not None:
                scrape.family(spec).add((ifname,), value)

    def _interfaces(self) -> list[str]:
        net = os.path.join(self.root, "sys", "class", "net")
        names = {n for n in list_net_interfaces(self.root) if os.path.exists(os.path.join(net, n, "device"))}
        try:
            files = os.listdir(os.path.join(self.root, "ethtool"))
        except OSError:
            files = []
        names |= {f.rsplit(".", 1)[0] for f in files if f.endswith((".module", ".fec"))}
        return sorted(n for n in names if self.include is None or self.include.search(n))

    def _source(self, ifname: str, suffix: str) -> tuple[str | None, str]:
        """An interface's ``.module``/``.fec`` text: the replay file, else the live output; and where it came from
        (for a problem's message)."""
        path = os.path.join(self.root, "ethtool", f"{ifname}.{suffix}")
        text = _read(path)
        if text is not None or self.text is None:
            return text, path
        live = self.text.module(ifname) if suffix == "module" else self.text.fec(ifname)
        return live, ("ethtool -m " if suffix == "module" else "ethtool -I --show-fec ") + ifname

    def _parsed(
        self,
        scrape: Scrape,
        ifname: str,
        suffix: str,
        parse: Callable[[str, str], _T],
        *,
        missing: Callable[[], None] | None = None,
    ) -> tuple[_T, str] | None:
        """An interface's ``.module``/``.fec`` text parsed, and where it came from; None when it has none (after
        calling ``missing``) or when it does not parse (a problem naming where the text came from)."""
        text, where = self._source(ifname, suffix)
        if text is None:
            if missing is not None:
                missing()
            return None
        try:
            return parse(text, ifname), where
        except FabricdError as exc:
            scrape.problem(f"{where}: {exc}")
            return None

    def _optics(self, scrape: Scrape, ifname: str) -> None:
        parsed = self._parsed(scrape, ifname, "module", read_ethtool_module)
        if parsed is None:
            return
        dom, where = parsed
        for o in dom.readings:
            if o.value is not None:
                labels = (ifname,) if o.lane is None else (ifname, str(o.lane))
                scrape.family(OPTICS[o.quantity]).add(labels, o.value)
        if dom.missing is not None:
            scrape.family(OPTIC_UNDECODED).add((ifname, dom.identifier or "", dom.missing), 1)
        if dom.note is not None and self._notes.get(ifname) != dom.note:
            log.info("%s: %s", where, dom.note, extra={"target": ifname})
            self._notes[ifname] = dom.note

    def _fec(self, scrape: Scrape, ifname: str) -> None:
        parsed = self._parsed(scrape, ifname, "fec", parse_ethtool_fec, missing=lambda: self._stats_fec(scrape, ifname))
        if parsed is None:
            return
        state = parsed[0]
        if state.active:
            scrape.family(FEC_MODE).add((ifname, state.active), 1)
        counted = False
        for stat in state.stats:
            spec = FEC_STATS.get(stat.name)
            if spec is not None and stat.value is not None:
                scrape.family(spec).add((ifname,), stat.value)
                counted = True
        if state.corrected_bits is not None:
            scrape.family(FEC_BITS).add((ifname,), state.corrected_bits)
            counted = True
        if not counted:
            self._stats_fec(scrape, ifname)

    def collect(self, scrape: Scrape) -> None:
        net = os.path.join(self.root, "sys", "class", "net")
        for ifname in self._interfaces():
            changes = _read(os.path.join(net, ifname, "carrier_changes"))
            if changes is not None and changes.strip().isdigit():
                scrape.family(CARRIER_CHANGES).add((ifname,), int(changes))
            self._optics(scrape, ifname)
            self._fec(scrape, ifname)
