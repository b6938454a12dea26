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
from fabricd.readers.rdma import MLX5_HW_COUNTERS

from .base import Knob, NicProfile

ECN = "/sys/class/net/{netdev}/ecn"
SRC_ECN = "MLNX_OFED mlx5 ECN sysfs (/sys/class/net/<if>/ecn); NVIDIA DOCA 'DCQCN CC Parameters'"


def _from_model(point: str, model: type[DcqcnRp] | type[DcqcnNp]) -> dict[str, Knob]:
    out: dict[str, Knob] = {}
    for name, f in model.model_fields.items():
        lo = hi = None
        for meta in f.metadata:
            lo = getattr(meta, "ge", lo)
            hi = getattr(meta, "le", hi)
        out[name] = Knob(name=name, path=f"{ECN}/{point}/{name}", minimum=int(lo or 0), maximum=int(hi or 0),
                         unit=f.description or "", source=SRC_ECN)
    return out


TUNABLES = {**_from_model("roce_rp", DcqcnRp), **_from_model("roce_np", DcqcnNp)}

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
    ethtool_driver="mlx5_core",
    hw_counters=MLX5_HW_COUNTERS,
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
