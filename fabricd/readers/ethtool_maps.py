"""Per-driver ethtool counter name maps, as data.

Each driver's ``ethtool -S`` names are normalised to a :class:`fabricd.readers.ethtool.CounterKey`
``(counter, direction, priority, qualifier)``. A rule is a regular expression matched against the whole name; the
named groups ``dir`` (``rx``/``tx``) and ``prio`` (0-7) fill the key, or the rule states them.

Counter kinds and their units (a kind's unit is in its name where it is not "frames" or "packets"):

- ``pause_frames``: PFC pause (XOFF) frames per priority;
- ``resume_frames``: PFC XON frames (pause with quanta 0) per priority (Intel drivers);
- ``pause_duration_us``: time paused per priority, microseconds;
- ``pause_transitions``: number of times the priority went from not-paused to paused;
- ``priority_bytes`` / ``priority_packets``: traffic per priority;
- ``priority_discards`` (qualifier = reason) and ``priority_ecn_marked_packets`` per priority (rx only);
- ``link_pause_frames`` / ``link_resume_frames`` / ``link_pause_duration_us`` / ``link_pause_transitions``:
  IEEE 802.3x global pause (no priority). Global pause on a RoCE port usually means PFC is not configured;
- ``discards`` (qualifier = reason, no direction): ``rx_port_buffer`` (the NIC's port buffer was full),
  ``rx_out_of_buffer`` (no host receive descriptor or WQE), ``rx_port`` / ``tx_port`` (other port-level
  discards), ``tx_link_down``;
- ``pause_storm_events`` (qualifier = level): the NIC's own pause-storm protection fired.

Sources (names as the drivers print them): Linux ``Documentation/networking/device_drivers/ethernet/mellanox/mlx5/
counters.rst`` and the captures in tests/golden/readers/ethtool/ (mlx5, mlx4, bnxt_en, ice, i40e, ixgbe, virtio_net,
mlxsw).
ixgbe's per-priority ``rx_pb_N_pxoff`` names come from ``ixgbe_ethtool.c`` (no capture holds them). Counters that are
per queue, per ring or per CoS are left out on purpose: they multiply series (node_exporter issue #2096) and carry no
lossless-fabric meaning that the per-priority counters do not.
"""

from __future__ import annotations

from dataclasses import dataclass

# Counter kinds (the ``counter`` of a CounterKey).
PAUSE_FRAMES = "pause_frames"
RESUME_FRAMES = "resume_frames"
PAUSE_DURATION_US = "pause_duration_us"
PAUSE_TRANSITIONS = "pause_transitions"
PRIORITY_BYTES = "priority_bytes"
PRIORITY_PACKETS = "priority_packets"
PRIORITY_DISCARDS = "priority_discards"
PRIORITY_ECN_MARKED = "priority_ecn_marked_packets"
LINK_PAUSE_FRAMES = "link_pause_frames"
LINK_RESUME_FRAMES = "link_resume_frames"
LINK_PAUSE_DURATION_US = "link_pause_duration_us"
LINK_PAUSE_TRANSITIONS = "link_pause_transitions"
DISCARDS = "discards"
PAUSE_STORM_EVENTS = "pause_storm_events"

COUNTER_KINDS: tuple[str, ...] = (
    PAUSE_FRAMES,
    RESUME_FRAMES,
    PAUSE_DURATION_US,
    PAUSE_TRANSITIONS,
    PRIORITY_BYTES,
    PRIORITY_PACKETS,
    PRIORITY_DISCARDS,
    PRIORITY_ECN_MARKED,
    LINK_PAUSE_FRAMES,
    LINK_RESUME_FRAMES,
    LINK_PAUSE_DURATION_US,
    LINK_PAUSE_TRANSITIONS,
    DISCARDS,
    PAUSE_STORM_EVENTS,
)

_DIR = r"(?P<dir>rx|tx)"
_PRIO = r"(?P<prio>[0-7])"


