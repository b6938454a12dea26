"""ethtool counter name maps per driver, as data: the NIC families' maps from their profiles, and the maps of the
drivers no profile covers (mlx4_en, i40e, ixgbe, virtio_net, mlxsw_spectrum: read by the exporter, not configured).

Each driver's ``ethtool -S`` names are normalised to a :class:`fabricd.readers.ethtool.CounterKey`; the rule types and
the counter kinds are in :mod:`fabricd.readers.counter_names` (re-exported here). A NIC family's maps live in its
profile (``fabricd/intent/nics/<family>.py``, ``NicProfile.ethtool``) and :data:`DRIVER_NAMES` walks the registry, so a
new family adds no line here.

Sources (names as the drivers print them): the captures in tests/golden/readers/ethtool/ (mlx4, i40e, ixgbe,
virtio_net, mlxsw) and the drivers' sources named per generation. ixgbe's per-priority ``rx_pb_N_pxoff`` names come
from ``ixgbe_ethtool.c`` (no capture holds them). Counters that are per queue, per ring or per CoS are left out on
purpose: they multiply series (node_exporter issue #2096) and carry no lossless-fabric meaning that the per-priority
counters do not.
"""

from __future__ import annotations

from fabricd.intent.nics import PROFILES

from .counter_names import (
    COUNTER_KINDS,
    DIR,
    DISCARDS,
    LINK_PAUSE_DURATION_US,
    LINK_PAUSE_FRAMES,
    LINK_PAUSE_TRANSITIONS,
    LINK_RESUME_FRAMES,
    PAUSE_DURATION_US,
    PAUSE_FRAMES,
    PAUSE_STORM_EVENTS,
    PAUSE_TRANSITIONS,
    PRIO,
    PRIORITY_BYTES,
    PRIORITY_DISCARDS,
    PRIORITY_ECN_MARKED,
    PRIORITY_PACKETS,
    RESUME_FRAMES,
    DriverNames,
    Generation,
    NameRule,
)

MLX4: tuple[NameRule, ...] = (
    NameRule(rf"{DIR}_pause_prio_{PRIO}", PAUSE_FRAMES),
    NameRule(rf"{DIR}_pause_duration_prio_{PRIO}", PAUSE_DURATION_US),
    NameRule(rf"{DIR}_pause_transition_prio_{PRIO}", PAUSE_TRANSITIONS),
    NameRule(rf"{DIR}_prio_{PRIO}_bytes", PRIORITY_BYTES),
    NameRule(rf"{DIR}_prio_{PRIO}_packets", PRIORITY_PACKETS),
    NameRule(rf"{DIR}_pause", LINK_PAUSE_FRAMES),
    NameRule(rf"{DIR}_pause_duration", LINK_PAUSE_DURATION_US),
    NameRule(rf"{DIR}_pause_transition", LINK_PAUSE_TRANSITIONS),
)
"""mlx4_en (ConnectX-3): the priority is a suffix. Durations are microseconds (mlx4_en.h flow-control mailbox)."""

I40E_BEFORE_4_17: tuple[NameRule, ...] = (
    NameRule(rf"port\.{DIR}_priority_{PRIO}_xoff", PAUSE_FRAMES),
    NameRule(rf"port\.{DIR}_priority_{PRIO}_xon", RESUME_FRAMES),
)
"""i40e before Linux 4.17 (and the ethq capture's v2.3.2-k): ``port.rx_priority_N_xoff``."""

I40E_SINCE_4_17: tuple[NameRule, ...] = (
    # Linux >= 4.17 i40e_gstrings_pfc_stats: the direction is repeated as a suffix
    NameRule(rf"port\.(?:rx_priority_{PRIO}_xoff_rx)", PAUSE_FRAMES, "rx"),
    NameRule(rf"port\.(?:tx_priority_{PRIO}_xoff_tx)", PAUSE_FRAMES, "tx"),
    NameRule(rf"port\.(?:rx_priority_{PRIO}_xon_rx)", RESUME_FRAMES, "rx"),
    NameRule(rf"port\.(?:tx_priority_{PRIO}_xon_tx)", RESUME_FRAMES, "tx"),
)
"""i40e since Linux 4.17 (``i40e_gstrings_pfc_stats``): the direction repeated as a suffix."""

I40E_BASE: tuple[NameRule, ...] = (
    NameRule(rf"port\.rx_priority_{PRIO}_xon_2_xoff", PAUSE_TRANSITIONS, "rx"),
    NameRule(rf"port\.link_xoff_{DIR}", LINK_PAUSE_FRAMES),
    NameRule(rf"port\.link_xon_{DIR}", LINK_RESUME_FRAMES),
    NameRule(r"port\.rx_dropped", DISCARDS, qualifier="rx_port_buffer"),
    NameRule(r"port\.tx_dropped_link_down", DISCARDS, qualifier="tx_link_down"),
)
"""i40e (Intel X710/XL710), every release: port counters carry a ``port.`` prefix; no pause duration."""

