"""Broadcom NetXtreme-C/E: BCM574xx, BCM575xx (Thor), BCM576xx (Thor 2, BCM57608) (``bnxt_en`` + ``bnxt_re``).

Sources (Broadcom netxtreme-bnxt_en out-of-tree driver package; read from the public copy
lykeioner/driver@bcef51d69610dff96717235767d3bd075a1e2cdf):

- ``bnxt_re/README.TXT`` "DCB Settings": RoCE traffic must be on TC1 and CNPs on TC2, one RoCE priority, one RoCE
  DSCP in the APP table, the CNP DSCP entry programmed last; "Congestion Control": configfs
  ``/sys/kernel/config/bnxt_re/<dev>/ports/<port>/cc/`` (mkdir the device group first) with ``cnp_dscp cnp_prio
  apply cc_mode roce_prio ecn_enable g inact_cp init_cr init_tr nph_per_state rtt tcp_cp roce_dscp ecn_marking``;
  changes take effect after ``echo 1 > apply``.
- ``bnxt_re/configfs.c``: values are printed as ``%#x`` and parsed as hexadecimal by older drivers (``sscanf %x``),
  so fabricd writes ``0x..``, which both the old and the new (``kstrtouint`` base 0) parsers read alike.
- ``bnxt_re/hw_counters.c``: hw_counters names (CNP/ECN names follow mlx5's).
- ethtool names: the bnxt_en capture in tests/golden/readers/ethtool (``rx_pfc_ena_frames_pri3`` ...).
"""

from __future__ import annotations

from fabricd.model import Transport
from fabricd.readers.counter_names import (
    DIR,
    DISCARDS,
    FEC_CORRECTED_BITS,
    FEC_CORRECTED_CODEWORDS,
    FEC_UNCORRECTABLE_CODEWORDS,
    LINK_PAUSE_FRAMES,
    PAUSE_DURATION_US,
    PAUSE_FRAMES,
    PAUSE_STORM_EVENTS,
    PAUSE_TRANSITIONS,
    PRIO,
    PRIORITY_BYTES,
    PRIORITY_PACKETS,
    DriverNames,
    Generation,
    HwMeaning,
    NameRule,
)

from .base import Knob, LabNic, NicProfile, Prerequisite

CC = "/sys/kernel/config/bnxt_re/{dev}/ports/{port}/cc"
SRC = "Broadcom bnxt_re README.TXT 'Congestion Control' (configfs cc/), netxtreme-bnxt_en"
U8 = (0, 255)


def _knob(name: str, lo: int, hi: int, unit: str, *, verified: bool = True, default: int | None = None) -> Knob:
    return Knob(name, f"{CC}/{name}", lo, hi, unit, SRC, fmt="hex", verified=verified, default=default)


BNXT_BASE: tuple[NameRule, ...] = (
    NameRule(rf"{DIR}_pfc_ena_frames_pri{PRIO}", PAUSE_FRAMES),
    NameRule(rf"pfc_pri{PRIO}_{DIR}_duration_us", PAUSE_DURATION_US),
    NameRule(rf"pfc_pri{PRIO}_{DIR}_transitions", PAUSE_TRANSITIONS),
    NameRule(rf"{DIR}_bytes_pri{PRIO}", PRIORITY_BYTES),
    NameRule(rf"{DIR}_packets_pri{PRIO}", PRIORITY_PACKETS),
    NameRule(rf"{DIR}_pause_frames", LINK_PAUSE_FRAMES),
    NameRule(r"rx_stat_discard", DISCARDS, qualifier="rx_port"),
    NameRule(r"tx_stat_discard", DISCARDS, qualifier="tx_port"),
    NameRule(r"continuous_pause_events", PAUSE_STORM_EVENTS, qualifier="detected"),
    NameRule(r"resume_pause_events", PAUSE_STORM_EVENTS, qualifier="resumed"),
    NameRule(r"continuous_roce_pause_events", PAUSE_STORM_EVENTS, qualifier="roce_detected"),
    NameRule(r"resume_roce_pause_events", PAUSE_STORM_EVENTS, qualifier="roce_resumed"),
)
"""bnxt_en (Broadcom NetXtreme-C/E), the names every release prints. Per-ring counters carry a ``[N]: `` prefix and
are not mapped."""

BNXT_BEFORE_6_6: tuple[NameRule, ...] = (NameRule(r"rx_total_discard_pkts", DISCARDS, qualifier="rx_out_of_buffer"),)
"""bnxt_en before Linux 6.6 (the RHEL 8/9 inbox drivers): the sum of the rings' receive discards is
``rx_total_discard_pkts`` (``bnxt_sw_func_stats[]`` in bnxt_ethtool.c)."""

