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


MLX5_BASE: tuple[NameRule, ...] = (
    NameRule(rf"{_DIR}_prio{_PRIO}_pause", PAUSE_FRAMES),
    NameRule(rf"{_DIR}_prio{_PRIO}_pause_duration", PAUSE_DURATION_US),
    NameRule(rf"{_DIR}_prio{_PRIO}_pause_transition", PAUSE_TRANSITIONS),
    NameRule(rf"{_DIR}_prio{_PRIO}_bytes", PRIORITY_BYTES),
    NameRule(rf"{_DIR}_prio{_PRIO}_packets", PRIORITY_PACKETS),
    NameRule(rf"rx_prio{_PRIO}_discards", PRIORITY_DISCARDS, "rx", "port_buffer"),
    NameRule(rf"{_DIR}_global_pause", LINK_PAUSE_FRAMES),
    NameRule(rf"{_DIR}_global_pause_duration", LINK_PAUSE_DURATION_US),
    NameRule(rf"{_DIR}_global_pause_transition", LINK_PAUSE_TRANSITIONS),
    NameRule(r"rx_discards_phy", DISCARDS, qualifier="rx_port_buffer"),
    NameRule(r"rx_out_of_buffer", DISCARDS, qualifier="rx_out_of_buffer"),
    NameRule(r"tx_discards_phy", DISCARDS, qualifier="tx_port"),
)
"""mlx5_core (ConnectX-4 and later), the names every release prints. Per-priority pause counters exist only for
PFC-enabled priorities; with global pause the driver prints ``*_global_pause*`` instead. Durations are microseconds
(mlx5 counters.rst)."""

MLX5_NEWER: tuple[NameRule, ...] = (
    NameRule(rf"rx_prio{_PRIO}_buf_discard", PRIORITY_DISCARDS, "rx", "host_buffer"),
    NameRule(rf"rx_prio{_PRIO}_cong_discard", PRIORITY_DISCARDS, "rx", "host_congestion"),
    NameRule(rf"rx_prio{_PRIO}_marked", PRIORITY_ECN_MARKED, "rx"),
    NameRule(r"tx_pause_storm_warning_events", PAUSE_STORM_EVENTS, qualifier="warning"),
    NameRule(r"tx_pause_storm_error_events", PAUSE_STORM_EVENTS, qualifier="error"),
)
"""mlx5_core names later releases added (counters.rst of current kernels and MLNX_OFED): per-priority host buffer and
congestion discards, per-priority ECN marks, the pause-storm protection events. Older drivers do not print them, so
their absence is not an error."""

MLX5: tuple[NameRule, ...] = MLX5_BASE + MLX5_NEWER

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

BNXT_BASE: tuple[NameRule, ...] = (
    NameRule(rf"{_DIR}_pfc_ena_frames_pri{_PRIO}", PAUSE_FRAMES),
    NameRule(rf"pfc_pri{_PRIO}_{_DIR}_duration_us", PAUSE_DURATION_US),
    NameRule(rf"pfc_pri{_PRIO}_{_DIR}_transitions", PAUSE_TRANSITIONS),
    NameRule(rf"{_DIR}_bytes_pri{_PRIO}", PRIORITY_BYTES),
    NameRule(rf"{_DIR}_packets_pri{_PRIO}", PRIORITY_PACKETS),
    NameRule(rf"{_DIR}_pause_frames", LINK_PAUSE_FRAMES),
    NameRule(r"rx_stat_discard", DISCARDS, qualifier="rx_port"),
    NameRule(r"tx_stat_discard", DISCARDS, qualifier="tx_port"),
    NameRule(r"continuous_pause_events", PAUSE_STORM_EVENTS, qualifier="detected"),
    NameRule(r"resume_pause_events", PAUSE_STORM_EVENTS, qualifier="resumed"),
    NameRule(r"continuous_roce_pause_events", PAUSE_STORM_EVENTS, qualifier="roce_detected"),
    NameRule(r"resume_roce_pause_events", PAUSE_STORM_EVENTS, qualifier="roce_resumed"),
)
"""bnxt_en (Broadcom NetXtreme-C/E), the names every release prints. Per-ring counters carry a ``[N]: `` prefix and
are not mapped."""

BNXT_BEFORE_6_6: tuple[NameRule, ...] = (
    NameRule(r"rx_total_discard_pkts", DISCARDS, qualifier="rx_out_of_buffer"),
)
"""bnxt_en before Linux 6.6 (the RHEL 8/9 inbox drivers): the sum of the rings' receive discards is
``rx_total_discard_pkts`` (``bnxt_sw_func_stats[]`` in bnxt_ethtool.c)."""

BNXT_SINCE_6_6: tuple[NameRule, ...] = (
    NameRule(r"rx_total_ring_discards", DISCARDS, qualifier="rx_out_of_buffer"),
)
"""bnxt_en since Linux 6.6: ``bnxt_ring_err_stats_arr[]`` replaced ``bnxt_sw_func_stats[]`` and the same count is
``rx_total_ring_discards`` ("bnxt_en: Display the ring error counters under ethtool -S", Michael Chan, net-next
2023-08-17)."""

