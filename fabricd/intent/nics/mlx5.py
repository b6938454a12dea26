"""NVIDIA ConnectX-4 and later, BlueField (``mlx5_core`` + ``mlx5_ib``).

Sources:

- DCB netlink: mlx5 implements the IEEE dcbnl ops (``ieee_setpfc``, ``ieee_setets``, ``dcbnl_setapptrust`` since
  Linux 6.3, DSCP APP entries); ``mlnx_qos`` (mlnx-tools) drives the same netlink and the OFED trust sysfs.
- ECN/DCQCN: ``/sys/class/net/<if>/ecn/roce_np|roce_rp`` (MLNX_OFED / DOCA-OFED ``mlx5_core`` only, absent from the
  inbox driver; parsed by prometheus/procfs ``sysfs/net_class_ecn.go``); ranges from NVIDIA DOCA "DCQCN CC
  Parameters" as already held by :class:`fabricd.model.DcqcnRp`/:class:`fabricd.model.DcqcnNp`.
- RoCE ToS: configfs ``rdma_cm`` (Documentation/ABI/testing/configfs-rdma_cm) and MLNX_OFED
  ``/sys/class/infiniband/<dev>/tc/<port>/traffic_class``.
- Counters: Documentation/networking/device_drivers/ethernet/mellanox/mlx5/counters.rst (ethtool), mlx5_ib
  hw_counters (NVIDIA "Understanding mlx5 Linux Counters").
"""

from __future__ import annotations

from fabricd.model import DcqcnNp, DcqcnRp, Transport
from fabricd.readers.counter_names import (
    DIR,
    DISCARDS,
    FEC_CORRECTED_BITS,
    LINK_PAUSE_DURATION_US,
    LINK_PAUSE_FRAMES,
    LINK_PAUSE_TRANSITIONS,
    PAUSE_DURATION_US,
    PAUSE_FRAMES,
    PAUSE_STORM_EVENTS,
    PAUSE_TRANSITIONS,
    PRIO,
    PRIORITY_BYTES,
    PRIORITY_DISCARDS,
    PRIORITY_ECN_MARKED,
    PRIORITY_PACKETS,
    DriverNames,
    Generation,
    HwMeaning,
    NameRule,
)

from .base import Knob, LabNic, NicProfile

ECN = "/sys/class/net/{netdev}/ecn"
SRC_ECN = "MLNX_OFED mlx5 ECN sysfs (/sys/class/net/<if>/ecn); NVIDIA DOCA 'DCQCN CC Parameters'"


def _from_model(point: str, model: type[DcqcnRp] | type[DcqcnNp]) -> dict[str, Knob]:
    out: dict[str, Knob] = {}
    for name, f in model.model_fields.items():
        lo = hi = None
        for meta in f.metadata:
            lo = getattr(meta, "ge", lo)
            hi = getattr(meta, "le", hi)
        out[name] = Knob(
            name=name,
            path=f"{ECN}/{point}/{name}",
            minimum=int(lo or 0),
            maximum=int(hi or 0),
            unit=f.description or "",
            source=SRC_ECN,
        )
    return out


TUNABLES = {**_from_model("roce_rp", DcqcnRp), **_from_model("roce_np", DcqcnNp)}

MLX5_BASE: tuple[NameRule, ...] = (
    NameRule(rf"{DIR}_prio{PRIO}_pause", PAUSE_FRAMES),
    NameRule(rf"{DIR}_prio{PRIO}_pause_duration", PAUSE_DURATION_US),
    NameRule(rf"{DIR}_prio{PRIO}_pause_transition", PAUSE_TRANSITIONS),
    NameRule(rf"{DIR}_prio{PRIO}_bytes", PRIORITY_BYTES),
    NameRule(rf"{DIR}_prio{PRIO}_packets", PRIORITY_PACKETS),
    NameRule(rf"rx_prio{PRIO}_discards", PRIORITY_DISCARDS, "rx", "port_buffer"),
    NameRule(rf"{DIR}_global_pause", LINK_PAUSE_FRAMES),
    NameRule(rf"{DIR}_global_pause_duration", LINK_PAUSE_DURATION_US),
    NameRule(rf"{DIR}_global_pause_transition", LINK_PAUSE_TRANSITIONS),
    NameRule(r"rx_discards_phy", DISCARDS, qualifier="rx_port_buffer"),
    NameRule(r"rx_out_of_buffer", DISCARDS, qualifier="rx_out_of_buffer"),
    NameRule(r"tx_discards_phy", DISCARDS, qualifier="tx_port"),
)
"""mlx5_core (ConnectX-4 and later), the names every release prints. Per-priority pause counters exist only for
PFC-enabled priorities; with global pause the driver prints ``*_global_pause*`` instead. Durations are microseconds
(mlx5 counters.rst)."""

MLX5_NEWER: tuple[NameRule, ...] = (
    NameRule(rf"rx_prio{PRIO}_buf_discard", PRIORITY_DISCARDS, "rx", "host_buffer"),
    NameRule(rf"rx_prio{PRIO}_cong_discard", PRIORITY_DISCARDS, "rx", "host_congestion"),
    NameRule(rf"rx_prio{PRIO}_marked", PRIORITY_ECN_MARKED, "rx"),
    NameRule(r"tx_pause_storm_warning_events", PAUSE_STORM_EVENTS, qualifier="warning"),
    NameRule(r"tx_pause_storm_error_events", PAUSE_STORM_EVENTS, qualifier="error"),
)
"""mlx5_core names later releases added (counters.rst of current kernels and MLNX_OFED): per-priority host buffer and
congestion discards, per-priority ECN marks, the pause-storm protection events. Older drivers do not print them, so
their absence is not an error."""