BNXT_SINCE_6_6: tuple[NameRule, ...] = (NameRule(r"rx_total_ring_discards", DISCARDS, qualifier="rx_out_of_buffer"),)
"""bnxt_en since Linux 6.6: ``bnxt_ring_err_stats_arr[]`` replaced ``bnxt_sw_func_stats[]`` and the same count is
``rx_total_ring_discards`` ("bnxt_en: Display the ring error counters under ethtool -S", Michael Chan, net-next
2023-08-17)."""

BNXT_FEC: tuple[NameRule, ...] = (
    NameRule(r"rx_fec_corrected_blocks", FEC_CORRECTED_CODEWORDS, "rx"),
    NameRule(r"rx_fec_uncorrectable_blocks", FEC_UNCORRECTABLE_CODEWORDS, "rx"),
    NameRule(r"rx_corrected_bits", FEC_CORRECTED_BITS, "rx"),
)
"""bnxt_en with the port's extended receive statistics (firmware that reports them): ``bnxt_rx_port_stats_ext_arr[]``
in bnxt_ethtool.c holds ``rx_corrected_bits``, ``rx_fec_corrected_blocks`` and ``rx_fec_uncorrectable_blocks``; the
driver's own ``bnxt_get_fec_stats()`` reports the two block counters as ethtool's ``corrected_blocks`` /
``uncorrectable_blocks`` (FEC codewords). Read from Linux drivers/net/ethernet/broadcom/bnxt/bnxt_ethtool.c (the
search index's kernel copies, e.g. Broadcom/linux@503b4adc3d041893f5b52aaa5a02bbfe40a1eeb7); the bnxt_en capture in
tests/golden/readers/ethtool prints all three (at 0)."""

ETHTOOL = DriverNames(
    "bnxt_en",
    (
        Generation(
            "every release (the FEC names where the firmware reports extended port statistics)",
            BNXT_BASE + BNXT_FEC,
            "Linux drivers/net/ethernet/broadcom/bnxt/bnxt_ethtool.c (FEC: bnxt_rx_port_stats_ext_arr[], "
            "bnxt_get_fec_stats()); capture",
        ),
        Generation(
            "before Linux 6.6 (RHEL 8/9 inbox)",
            BNXT_BEFORE_6_6,
            "bnxt_ethtool.c bnxt_sw_func_stats[] (rx_total_discard_pkts)",
        ),
        Generation(
            "Linux 6.6 and later",
            BNXT_SINCE_6_6,
            "bnxt_ethtool.c bnxt_ring_err_stats_arr[]: netdev patch 'bnxt_en: Display the ring error "
            "counters under ethtool -S' (2023-08-17)",
        ),
    ),
)
"""bnxt_en ``ethtool -S`` names per generation."""

HW_COUNTERS: dict[str, HwMeaning] = {
    # Broadcom bnxt_re (netxtreme-bnxt_en out-of-tree driver, bnxt_re/hw_counters.c bnxt_re_stat_descs[]; the CNP
    # and ECN names follow mlx5's): source lykeioner/driver@bcef51d69610dff96717235767d3bd075a1e2cdf
    "np_cnp_sent": ("cnp_sent", "tx", None),
    "rp_cnp_handled": ("cnp_handled", "rx", None),
    "rp_cnp_ignored": ("cnp_ignored", "rx", None),
    "np_ecn_marked_roce_packets": ("ecn_marked_packets", "rx", None),
    "rx_pkts": ("packets", "rx", None),
    "tx_pkts": ("packets", "tx", None),
    "out_of_sequence": ("out_of_sequence", "rx", None),
    "out_of_buffer": ("out_of_buffer", "rx", None),
    "packet_seq_err": ("packet_seq_errors", "rx", None),
    "local_ack_timeout_err": ("local_ack_timeout_errors", "tx", None),
    "implied_nak_seq_err": ("implied_nak_seq_errors", "tx", None),
    "roce_adp_retrans": ("retransmits", "tx", None),
    "roce_adp_retrans_to": ("retransmit_timeouts", "tx", None),
    "duplicate_request": ("duplicate_requests", "rx", None),
    "rnr_nak_retry_err": ("rnr_nak_retry_errors", "tx", None),
    "max_retry_exceeded": ("retry_exceeded_errors", "tx", None),
}
"""bnxt_re ``hw_counters`` (BCM574xx/575xx/576xx). ``rx_bytes``/``tx_bytes`` stay by their own name: they count
RoCE payload bytes per the README, not PMA data."""

