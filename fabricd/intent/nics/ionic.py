"""AMD Pensando DSC and Pollara (``ionic`` netdev, ``ionic_rdma`` RDMA): counters only.

What is verified, and from where:

- ``ethtool -S`` names: the in-tree driver's ``ionic_port_stats_desc[]`` (Linux drivers/net/ethernet/pensando/ionic/
  ionic_stats.c, read at ctrliq/kernel-src-tree @ 48ffa8e1b9cdce8b4fac76ac0cbff94bc48fd81e): per-priority frames
  ``frames_rx_pri_N``, per-priority pause time ``rx_pripause_N_1us_count`` (1 us units), PFC frames only as a total
  (``frames_rx_pripause``), 802.3x pause (``frames_rx_pause``, ``rx_pause_1us_count``). Driver source only: no
  ``ethtool -S`` capture of an ionic port was found.
- RDMA ``hw_counters``: the kernel driver (drivers/infiniband/hw/ionic/ionic_hw_stats.c, torvalds/linux
  @ 4f38da1f027ea2c9f01bb71daa7a299c191b6940) takes the names from the device; the list is Pensando's firmware HAL
  ``rdma_stats_hdrs[]`` (``tx_rdma_cnp_pkts``, ``rx_rdma_cnp_pkts``, ``rx_rdma_ecn_pkts``, ``req_rx_pkt_seq_err``...).
  Unverified against a device.
- Configuration: none. No public source for ionic's DCB (trust, PFC, ETS, DSCP map) or congestion-control interface
  was found (the in-tree netdev driver read here has no dcbnl operations in its stats code, and AMD's tools are not
  public sources), so fabricd configures nothing on this family and ``fabricd validate`` refuses an ionic NIC in an
  inventory (FAB081: no transport it can configure), while the exporter reads its counters.
"""

from __future__ import annotations

from fabricd.readers.counter_names import (
    DIR,
    DISCARDS,
    LINK_PAUSE_DURATION_US,
    LINK_PAUSE_FRAMES,
    PAUSE_DURATION_US,
    PAUSE_FRAMES,
    PRIO,
    PRIORITY_PACKETS,
    DriverNames,
    Generation,
    HwMeaning,
    NameRule,
)

from .base import LabNic, NicProfile

IONIC: tuple[NameRule, ...] = (
    NameRule(rf"{DIR}_pripause_{PRIO}_1us_count", PAUSE_DURATION_US),
    NameRule(rf"frames_{DIR}_pri_{PRIO}", PRIORITY_PACKETS),
    NameRule(rf"frames_{DIR}_pripause", PAUSE_FRAMES, qualifier="all_priorities"),
    NameRule(rf"frames_{DIR}_pause", LINK_PAUSE_FRAMES),
    NameRule(rf"{DIR}_pause_1us_count", LINK_PAUSE_DURATION_US),
    NameRule(r"frames_rx_dropped", DISCARDS, qualifier="rx_port"),
)
"""ionic (AMD Pensando DSC/Pollara, ``ionic_port_stats_desc[]`` in Linux ionic_stats.c): per-priority frames and
per-priority pause time in 1 us units (``rx_pripause_3_1us_count``), PFC frames only as a total over all priorities
(``frames_rx_pripause``, qualifier ``all_priorities``), 802.3x pause frames and time. Names from the driver source
only: no ``ethtool -S`` capture of an ionic port was found."""


ETHTOOL = DriverNames(
    "ionic",
    (
        Generation(
            "in-tree drivers with port stats in ethtool -S (release not pinned)",
            IONIC,
            "Linux drivers/net/ethernet/pensando/ionic/ionic_stats.c ionic_port_stats_desc[] "
            "(ctrliq/kernel-src-tree @ 48ffa8e1b9cdce8b4fac76ac0cbff94bc48fd81e)",
        ),
    ),
    unverified="names from the driver source (ionic_stats.c); no `ethtool -S` capture of an ionic port found",
)
"""ionic ``ethtool -S`` names (one generation, unverified)."""

HW_COUNTERS: dict[str, HwMeaning] = {
    # AMD Pensando ionic RDMA: the names are the firmware's (Linux drivers/infiniband/hw/ionic/ionic_hw_stats.c asks
    # the device for them, IONIC_V1_ADMIN_STATS_HDRS); this list is Pensando's firmware HAL rdma_stats_hdrs[]
    # (ccdxc/sw nic/hal/plugins/cfg/rdma, code index file id 1347570567), unverified against a device
    "tx_rdma_cnp_pkts": ("cnp_sent", "tx", None),
    "rx_rdma_cnp_pkts": ("cnp_handled", "rx", None),
    "rx_rdma_ecn_pkts": ("ecn_marked_packets", "rx", None),
    "tx_rdma_ucast_pkts": ("packets", "tx", None),
    "rx_rdma_ucast_pkts": ("packets", "rx", None),
    "req_rx_pkt_seq_err": ("packet_seq_errors", "rx", None),
    "req_rx_impl_nak_seq_err": ("implied_nak_seq_errors", "tx", None),
    "req_rx_rnr_retry_err": ("rnr_nak_retry_errors", "tx", None),
    "req_tx_retry_excd_err": ("retry_exceeded_errors", "tx", None),
    "resp_rx_dup_request": ("duplicate_requests", "rx", None),
    "resp_rx_outof_buf": ("out_of_buffer", "rx", None),
    "resp_rx_outouf_seq": ("out_of_sequence", "rx", None),
}
"""ionic RDMA ``hw_counters`` (AMD Pensando DSC, Pollara). ``rx_rdma_cnp_pkts`` counts the CNPs received, which mlx5
splits into ``rp_cnp_handled`` and ``rp_cnp_ignored``; ``resp_rx_outouf_seq`` is the firmware's spelling. Byte
counters (``tx_rdma_ucast_bytes``) stay by their own name. **Unverified**: from the firmware source, no capture."""

PROFILE = NicProfile(
    family="ionic",
    title="AMD Pensando DSC / Pollara (ionic, ionic_rdma): counters only",
    drivers=("ionic",),
    rdma_drivers=("ionic_rdma",),
    transports=frozenset(),
    dcb=False,
    apptrust=False,
    max_tcs=0,
    max_pfc_priorities=0,
    global_pause=False,
    rdma_cm=False,
    traffic_class=False,
    ethtool=ETHTOOL,
    hw_counters=HW_COUNTERS,
    lab=LabNic(None, "ionic"),
    sources=(
        "Linux drivers/net/ethernet/pensando/ionic/ionic_stats.c ionic_port_stats_desc[] (ethtool names)",
        "Linux drivers/infiniband/hw/ionic/ionic_hw_stats.c (hw_counters names come from the firmware)",
        "Pensando firmware HAL rdma_stats_hdrs[] (ccdxc/sw nic/hal/plugins/cfg/rdma): the hw_counters names",
    ),
    limits=(
        "counters only, unverified: names from driver and firmware source, no capture of an ionic port",
        "no configuration: no public source for its DCB, DSCP trust or congestion-control interface, so an ionic "
        "NIC in an inventory is refused (FAB081) rather than left unconfigured",
    ),
)
