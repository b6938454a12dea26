"""The switch collector's metric families, and how one switch's parsed counters become their samples, whichever
transport read them (the SSH poller of :mod:`fabricd.collectors.switch` or the gNMI streams of
:mod:`fabricd.collectors.gnmi`): one function per counter family (PFC, queues, PFC watchdog, interfaces, drops,
watermarks, link health, optics). A series is added once per scrape (the first reading wins) and an absent counter
is skipped, never exported as 0.
"""

from __future__ import annotations

from fabricd.readers.switch.model import SwitchCounters

from .core import MetricSpec, Scrape

S = ("switch",)
SI = ("switch", "interface")
SRC = "switch CLI via the platform driver (fabricd.nos.<platform>.show)"

UP = MetricSpec(
    "fabricd_switch_up",
    "gauge",
    "1 when the switch answered every show command in its latest poll, else 0 (also while it backs off).",
    S,
    SRC,
)
LAST_SUCCESS = MetricSpec(
    "fabricd_switch_last_success_timestamp_seconds",
    "gauge",
    "When the switch last answered every show command (Unix time); absent until it has once. time() minus this is "
    "how stale its counters are.",
    S,
    SRC,
)
CONSECUTIVE_FAILURES = MetricSpec(
    "fabricd_switch_consecutive_failures",
    "gauge",
    "Failed polls of the switch since its last success (0 while it answers); the poller backs off exponentially "
    "while this grows.",
    S,
    SRC,
)
CONNECT_ATTEMPTS = MetricSpec(
    "fabricd_switch_connection_attempts_total",
    "counter",
    "Sessions the poller opened or tried to open to the switch.",
    S,
    SRC,
)
POLL_OVERRUNS = MetricSpec(
    "fabricd_switch_poll_overruns_total",
    "counter",
    "Polls of the switch that ran past their deadline (a slow or hung session).",
    S,
    SRC,
)
POLL_DURATION = MetricSpec(
    "fabricd_switch_poll_duration_seconds",
    "gauge",
    "Time the switch's show commands took in this scrape, in seconds.",
    S,
    SRC,
)
PFC_FRAMES = MetricSpec(
    "fabricd_switch_pfc_pause_frames_total",
    "counter",
    "PFC pause frames per port and priority; rx = received from the neighbour (the port was paused), tx = sent "
    "(the switch paused its neighbour).",
    (*SI, "priority", "direction"),
    SRC,
)
PFC_FRAMES_ALL = MetricSpec(
    "fabricd_switch_pfc_frames_total",
    "counter",
    "PFC frames per port over all priorities, for platforms that report only the total (NX-OS RxPPP/TxPPP, EOS "
    "RxPfc/TxPfc, NVUE RoCE counters).",
    (*SI, "direction"),
    SRC,
)
PFC_DURATION = MetricSpec(
    "fabricd_switch_pfc_pause_duration_seconds_total",
    "counter",
    "Time paused per port and priority, in seconds, where the platform reports it (NVUE; microseconds / 1e6).",
    (*SI, "priority", "direction"),
    SRC,
)
QUEUE_PACKETS = MetricSpec(
    "fabricd_switch_queue_packets_total", "counter", "Packets sent by an egress queue.", (*SI, "queue", "type"), SRC
)
QUEUE_BYTES = MetricSpec(
    "fabricd_switch_queue_bytes_total",
    "counter",
    "Bytes sent by an egress queue, in bytes.",
    (*SI, "queue", "type"),
    SRC,
)
QUEUE_DROPPED = MetricSpec(
    "fabricd_switch_queue_dropped_packets_total",
    "counter",
    "Packets dropped by an egress queue (a lossless queue should show none).",
    (*SI, "queue", "type"),
    SRC,
)
QUEUE_DROPPED_BYTES = MetricSpec(
    "fabricd_switch_queue_dropped_bytes_total",
    "counter",
    "Bytes dropped by an egress queue, in bytes.",
    (*SI, "queue", "type"),
    SRC,
)
QUEUE_WRED = MetricSpec(
    "fabricd_switch_queue_wred_dropped_packets_total",
    "counter",
    "Packets WRED dropped in an egress queue.",
    (*SI, "queue", "type"),
    SRC,
)
QUEUE_ECN = MetricSpec(
    "fabricd_switch_queue_ecn_marked_packets_total",
    "counter",
    "Packets ECN-marked (CE) by an egress queue: the DCQCN congestion signal.",
    (*SI, "queue", "type"),
    SRC,
)
PFCWD_DETECTED = MetricSpec(
    "fabricd_switch_pfcwd_detected_total",
    "counter",
    "PFC storms the switch watchdog detected on a lossless queue (priority = queue index under the standard TC map).",
    (*SI, "priority"),
    SRC,
)
PFCWD_RESTORED = MetricSpec(
    "fabricd_switch_pfcwd_restored_total",
    "counter",
    "PFC storms the switch watchdog restored from. detected > restored for long = stuck.",
    (*SI, "priority"),
    SRC,
)
PFCWD_STORMED = MetricSpec(
    "fabricd_switch_pfcwd_stormed",
    "gauge",
    "1 while the switch watchdog reports the queue stormed, 0 when operational.",
    (*SI, "priority"),
    SRC,
)
PFCWD_DROPPED = MetricSpec(
    "fabricd_switch_pfcwd_dropped_packets_total",
    "counter",
    "Packets the watchdog action dropped on a stormed queue.",
    (*SI, "priority", "direction"),
    SRC,
)
IF_DISCARDS = MetricSpec(
    "fabricd_switch_interface_discards_total",
    "counter",
    "Packets a port discarded (reason empty = the port's total).",
    (*SI, "direction", "reason"),
    SRC,
)
IF_ERRORS = MetricSpec(
    "fabricd_switch_interface_errors_total",
    "counter",
    "Packets with errors on a port (reason empty = the port's total).",
    (*SI, "direction", "reason"),
    SRC,
)
IF_PAUSE = MetricSpec(
    "fabricd_switch_link_pause_frames_total",
    "counter",
    "IEEE 802.3x link pause frames on a port (not PFC).",
    (*SI, "direction"),
    SRC,
)
IF_ECN = MetricSpec(
    "fabricd_switch_interface_ecn_marked_packets_total",
    "counter",
    "Packets ECN-marked on a port (platforms that count per port, e.g. NVUE RoCE counters).",
    (*SI, "direction"),
    SRC,
)
PG_WATERMARK = MetricSpec(
    "fabricd_switch_pg_watermark_bytes",
    "gauge",
    "Peak buffer occupancy of an ingress priority group since the switch last cleared its watermark, in bytes; "
    "kind = shared (shared pool) or headroom (xoff room used after a pause: near the PG's headroom size means "
    "near a lossless drop). SONiC watermarkstat.",
    (*SI, "priority_group", "kind"),
    SRC,
)
QUEUE_WATERMARK = MetricSpec(
    "fabricd_switch_queue_watermark_bytes",
    "gauge",
    "Peak shared-pool occupancy of an egress queue since the switch last cleared its watermark, in bytes (type = "
    "unicast, multicast or all, as the queue series). SONiC watermarkstat.",
    (*SI, "queue", "type"),
    SRC,
)
PG_HEADROOM = MetricSpec(
    "fabricd_switch_pg_headroom_size_bytes",
    "gauge",
    "The xoff headroom the inventory's intent gives a lossless priority group of a switch port, in bytes (fabricd's "
    "headroom formula; from the inventory, not read from the switch): what the headroom watermark is measured "
    "against.",
    (*SI, "priority_group"),
    "inventory intent (fabricd.intent.switch PortIntent.headroom.xoff_bytes)",
)
FEC_CORRECTED = MetricSpec(
    "fabricd_switch_fec_corrected_codewords_total",
    "counter",
    "FEC codewords the port received with errors it corrected. A rising rate is a degrading link (optic, cable, "
    "connector) still passing traffic.",
    SI,
    SRC,
)
FEC_UNCORRECTABLE = MetricSpec(
    "fabricd_switch_fec_uncorrectable_codewords_total",
    "counter",
    "FEC codewords the port could not correct: each one is a dropped frame, which RoCE turns into a retransmission.",
    SI,
    SRC,
)
FEC_SYMBOL_ERRORS = MetricSpec(
    "fabricd_switch_fec_symbol_errors_total", "counter", "FEC symbol errors the port counted.", SI, SRC
)
PRE_FEC_BER = MetricSpec(
    "fabricd_switch_pre_fec_ber",
    "gauge",
    "Bit error ratio before FEC correction, as the switch computes it over its own interval (SONiC FEC_PRE_BER, NVUE "
    "raw-ber).",
    SI,
    SRC,
)
POST_FEC_BER = MetricSpec(
    "fabricd_switch_post_fec_ber",
    "gauge",
    "Bit error ratio after FEC correction, as the switch computes it (SONiC FEC_POST_BER, NVUE effective-ber); above "
    "the device's floor means loss.",
    SI,
    SRC,
)
CARRIER_TRANSITIONS = MetricSpec(
    "fabricd_switch_carrier_transitions_total",
    "counter",
    "Times the port's link went down or up (flaps; EOS linkStatusChanges, NVUE carrier-transitions, SONiC show "
    "interfaces flap).",
    SI,
    SRC,
)
OPTIC_TEMPERATURE = MetricSpec(
    "fabricd_switch_optic_temperature_celsius", "gauge", "Transceiver module temperature, in degrees Celsius.", SI, SRC
)
OPTIC_VOLTAGE = MetricSpec(
    "fabricd_switch_optic_voltage_volts", "gauge", "Transceiver supply voltage (Vcc), in volts.", SI, SRC
)
OPTIC_RX_POWER = MetricSpec(
    "fabricd_switch_optic_rx_power_dbm",
    "gauge",
    "Optical power the transceiver receives on a lane, in dBm (-40 is dark: no light).",
    (*SI, "lane"),
    SRC,
)
OPTIC_TX_POWER = MetricSpec(
    "fabricd_switch_optic_tx_power_dbm",
    "gauge",
    "Optical power the transceiver sends on a lane, in dBm.",
    (*SI, "lane"),
    SRC,
)
OPTIC_BIAS = MetricSpec(
    "fabricd_switch_optic_bias_amperes",
    "gauge",
    "Laser bias current of a lane, in amperes (devices print mA).",
    (*SI, "lane"),
    SRC,
)
LINK_STATS = {
    "fec_corrected_codewords": FEC_CORRECTED,
    "fec_uncorrectable_codewords": FEC_UNCORRECTABLE,
    "fec_symbol_errors": FEC_SYMBOL_ERRORS,
    "pre_fec_ber": PRE_FEC_BER,
    "post_fec_ber": POST_FEC_BER,
    "carrier_transitions": CARRIER_TRANSITIONS,
}
OPTICS = {
    "temperature_celsius": OPTIC_TEMPERATURE,
    "voltage_volts": OPTIC_VOLTAGE,
    "rx_power_dbm": OPTIC_RX_POWER,
    "tx_power_dbm": OPTIC_TX_POWER,
    "bias_amperes": OPTIC_BIAS,
}
DROPS = MetricSpec(
    "fabricd_switch_drops_total",
    "counter",
    "Device drop counters not tied to a port (EOS hardware counters), by chip and reason.",
    ("switch", "location", "reason"),
    SRC,
)