BNXT: tuple[NameRule, ...] = BNXT_BASE + BNXT_BEFORE_6_6 + BNXT_SINCE_6_6

ICE_NIC_SUFFIX: tuple[NameRule, ...] = (
    NameRule(rf"{_DIR}_priority_{_PRIO}_xoff\.nic", PAUSE_FRAMES),
    NameRule(rf"{_DIR}_priority_{_PRIO}_xon\.nic", RESUME_FRAMES),
    NameRule(rf"rx_priority_{_PRIO}_xon_2_xoff\.nic", PAUSE_TRANSITIONS, "rx"),
    NameRule(rf"link_xoff_{_DIR}\.nic", LINK_PAUSE_FRAMES),
    NameRule(rf"link_xon_{_DIR}\.nic", LINK_RESUME_FRAMES),
    NameRule(r"rx_dropped\.nic", DISCARDS, qualifier="rx_port_buffer"),
    NameRule(r"tx_dropped_link_down\.nic", DISCARDS, qualifier="tx_link_down"),
)
"""ice (Intel E810), in-tree and older out-of-tree drivers: port counters carry a ``.nic`` suffix; no pause
duration."""

ICE_EVENTS: tuple[NameRule, ...] = (
    NameRule(rf"port-{_DIR}-xoff_prio-{_PRIO}_events", PAUSE_FRAMES),
    NameRule(rf"port-{_DIR}-xon_prio-{_PRIO}_events", RESUME_FRAMES),
)
"""ice, newer out-of-tree drivers (Intel's ice_ethtool.h ``PICK()``: ``port-rx-xoff_prio-N_events``); no capture
holds them."""

ICE: tuple[NameRule, ...] = ICE_NIC_SUFFIX + ICE_EVENTS

I40E_BEFORE_4_17: tuple[NameRule, ...] = (
    NameRule(rf"port\.{_DIR}_priority_{_PRIO}_xoff", PAUSE_FRAMES),
    NameRule(rf"port\.{_DIR}_priority_{_PRIO}_xon", RESUME_FRAMES),
)
"""i40e before Linux 4.17 (and the ethq capture's v2.3.2-k): ``port.rx_priority_N_xoff``."""

I40E_SINCE_4_17: tuple[NameRule, ...] = (
    # Linux >= 4.17 i40e_gstrings_pfc_stats: the direction is repeated as a suffix
    NameRule(rf"port\.(?:rx_priority_{_PRIO}_xoff_rx)", PAUSE_FRAMES, "rx"),
    NameRule(rf"port\.(?:tx_priority_{_PRIO}_xoff_tx)", PAUSE_FRAMES, "tx"),
    NameRule(rf"port\.(?:rx_priority_{_PRIO}_xon_rx)", RESUME_FRAMES, "rx"),
    NameRule(rf"port\.(?:tx_priority_{_PRIO}_xon_tx)", RESUME_FRAMES, "tx"),
)
"""i40e since Linux 4.17 (``i40e_gstrings_pfc_stats``): the direction repeated as a suffix."""

I40E_BASE: tuple[NameRule, ...] = (
    NameRule(rf"port\.rx_priority_{_PRIO}_xon_2_xoff", PAUSE_TRANSITIONS, "rx"),
    NameRule(rf"port\.link_xoff_{_DIR}", LINK_PAUSE_FRAMES),
    NameRule(rf"port\.link_xon_{_DIR}", LINK_RESUME_FRAMES),
    NameRule(r"port\.rx_dropped", DISCARDS, qualifier="rx_port_buffer"),
    NameRule(r"port\.tx_dropped_link_down", DISCARDS, qualifier="tx_link_down"),
)
"""i40e (Intel X710/XL710), every release: port counters carry a ``port.`` prefix; no pause duration."""

I40E: tuple[NameRule, ...] = I40E_BEFORE_4_17 + I40E_SINCE_4_17 + I40E_BASE

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

IONIC: tuple[NameRule, ...] = (
    NameRule(rf"{_DIR}_pripause_{_PRIO}_1us_count", PAUSE_DURATION_US),
    NameRule(rf"frames_{_DIR}_pri_{_PRIO}", PRIORITY_PACKETS),
    NameRule(rf"frames_{_DIR}_pripause", PAUSE_FRAMES, qualifier="all_priorities"),
    NameRule(rf"frames_{_DIR}_pause", LINK_PAUSE_FRAMES),
    NameRule(rf"{_DIR}_pause_1us_count", LINK_PAUSE_DURATION_US),
    NameRule(r"frames_rx_dropped", DISCARDS, qualifier="rx_port"),
)
"""ionic (AMD Pensando DSC/Pollara, ``ionic_port_stats_desc[]`` in Linux ionic_stats.c): per-priority frames and
per-priority pause time in 1 us units (``rx_pripause_3_1us_count``), PFC frames only as a total over all priorities
(``frames_rx_pripause``, qualifier ``all_priorities``), 802.3x pause frames and time. Names from the driver source
only: no ``ethtool -S`` capture of an ionic port was found."""


