"""Normalised switch counter snapshots, shared by every platform's show-output parsers.

Conventions (docs/contracts.md, metric labels): ``direction`` is rx|tx as seen by the switch port; ``priority`` 0-7 or
None when the platform only reports a total over all priorities; queue ``index`` is the platform's egress queue or
traffic-class number and ``kind`` says unicast/multicast/all. Values are ``int | None``: None means the platform printed
``N/A``/``n/a``/``--`` or does not have the counter; it is never replaced by 0.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from ..common import Direction

QueueKind = Literal["unicast", "multicast", "all"]


@dataclass(frozen=True, slots=True)
class PfcCounter:
    """PFC pause frames one port sent (tx) or received (rx) on one priority (None = all priorities together).

    ``duration_us`` is the pause time in microseconds where the platform gives it (NVUE, SONiC on some ASICs).
    """

    interface: str
    direction: Direction
    priority: int | None
    frames: int | None
    duration_us: int | None = None


@dataclass(frozen=True, slots=True)
class QueueCounter:
    """One egress queue of one port: traffic, drops, WRED drops and ECN marks (packets and bytes)."""

    interface: str
    index: int
    kind: QueueKind
    packets: int | None = None
    bytes: int | None = None
    dropped_packets: int | None = None
    dropped_bytes: int | None = None
    wred_dropped_packets: int | None = None
    wred_dropped_bytes: int | None = None
    ecn_marked_packets: int | None = None
    ecn_marked_bytes: int | None = None


@dataclass(frozen=True, slots=True)
class PfcwdCounter:
    """PFC watchdog state and counters of one lossless queue (SONiC ``show pfcwd stats``, EOS watchdog counters).

    ``detected``/``restored`` count storms; a queue with ``detected > restored`` and status ``stormed`` is in a storm
    now; ``*_ok``/``*_drop`` are packets forwarded or dropped by the watchdog action (``last_*`` for the last storm).
    """

    interface: str
    queue: int
    status: str | None
    detected: int | None
    restored: int | None
    tx_ok: int | None = None
    tx_drop: int | None = None
    rx_ok: int | None = None
    rx_drop: int | None = None
    tx_last_ok: int | None = None
    tx_last_drop: int | None = None
    rx_last_ok: int | None = None
    rx_last_drop: int | None = None


@dataclass(frozen=True, slots=True)
class PfcwdConfig:
    """PFC watchdog configuration of one port: action and timers in milliseconds (SONiC ``show pfcwd config``)."""

    interface: str
    action: str | None
    detection_ms: int | None
    restoration_ms: int | None


@dataclass(frozen=True, slots=True)
class InterfaceCounter:
    """A per-port counter that is not per queue or priority: ``counter`` is one of ``packets``, ``octets``,
    ``discards``, ``errors``, ``pause_frames`` (802.3x link pause), ``ecn_marked_packets``; ``reason`` narrows
    discards/errors (``fcs``, ``buffer``, ``acl``...) or is None for the port's total."""

    interface: str
    direction: Direction | None
    counter: str
    value: int | None
    reason: str | None = None


@dataclass(frozen=True, slots=True)
class DropCounter:
    """A device-level drop counter that is not tied to a port (EOS ``show hardware counter drop``)."""

    location: str
    name: str
    value: int | None
    kind: str | None = None


WatermarkKind = Literal["shared", "headroom", "unicast", "multicast", "all"]


@dataclass(frozen=True, slots=True)
class BufferWatermark:
    """Peak buffer occupancy in bytes of one ingress priority group or egress queue of one port since the
    watermark was last cleared (SONiC ``watermarkstat``: ``show priority-group watermark shared|headroom``,
    ``show queue watermark unicast|multicast|all``).

    ``group`` is ``pg`` (``index`` is the priority-group number) or ``queue`` (``index`` is the queue number as the
    platform prints it, ``UC<n>``/``MC<n>``); ``kind`` is ``shared``/``headroom`` for a PG and the queue type for a
    queue; ``persistent`` marks the persistent watermark (cleared only on request) rather than the periodic one."""

    interface: str
    group: Literal["pg", "queue"]
    index: int
    kind: WatermarkKind
    bytes: int | None
    persistent: bool = False


OpticQuantity = Literal["temperature_celsius", "voltage_volts", "rx_power_dbm", "tx_power_dbm", "bias_amperes"]