METRICS: tuple[MetricSpec, ...] = (
    UP,
    LAST_SUCCESS,
    CONSECUTIVE_FAILURES,
    CONNECT_ATTEMPTS,
    POLL_OVERRUNS,
    POLL_DURATION,
    PFC_FRAMES,
    PFC_FRAMES_ALL,
    PFC_DURATION,
    QUEUE_PACKETS,
    QUEUE_BYTES,
    QUEUE_DROPPED,
    QUEUE_DROPPED_BYTES,
    QUEUE_WRED,
    QUEUE_ECN,
    PFCWD_DETECTED,
    PFCWD_RESTORED,
    PFCWD_STORMED,
    PFCWD_DROPPED,
    IF_DISCARDS,
    IF_ERRORS,
    IF_PAUSE,
    IF_ECN,
    DROPS,
    PG_WATERMARK,
    QUEUE_WATERMARK,
    PG_HEADROOM,
    *LINK_STATS.values(),
    *OPTICS.values(),
)
"""Every family the switch collector may emit, in the order METRICS.md lists them."""

_INTERFACE_COUNTERS: dict[str, tuple[MetricSpec, bool]] = {
    "discards": (IF_DISCARDS, True),
    "errors": (IF_ERRORS, True),
    "pause_frames": (IF_PAUSE, False),
    "ecn_marked_packets": (IF_ECN, False),
}
"""Interface counter -> its family, and whether the family has a ``reason`` label."""