MLX5_PHY: tuple[NameRule, ...] = (NameRule(r"rx_corrected_bits_phy", FEC_CORRECTED_BITS, "rx"),)
"""mlx5_core physical-layer statistical counters (ConnectX-5 and later, ``pport_phy_statistical_stats_desc[]`` in
drivers/net/ethernet/mellanox/mlx5/core/en_stats.c): ``rx_corrected_bits_phy`` counts the bits the port's FEC
corrected. mlx5 prints no FEC codeword counts under ``ethtool -S`` (they come from ``ethtool -I --show-fec``), and the
per-lane ``rx_err_lane_N_phy`` are raw bit errors per lane, not read. The mlx5 global-pause capture in
tests/golden/readers/ethtool prints it (at 0)."""

ETHTOOL = DriverNames(
    "mlx5_core",
    (
        Generation(
            "every release (ConnectX-4 and later)",
            MLX5_BASE,
            "Documentation/networking/device_drivers/ethernet/mellanox/mlx5/counters.rst; captures",
        ),
        Generation(
            "later releases (names added to counters.rst, MLNX_OFED)",
            MLX5_NEWER,
            "counters.rst (rx_prioN_buf_discard, rx_prioN_cong_discard, rx_prioN_marked, pause storm)",
        ),
        Generation(
            "ConnectX-5 and later (physical-layer statistical group)",
            MLX5_PHY,
            "en_stats.c pport_phy_statistical_stats_desc[] (rx_corrected_bits_phy)",
        ),
    ),
)
"""mlx5_core ``ethtool -S`` names per generation."""

HW_COUNTERS: dict[str, HwMeaning] = {
    # mlx5_ib (Linux Documentation/infiniband/... and NVIDIA "Understanding mlx5 Linux Counters")
    "np_cnp_sent": ("cnp_sent", "tx", None),
    "rp_cnp_handled": ("cnp_handled", "rx", None),
    "rp_cnp_ignored": ("cnp_ignored", "rx", None),
    "np_ecn_marked_roce_packets": ("ecn_marked_packets", "rx", None),
    "out_of_sequence": ("out_of_sequence", "rx", None),
    "out_of_buffer": ("out_of_buffer", "rx", None),
    "packet_seq_err": ("packet_seq_errors", "rx", None),
    "local_ack_timeout_err": ("local_ack_timeout_errors", "tx", None),
    "implied_nak_seq_err": ("implied_nak_seq_errors", "tx", None),
    "roce_adp_retrans": ("retransmits", "tx", None),
    "roce_adp_retrans_to": ("retransmit_timeouts", "tx", None),
    "duplicate_request": ("duplicate_requests", "rx", None),
    "rnr_nak_retry_err": ("rnr_nak_retry_errors", "tx", None),
    "req_transport_retries_exceeded": ("retry_exceeded_errors", "tx", None),
}
"""mlx5_ib ``hw_counters`` (ConnectX, BlueField)."""

PROFILE = NicProfile(
    family="mlx5",
    title="NVIDIA ConnectX-4/5/6/7, BlueField (mlx5_core, mlx5_ib)",
    drivers=("mlx5_core", "mlx5e_rep"),
    rdma_drivers=("mlx5_ib",),
    transports=frozenset({Transport.ROCE_V2_LOSSLESS, Transport.ROCE_V2_LOSSY, Transport.INFINIBAND}),
    dcb=True,
    apptrust=True,
    max_tcs=8,
    max_pfc_priorities=8,
    global_pause=True,
    rdma_cm=True,
    traffic_class=True,
    ethtool=ETHTOOL,
    hw_counters=HW_COUNTERS,
    lab=LabNic("mlx5-grep-prio-bytes-packets-byteps-issue179.txt", "mlx5_core", device_capture=True),
    roles={
        "cnp_dscp": Knob("cnp_dscp", f"{ECN}/roce_np/cnp_dscp", 0, 63, "DSCP", SRC_ECN, default=48),
        "cnp_prio": Knob("cnp_prio", f"{ECN}/roce_np/cnp_802p_prio", 0, 7, "802.1p priority", SRC_ECN, default=6),
        "np_enable": Knob("np_enable", f"{ECN}/roce_np/enable/{{prio}}", 0, 1, "bool", SRC_ECN),
        "rp_enable": Knob("rp_enable", f"{ECN}/roce_rp/enable/{{prio}}", 0, 1, "bool", SRC_ECN),
    },
    tunables=TUNABLES,
    sources=(
        "Linux Documentation/networking/device_drivers/ethernet/mellanox/mlx5/counters.rst",
        SRC_ECN,
        "Linux Documentation/ABI/testing/configfs-rdma_cm",
        "mlnx-tools mlnx_qos, cma_roce_tos, cma_roce_mode",
    ),
    limits=(
        "ECN/DCQCN sysfs exists with MLNX_OFED/DOCA-OFED only; the inbox (upstream) driver has no ecn/ directory: "
        "it keeps the DCQCN parameters and the CNP DSCP/priority in debugfs "
        "/sys/kernel/debug/mlx5/<pci>/cc_params/ (rp_*, np_cnp_dscp, np_cnp_prio; Linux "
        "drivers/infiniband/hw/mlx5/cong.c), which fabricd does not write (debugfs is no stable ABI): with the inbox "
        "driver and DCQCN on, `host apply` stops at the first ecn/ file and restores, and the script says which",
        "tc/<port>/traffic_class is MLNX_OFED only (optional step)",
    ),
)