@dataclass(frozen=True, slots=True)
class OpticReading:
    """One transceiver DOM (digital optical monitoring) value of a port: module ``temperature_celsius`` and
    ``voltage_volts`` (``lane`` None), per-lane ``rx_power_dbm``/``tx_power_dbm`` (dBm) and ``bias_amperes`` (laser
    bias, amperes; devices print mA). ``lane`` is 1-based as the module numbers its channels. A gauge."""

    interface: str
    quantity: OpticQuantity
    lane: int | None
    value: float | None


LinkStatName = Literal[
    "fec_corrected_codewords",
    "fec_uncorrectable_codewords",
    "fec_symbol_errors",
    "pre_fec_ber",
    "post_fec_ber",
    "carrier_transitions",
]


@dataclass(frozen=True, slots=True)
class LinkStat:
    """A link-health value of a port: FEC codeword counters (corrected, uncorrectable) and symbol errors, carrier
    transitions (flaps; counters), and the pre-/post-FEC bit error ratio the device computes over its own interval
    (a gauge, a ratio)."""

    interface: str
    name: LinkStatName
    value: float | None


@dataclass(frozen=True, slots=True)
class SwitchCounters:
    """Everything parsed from one or more show outputs of one switch. Parsers return partial snapshots;
    :func:`merge` combines them."""

    pfc: tuple[PfcCounter, ...] = ()
    queues: tuple[QueueCounter, ...] = ()
    pfcwd: tuple[PfcwdCounter, ...] = ()
    pfcwd_config: tuple[PfcwdConfig, ...] = ()
    interfaces: tuple[InterfaceCounter, ...] = ()
    drops: tuple[DropCounter, ...] = ()
    problems: tuple[str, ...] = field(default=())
    watermarks: tuple[BufferWatermark, ...] = ()
    """Buffer watermarks (a gauge, not a counter); after ``problems`` so that positional construction keeps working."""
    optics: tuple[OpticReading, ...] = ()
    """Transceiver DOM readings (gauges)."""
    link: tuple[LinkStat, ...] = ()
    """FEC, BER and flap values per port."""

    def as_dict(self) -> dict[str, Any]:
        """Plain JSON-able data (for goldens and ``--output json``). ``watermarks`` is left out while empty, so the
        goldens of outputs without watermarks (written before they were read) stay as they were."""
        data = asdict(self)
        for key in ("watermarks", "optics", "link"):
            if not getattr(self, key):
                del data[key]
        return data


def merge(parts: Iterable[SwitchCounters]) -> SwitchCounters:
    """Combine partial snapshots. Queue rows of the same (interface, index, kind) are merged field by field, so
    ``show queue counters`` and ``show queue wredcounters`` make one row per queue."""
    pfc: list[PfcCounter] = []
    queues: dict[tuple[str, int, str], QueueCounter] = {}
    pfcwd: list[PfcwdCounter] = []
    cfg: list[PfcwdConfig] = []
    ifs: list[InterfaceCounter] = []
    drops: list[DropCounter] = []
    problems: list[str] = []
    watermarks: list[BufferWatermark] = []
    optics: list[OpticReading] = []
    link: list[LinkStat] = []
    for part in parts:
        watermarks.extend(part.watermarks)
        optics.extend(part.optics)
        link.extend(part.link)
        pfc.extend(part.pfc)
        pfcwd.extend(part.pfcwd)
        cfg.extend(part.pfcwd_config)
        ifs.extend(part.interfaces)
        drops.extend(part.drops)
        problems.extend(part.problems)
        for q in part.queues:
            key = (q.interface, q.index, q.kind)
            old = queues.get(key)
            if old is None:
                queues[key] = q
                continue
            updates = {
                name: getattr(q, name)
                for name in QueueCounter.__dataclass_fields__
                if getattr(q, name) is not None and getattr(old, name) is None
            }
            queues[key] = QueueCounter(**{**asdict(old), **updates})
    return SwitchCounters(
        pfc=tuple(pfc),
        queues=tuple(queues.values()),
        pfcwd=tuple(pfcwd),
        pfcwd_config=tuple(cfg),
        interfaces=tuple(ifs),
        drops=tuple(drops),
        problems=tuple(problems),
        watermarks=tuple(watermarks),
        optics=tuple(optics),
        link=tuple(link),
    )