class _Samples:
    """Adds samples to a scrape's families, each series once (the first reading of a series wins)."""

    __slots__ = ("scrape", "seen", "switch")

    def __init__(self, scrape: Scrape, switch: str) -> None:
        self.scrape = scrape
        self.switch = switch
        self.seen: set[tuple[str, tuple[str, ...]]] = set()

    def add(self, spec: MetricSpec, labels: tuple[str, ...], value: int | float | None) -> None:
        if value is None or (spec.name, labels) in self.seen:
            return
        self.seen.add((spec.name, labels))
        self.scrape.family(spec).samples.append((labels, value))


def _pfc(out: _Samples, c: SwitchCounters) -> None:
    """PFC frames per priority (or over all priorities, where the platform counts only the total) and pause time."""
    sw = out.switch
    for pfc in c.pfc:
        if pfc.priority is None:
            out.add(PFC_FRAMES_ALL, (sw, pfc.interface, pfc.direction), pfc.frames)
            continue
        labels = (sw, pfc.interface, str(pfc.priority), pfc.direction)
        out.add(PFC_FRAMES, labels, pfc.frames)
        if pfc.duration_us is not None:
            out.add(PFC_DURATION, labels, pfc.duration_us / 1e6)


def _queues(out: _Samples, c: SwitchCounters) -> None:
    """Egress queue packets, bytes, drops, WRED drops and ECN marks."""
    for q in c.queues:
        ql = (out.switch, q.interface, str(q.index), q.kind)
        out.add(QUEUE_PACKETS, ql, q.packets)
        out.add(QUEUE_BYTES, ql, q.bytes)
        out.add(QUEUE_DROPPED, ql, q.dropped_packets)
        out.add(QUEUE_DROPPED_BYTES, ql, q.dropped_bytes)
        out.add(QUEUE_WRED, ql, q.wred_dropped_packets)
        out.add(QUEUE_ECN, ql, q.ecn_marked_packets)