@dataclass(frozen=True, slots=True)
class NameRule:
    """One name pattern: a full-match regex plus the counter kind it means.

    ``direction``/``qualifier`` are fixed values for names that do not carry them as groups.
    """

    pattern: str
    counter: str
    direction: str | None = None
    qualifier: str | None = None


MLX5: tuple[NameRule, ...] = (
    NameRule(rf"{_DIR}_prio{_PRIO}_pause", PAUSE_FRAMES),
    NameRule(rf"{_DIR}_prio{_PRIO}_pause_duration", PAUSE_DURATION_US),
    NameRule(rf"{_DIR}_prio{_PRIO}_pause_transition", PAUSE_TRANSITIONS),
    NameRule(rf"{_DIR}_prio{_PRIO}_bytes", PRIORITY_BYTES),
    NameRule(rf"{_DIR}_prio{_PRIO}_packets", PRIORITY_PACKETS),
    NameRule(rf"rx_prio{_PRIO}_discards", PRIORITY_DISCARDS, "rx", "port_buffer"),
    NameRule(rf"rx_prio{_PRIO}_buf_discard", PRIORITY_DISCARDS, "rx", "host_buffer"),
    NameRule(rf"rx_prio{_PRIO}_cong_discard", PRIORITY_DISCARDS, "rx", "host_congestion"),
    NameRule(rf"rx_prio{_PRIO}_marked", PRIORITY_ECN_MARKED, "rx"),
    NameRule(rf"{_DIR}_global_pause", LINK_PAUSE_FRAMES),
    NameRule(rf"{_DIR}_global_pause_duration", LINK_PAUSE_DURATION_US),
    NameRule(rf"{_DIR}_global_pause_transition", LINK_PAUSE_TRANSITIONS),
    NameRule(r"rx_discards_phy", DISCARDS, qualifier="rx_port_buffer"),
    NameRule(r"rx_out_of_buffer", DISCARDS, qualifier="rx_out_of_buffer"),
    NameRule(r"tx_discards_phy", DISCARDS, qualifier="tx_port"),
    NameRule(r"tx_pause_storm_warning_events", PAUSE_STORM_EVENTS, qualifier="warning"),
    NameRule(r"tx_pause_storm_error_events", PAUSE_STORM_EVENTS, qualifier="error"),
)
"""mlx5_core (ConnectX-4 and later). Per-priority pause counters exist only for PFC-enabled priorities; with global
pause the driver prints ``*_global_pause*`` instead. Durations are microseconds (mlx5 counters.rst)."""

MLX4: tuple[NameRule, ...] = (
    NameRule(rf"{_DIR}_pause_prio_{_PRIO}", PAUSE_FRAMES),
    NameRule(rf"{_DIR}_pause_duration_prio_{_PRIO}", PAUSE_DURATION_US),
    NameRule(rf"{_DIR}_pause_transition_prio_{_PRIO}", PAUSE_TRANSITIONS),
    NameRule(rf"{_DIR}_prio_{_PRIO}_bytes", PRIORITY_BYTES),
    NameRule(rf"{_DIR}_prio_{_PRIO}_packets", PRIORITY_PACKETS),
    NameRule(rf"{_DIR}_pause", LINK_PAUSE_FRAMES),
    NameRule(rf"{_DIR}_pause_duration", LINK_PAUSE_DURATION_US),
    NameRule(rf"{_DIR}_pause_transition", LINK_PAUSE_TRANSITIONS),
)
"""mlx4_en (ConnectX-3): the priority is a suffix. Durations are microseconds (mlx4_en.h flow-control mailbox)."""

