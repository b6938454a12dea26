"""Soft-RoCE (``rdma_rxe``) on any netdev: the lab's RDMA device.

rxe implements RoCEv2 in software: no DCB, no PFC, no ECN reaction, no DCQCN, no per-priority counters. RDMA-CM's
``default_roce_tos`` works (configfs-rdma_cm is device-independent); rxe copies the ToS into the IPv4 header.
Sources: Linux drivers/infiniband/sw/rxe; the counters an rxe device exposed in the lab VM (Linux 6.1).
"""

from __future__ import annotations

from fabricd.model import Transport
from fabricd.readers.counter_names import (
    HwMeaning,
)

from .base import LabNic, NicProfile

HW_COUNTERS: dict[str, HwMeaning] = {
    # Soft-RoCE rxe, Linux 6.1 (drivers/infiniband/sw/rxe/rxe_hw_counters.c; read in the lab VM)
    "sent_pkts": ("packets", "tx", None),
    "rcvd_pkts": ("packets", "rx", None),
    "out_of_seq_request": ("out_of_sequence", "rx", None),
    "rcvd_seq_err": ("packet_seq_errors", "rx", None),
    "completer_retry_err": ("retransmits", "tx", None),
    "retry_exceeded_err": ("retry_exceeded_errors", "tx", None),
}
"""rdma_rxe ``hw_counters`` (Soft-RoCE)."""

PROFILE = NicProfile(
    family="rxe",
    title="Soft-RoCE (rdma_rxe) on any netdev (lab)",
    drivers=(),
    rdma_drivers=("rdma_rxe", "rxe"),
    transports=frozenset({Transport.ROCE_V2_LOSSLESS, Transport.ROCE_V2_LOSSY}),
    dcb=False,
    apptrust=False,
    max_tcs=1,
    max_pfc_priorities=0,
    global_pause=False,
    rdma_cm=True,
    traffic_class=False,
    ethtool=None,
    hw_counters=HW_COUNTERS,
    lab=LabNic("virtio_net-ethq.txt", "virtio_net"),
    sources=("Linux drivers/infiniband/sw/rxe", "Linux Documentation/ABI/testing/configfs-rdma_cm"),
    limits=(
        "no DCB (trust, PFC, ETS, DSCP map), no global pause control, no ECN/DCQCN: only RDMA-CM ToS and mode",
        "a lossless policy on rxe is accepted with a warning (lab only): nothing enforces it",
    ),
)