MLXSW: tuple[NameRule, ...] = (
    NameRule(rf"{DIR}_pause_prio_{PRIO}", PAUSE_FRAMES),
    NameRule(rf"{DIR}_pause_duration_prio_{PRIO}", PAUSE_DURATION_US),
    NameRule(rf"{DIR}_octets_prio_{PRIO}", PRIORITY_BYTES),
    NameRule(rf"{DIR}_frames_prio_{PRIO}", PRIORITY_PACKETS),
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
    NameRule(rf"{DIR}_flow_control_xoff", LINK_PAUSE_FRAMES),
    NameRule(rf"{DIR}_flow_control_xon", LINK_RESUME_FRAMES),
    NameRule(rf"{DIR}_pb_{PRIO}_pxoff", PAUSE_FRAMES),
    NameRule(rf"{DIR}_pb_{PRIO}_pxon", RESUME_FRAMES),
    NameRule(r"rx_missed_errors", DISCARDS, qualifier="rx_port_buffer"),
    NameRule(r"rx_no_dma_resources", DISCARDS, qualifier="rx_out_of_buffer"),
)
"""ixgbe (Intel 82599/X540/X550): link-level flow control, and per-packet-buffer PFC counters when DCB is on."""

VIRTIO_NET: tuple[NameRule, ...] = ()
"""virtio_net: per-queue packets/bytes/drops only; nothing lossless-relevant to normalise."""


OTHER_DRIVERS: tuple[DriverNames, ...] = (
    DriverNames("mlx4_en", (Generation("every release (ConnectX-3)", MLX4, "mlx4_en.h, capture"),)),
    DriverNames(
        "i40e",
        (
            Generation("before Linux 4.17", I40E_BEFORE_4_17, "i40e_ethtool.c; capture (v2.3.2-k)"),
            Generation("Linux 4.17 and later", I40E_SINCE_4_17, "i40e_ethtool.c i40e_gstrings_pfc_stats"),
            Generation("every release", I40E_BASE, "i40e_ethtool.c; capture"),
        ),
    ),
    DriverNames("ixgbe", (Generation("every release", IXGBE, "ixgbe_ethtool.c; capture"),)),
    DriverNames("virtio_net", (Generation("every release", VIRTIO_NET, "capture"),)),
    DriverNames("mlxsw_spectrum", (Generation("every release", MLXSW, "mlxsw spectrum_ethtool.c; capture"),)),
)
"""Drivers fabricd reads but no NIC profile covers (no RDMA family of their own)."""

DRIVER_NAMES: dict[str, DriverNames] = {
    n.driver: n for n in (*(p.ethtool for p in PROFILES if p.ethtool is not None), *OTHER_DRIVERS)
}
"""Driver name (as ``ethtool -i`` prints it) -> its names per generation, with their sources: every profile's
(registry order), then :data:`OTHER_DRIVERS`."""

DRIVER_RULES: dict[str, tuple[NameRule, ...]] = {d: n.rules for d, n in DRIVER_NAMES.items()}
"""Driver name -> every generation's rules. A device whose driver is known is read with its own map only (a driver
without a map normalises nothing); only a device whose driver is unknown (a replay root without ``ethtool -i``) is
tried against every map in this order, first match wins (the maps' names do not collide)."""

DRIVER_ALIASES: dict[str, str] = {
    **{d: p.ethtool.driver for p in PROFILES if p.ethtool is not None for d in p.drivers if d != p.ethtool.driver},
    "mlx4_core": "mlx4_en",
    "mlxsw_spectrum2": "mlxsw_spectrum",
    "mlxsw_spectrum3": "mlxsw_spectrum",
    "mlxsw_spectrum4": "mlxsw_spectrum",
}
"""Another driver name of the same ethtool map: a profile's other netdev drivers (mlx5e_rep -> mlx5_core), and the
drivers no profile covers."""

__all__ = [
    "COUNTER_KINDS",
    "DISCARDS",
    "DRIVER_ALIASES",
    "DRIVER_NAMES",
    "DRIVER_RULES",
    "LINK_PAUSE_DURATION_US",
    "LINK_PAUSE_FRAMES",
    "LINK_PAUSE_TRANSITIONS",
    "LINK_RESUME_FRAMES",
    "OTHER_DRIVERS",
    "PAUSE_DURATION_US",
    "PAUSE_FRAMES",
    "PAUSE_STORM_EVENTS",
    "PAUSE_TRANSITIONS",
    "PRIORITY_BYTES",
    "PRIORITY_DISCARDS",
    "PRIORITY_ECN_MARKED",
    "PRIORITY_PACKETS",
    "RESUME_FRAMES",
    "DriverNames",
    "Generation",
    "NameRule",
]