BNXT: tuple[NameRule, ...] = (
    NameRule(rf"{_DIR}_pfc_ena_frames_pri{_PRIO}", PAUSE_FRAMES),
    NameRule(rf"pfc_pri{_PRIO}_{_DIR}_duration_us", PAUSE_DURATION_US),
    NameRule(rf"pfc_pri{_PRIO}_{_DIR}_transitions", PAUSE_TRANSITIONS),
    NameRule(rf"{_DIR}_bytes_pri{_PRIO}", PRIORITY_BYTES),
    NameRule(rf"{_DIR}_packets_pri{_PRIO}", PRIORITY_PACKETS),
    NameRule(rf"{_DIR}_pause_frames", LINK_PAUSE_FRAMES),
    NameRule(r"rx_total_ring_discards", DISCARDS, qualifier="rx_out_of_buffer"),
    NameRule(r"rx_stat_discard", DISCARDS, qualifier="rx_port"),
    NameRule(r"tx_stat_discard", DISCARDS, qualifier="tx_port"),
    NameRule(r"continuous_pause_events", PAUSE_STORM_EVENTS, qualifier="detected"),
    NameRule(r"resume_pause_events", PAUSE_STORM_EVENTS, qualifier="resumed"),
    NameRule(r"continuous_roce_pause_events", PAUSE_STORM_EVENTS, qualifier="roce_detected"),
    NameRule(r"resume_roce_pause_events", PAUSE_STORM_EVENTS, qualifier="roce_resumed"),
)
"""bnxt_en (Broadcom NetXtreme-C/E). Per-ring counters carry a ``[N]: `` prefix and are not mapped."""

ICE: tuple[NameRule, ...] = (
    NameRule(rf"{_DIR}_priority_{_PRIO}_xoff\.nic", PAUSE_FRAMES),
    NameRule(rf"{_DIR}_priority_{_PRIO}_xon\.nic", RESUME_FRAMES),
    # Intel's out-of-tree ice (ice_ethtool.h PICK(): the newer "port-..._events" naming); no capture holds them
    NameRule(rf"port-{_DIR}-xoff_prio-{_PRIO}_events", PAUSE_FRAMES),
    NameRule(rf"port-{_DIR}-xon_prio-{_PRIO}_events", RESUME_FRAMES),
    NameRule(rf"rx_priority_{_PRIO}_xon_2_xoff\.nic", PAUSE_TRANSITIONS, "rx"),
    NameRule(rf"link_xoff_{_DIR}\.nic", LINK_PAUSE_FRAMES),
    NameRule(rf"link_xon_{_DIR}\.nic", LINK_RESUME_FRAMES),
    NameRule(r"rx_dropped\.nic", DISCARDS, qualifier="rx_port_buffer"),
    NameRule(r"tx_dropped_link_down\.nic", DISCARDS, qualifier="tx_link_down"),
)
"""ice (Intel E810): port counters carry a ``.nic`` suffix (in-tree and older out-of-tree drivers), or are named
``port-rx-xoff_prio-N_events`` (newer out-of-tree drivers); no pause duration."""

I40E: tuple[NameRule, ...] = (
    NameRule(rf"port\.{_DIR}_priority_{_PRIO}_xoff", PAUSE_FRAMES),
    NameRule(rf"port\.{_DIR}_priority_{_PRIO}_xon", RESUME_FRAMES),
    # Linux >= 4.17 i40e_gstrings_pfc_stats: the direction is repeated as a suffix
    NameRule(rf"port\.(?:rx_priority_{_PRIO}_xoff_rx)", PAUSE_FRAMES, "rx"),
    NameRule(rf"port\.(?:tx_priority_{_PRIO}_xoff_tx)", PAUSE_FRAMES, "tx"),
    NameRule(rf"port\.(?:rx_priority_{_PRIO}_xon_rx)", RESUME_FRAMES, "rx"),
    NameRule(rf"port\.(?:tx_priority_{_PRIO}_xon_tx)", RESUME_FRAMES, "tx"),
    NameRule(rf"port\.rx_priority_{_PRIO}_xon_2_xoff", PAUSE_TRANSITIONS, "rx"),
    NameRule(rf"port\.link_xoff_{_DIR}", LINK_PAUSE_FRAMES),
    NameRule(rf"port\.link_xon_{_DIR}", LINK_RESUME_FRAMES),
    NameRule(r"port\.rx_dropped", DISCARDS, qualifier="rx_port_buffer"),
    NameRule(r"port\.tx_dropped_link_down", DISCARDS, qualifier="tx_link_down"),
)
"""i40e (Intel X710/XL710): port counters carry a ``port.`` prefix; per-priority names end in ``_xoff`` (older
drivers, the ethq capture) or ``_xoff_rx``/``_xoff_tx`` (Linux i40e_ethtool.c since 4.17); no pause duration."""

