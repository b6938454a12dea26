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

from fabricd.readers.rdma import IONIC_HW_COUNTERS

from .base import NicProfile

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
    ethtool_driver="ionic",
    hw_counters=IONIC_HW_COUNTERS,
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