@dataclass(frozen=True, slots=True)
class Generation:
    """The names one generation of a driver prints: which releases (``releases``), the rules, where the names come
    from (``source``)."""

    releases: str
    rules: tuple[NameRule, ...]
    source: str


@dataclass(frozen=True, slots=True)
class DriverNames:
    """One driver's ``ethtool -S`` names, per generation. ``unverified`` says why no real capture backs the map
    (None: tests/golden/readers/ethtool holds one). A device's counters are read with its own driver's map only."""

    driver: str
    generations: tuple[Generation, ...]
    unverified: str | None = None

    @property
    def rules(self) -> tuple[NameRule, ...]:
        """Every generation's rules: the names of different releases do not collide, so one map reads them all."""
        return tuple(r for g in self.generations for r in g.rules)


_KERNEL = "Linux drivers/net/ethernet/"
DRIVER_NAMES: dict[str, DriverNames] = {n.driver: n for n in (
    DriverNames("mlx5_core", (
        Generation("every release (ConnectX-4 and later)", MLX5_BASE,
                   "Documentation/networking/device_drivers/ethernet/mellanox/mlx5/counters.rst; captures"),
        Generation("later releases (names added to counters.rst, MLNX_OFED)", MLX5_NEWER,
                   "counters.rst (rx_prioN_buf_discard, rx_prioN_cong_discard, rx_prioN_marked, pause storm)"),
    )),
    DriverNames("mlx4_en", (Generation("every release (ConnectX-3)", MLX4, "mlx4_en.h, capture"),)),
    DriverNames("bnxt_en", (
        Generation("every release", BNXT_BASE, f"{_KERNEL}broadcom/bnxt/bnxt_ethtool.c; capture"),
        Generation("before Linux 6.6 (RHEL 8/9 inbox)", BNXT_BEFORE_6_6,
                   "bnxt_ethtool.c bnxt_sw_func_stats[] (rx_total_discard_pkts)"),
        Generation("Linux 6.6 and later", BNXT_SINCE_6_6,
                   "bnxt_ethtool.c bnxt_ring_err_stats_arr[]: netdev patch 'bnxt_en: Display the ring error "
                   "counters under ethtool -S' (2023-08-17)"),
    )),
    DriverNames("ice", (
        Generation("in-tree and older out-of-tree (.nic suffix)", ICE_NIC_SUFFIX, "ice_ethtool.c; capture"),
        Generation("newer out-of-tree (port-*_events)", ICE_EVENTS, "Intel ice_ethtool.h PICK(); no capture"),
    )),
    DriverNames("i40e", (
        Generation("before Linux 4.17", I40E_BEFORE_4_17, "i40e_ethtool.c; capture (v2.3.2-k)"),
        Generation("Linux 4.17 and later", I40E_SINCE_4_17, "i40e_ethtool.c i40e_gstrings_pfc_stats"),
        Generation("every release", I40E_BASE, "i40e_ethtool.c; capture"),
    )),
    DriverNames("ixgbe", (Generation("every release", IXGBE, "ixgbe_ethtool.c; capture"),)),
    DriverNames("virtio_net", (Generation("every release", VIRTIO_NET, "capture"),)),
    DriverNames("mlxsw_spectrum", (Generation("every release", MLXSW, "mlxsw spectrum_ethtool.c; capture"),)),
    DriverNames("ionic", (
        Generation("in-tree drivers with port stats in ethtool -S (release not pinned)", IONIC,
                   f"{_KERNEL}pensando/ionic/ionic_stats.c ionic_port_stats_desc[] (ctrliq/kernel-src-tree "
                   "@ 48ffa8e1b9cdce8b4fac76ac0cbff94bc48fd81e)"),
    ), unverified="names from the driver source (ionic_stats.c); no `ethtool -S` capture of an ionic port found"),
)}
"""Driver name (as ``ethtool -i`` prints it) -> its names per generation, with their sources."""

DRIVER_RULES: dict[str, tuple[NameRule, ...]] = {d: n.rules for d, n in DRIVER_NAMES.items()}
"""Driver name -> every generation's rules. A device whose driver is known is read with its own map only (a driver
without a map normalises nothing); only a device whose driver is unknown (a replay root without ``ethtool -i``) is
tried against every map in this order, first match wins (the maps' names do not collide)."""

DRIVER_ALIASES: dict[str, str] = {"mlx5e_rep": "mlx5_core", "mlx4_core": "mlx4_en", "mlxsw_spectrum2": "mlxsw_spectrum",
                                  "mlxsw_spectrum3": "mlxsw_spectrum", "mlxsw_spectrum4": "mlxsw_spectrum"}