MLXSW: tuple[NameRule, ...] = (
    NameRule(rf"{_DIR}_pause_prio_{_PRIO}", PAUSE_FRAMES),
    NameRule(rf"{_DIR}_pause_duration_prio_{_PRIO}", PAUSE_DURATION_US),
    NameRule(rf"{_DIR}_octets_prio_{_PRIO}", PRIORITY_BYTES),
    NameRule(rf"{_DIR}_frames_prio_{_PRIO}", PRIORITY_PACKETS),
    NameRule(r"a_pause_mac_ctrl_frames_received", LINK_PAUSE_FRAMES, "rx"),
    NameRule(r"a_pause_mac_ctrl_frames_xmitted", LINK_PAUSE_FRAMES, "tx"),
    NameRule(r"discard_ingress_general", DISCARDS, qualifier="rx_port"),
    NameRule(r"discard_egress_general", DISCARDS, qualifier="tx_port"),
    NameRule(r"discard_ingress_tx_link_down", DISCARDS, qualifier="tx_link_down"),
)
"""mlxsw (NVIDIA Spectrum switch ASIC ports, ``swpN``): per-priority names from the PPCNT per-priority group
(``rx_octets_prio_N``, ``rx_pause_duration_prio_N``; durations in microseconds as mlx5's, the same firmware
register). Per-TC counters (``tc_no_buffer_discard_uc_tc_N``) are per queue and left out."""

IXGBE: tuple[NameRule, ...] = (
    NameRule(rf"{_DIR}_flow_control_xoff", LINK_PAUSE_FRAMES),
    NameRule(rf"{_DIR}_flow_control_xon", LINK_RESUME_FRAMES),
    NameRule(rf"{_DIR}_pb_{_PRIO}_pxoff", PAUSE_FRAMES),
    NameRule(rf"{_DIR}_pb_{_PRIO}_pxon", RESUME_FRAMES),
    NameRule(r"rx_missed_errors", DISCARDS, qualifier="rx_port_buffer"),
    NameRule(r"rx_no_dma_resources", DISCARDS, qualifier="rx_out_of_buffer"),
)
"""ixgbe (Intel 82599/X540/X550): link-level flow control, and per-packet-buffer PFC counters when DCB is on."""

VIRTIO_NET: tuple[NameRule, ...] = ()
"""virtio_net: per-queue packets/bytes/drops only; nothing lossless-relevant to normalise."""

DRIVER_RULES: dict[str, tuple[NameRule, ...]] = {
    "mlx5_core": MLX5,
    "mlx4_en": MLX4,
    "bnxt_en": BNXT,
    "ice": ICE,
    "i40e": I40E,
    "ixgbe": IXGBE,
    "virtio_net": VIRTIO_NET,
    "mlxsw_spectrum": MLXSW,
}
"""Driver name (as ``ethtool -i`` prints it) -> its rules. An unknown driver is tried against every map in this
order, first match wins (the maps' names do not collide)."""

DRIVER_ALIASES: dict[str, str] = {"mlx5e_rep": "mlx5_core", "mlx4_core": "mlx4_en", "mlxsw_spectrum2": "mlxsw_spectrum",
                                  "mlxsw_spectrum3": "mlxsw_spectrum", "mlxsw_spectrum4": "mlxsw_spectrum"}