PROFILE = NicProfile(
    family="bnxt",
    title="Broadcom NetXtreme-E BCM574xx/575xx/576xx, Thor/Thor 2 (bnxt_en, bnxt_re)",
    drivers=("bnxt_en",),
    rdma_drivers=("bnxt_re",),
    transports=frozenset({Transport.ROCE_V2_LOSSLESS, Transport.ROCE_V2_LOSSY}),
    dcb=True,
    apptrust=False,
    max_tcs=8,
    max_pfc_priorities=1,
    tc_of_class={"default": 0, "roce": 1, "cnp": 2},
    app_all_dscp=False,
    global_pause=True,
    rdma_cm=True,
    traffic_class=False,
    ethtool=ETHTOOL,
    hw_counters=HW_COUNTERS,
    lab=LabNic("bnxt_en-ethq.txt", "bnxt_en"),
    cc_group="/sys/kernel/config/bnxt_re/{dev}",
    cc_commit=f"{CC}/apply",
    roles={
        "roce_dscp": _knob("roce_dscp", 0, 63, "DSCP"),
        "roce_prio": _knob("roce_prio", 0, 7, "802.1p priority"),
        "cnp_dscp": _knob("cnp_dscp", 0, 63, "DSCP"),
        "cnp_prio": _knob("cnp_prio", 0, 7, "802.1p priority"),
        "cc_enable.roce_v2_lossless": _knob("ecn_enable", 0, 1, "bool"),
        "cc_enable.roce_v2_lossy": _knob("ecn_enable", 0, 1, "bool"),
    },
    tunables={
        # the README lists these files without ranges or units: ranges are the u8 fields of the driver's
        # bnxt_qplib_cc_param, unverified
        "ecn_marking": _knob("ecn_marking", 0, 3, "ECN codepoint marked on RoCE packets", verified=False),
        "cc_mode": _knob("cc_mode", 0, 1, "0 = DCTCP-like, 1 = probabilistic (firmware-defined)", verified=False),
        "g": _knob("g", *U8, "alpha update gain", verified=False),
        "inact_cp": _knob("inact_cp", *U8, "inactivity threshold", verified=False),
        "init_cr": _knob("init_cr", 0, 65535, "initial current rate", verified=False),
        "init_tr": _knob("init_tr", 0, 65535, "initial target rate", verified=False),
        "nph_per_state": _knob("nph_per_state", *U8, "no-congestion phases per state", verified=False),
        "rtt": _knob("rtt", 0, 65535, "RTT timer, µs", verified=False),
        "tcp_cp": _knob("tcp_cp", *U8, "TCP congestion probability", verified=False),
        # README "DCB Settings": the driver tags RoCE with a priority VLAN 0 by default; 1 disables that for
        # DSCP-only PFC
        "disable_prio_vlan_tx": _knob("disable_prio_vlan_tx", 0, 1, "bool: no VLAN 0 priority tag on RoCE"),
    },
    prerequisites=(
        Prerequisite(
            what="host-managed DCB: the firmware LLDP/DCBX agent off, so that bnxt_en accepts DCB netlink settings "
            "(else they come from the switch or from Broadcom niccli/bnxtqos)",
            check="dcb pfc show dev {netdev} > /dev/null",
            command="disable the firmware LLDP agent with Broadcom niccli (see the bnxt_en README)",
            source="bnxt_re README.TXT 'DCB Settings' (bnxtqos, niccli, lldptool); unverified which niccli option",
            verified=False,
        ),
    ),
    sources=(
        "Broadcom netxtreme-bnxt_en bnxt_re/README.TXT (DCB Settings, Congestion Control, Sysfs counters)",
        "Broadcom netxtreme-bnxt_en bnxt_re/configfs.c, bnxt_re/hw_counters.c",
    ),
    limits=(
        "RoCE must be on TC1 and CNPs on TC2 (README): fabricd pins those TCs on these NICs",
        "one RoCE priority (one PFC priority) and one RoCE DSCP in the APP table; the CNP DSCP entry goes last",
        "no mlx5 DCQCN parameters (rpg_*, dce_tcp_*...): the cc/ knobs are Broadcom's own; ranges unverified",
        "configfs cc/ exists with Broadcom's out-of-tree bnxt_re only (the inbox driver has no cc/ tree)",
    ),
)