def _pfcwd(out: _Samples, c: SwitchCounters) -> None:
    """The switch's PFC watchdog per queue: storms detected and restored, stormed now, packets dropped."""
    for wd in c.pfcwd:
        wl = (out.switch, wd.interface, str(wd.queue))
        out.add(PFCWD_DETECTED, wl, wd.detected)
        out.add(PFCWD_RESTORED, wl, wd.restored)
        if wd.status is not None:
            out.add(PFCWD_STORMED, wl, int(wd.status.lower() == "stormed"))
        out.add(PFCWD_DROPPED, (*wl, "tx"), wd.tx_drop)
        out.add(PFCWD_DROPPED, (*wl, "rx"), wd.rx_drop)


def _interfaces(out: _Samples, c: SwitchCounters) -> None:
    """Per-port discards and errors (by reason), link pause frames and ECN marks."""
    for i in c.interfaces:
        family = _INTERFACE_COUNTERS.get(i.counter)
        if family is None:
            continue
        spec, has_reason = family
        labels = (out.switch, i.interface, i.direction or "")
        out.add(spec, (*labels, i.reason or "") if has_reason else labels, i.value)


def _drops(out: _Samples, c: SwitchCounters) -> None:
    """Device drop counters not tied to a port."""
    for drop in c.drops:
        out.add(DROPS, (out.switch, drop.location, drop.name), drop.value)


def _watermarks(out: _Samples, c: SwitchCounters) -> None:
    """Priority-group and queue watermarks (the periodic ones; the persistent ones are a reference parse)."""
    for wm in c.watermarks:
        if wm.persistent:
            continue
        spec = PG_WATERMARK if wm.group == "pg" else QUEUE_WATERMARK
        out.add(spec, (out.switch, wm.interface, str(wm.index), wm.kind), wm.bytes)


def _link(out: _Samples, c: SwitchCounters) -> None:
    """Link health per port: FEC codewords and symbol errors, BER, carrier transitions."""
    for stat in c.link:
        out.add(LINK_STATS[stat.name], (out.switch, stat.interface), stat.value)


def _optics(out: _Samples, c: SwitchCounters) -> None:
    """Transceiver readings per port, and per lane where the quantity has lanes."""
    for o in c.optics:
        labels = (out.switch, o.interface) if o.lane is None else (out.switch, o.interface, str(o.lane))
        out.add(OPTICS[o.quantity], labels, o.value)


_FAMILIES = (_pfc, _queues, _pfcwd, _interfaces, _drops, _watermarks, _link, _optics)


def emit_counters(scrape: Scrape, switch: str, counters: SwitchCounters) -> None:
    """Add one switch's parsed counters to the scrape: its parse problems, then every counter family."""
    for p in counters.problems:
        scrape.problem(p)
    out = _Samples(scrape, switch)
    for family in _FAMILIES:
        family(out, counters)
