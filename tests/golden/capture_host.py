"""A replay root built from the real captures in tests/golden (shared by the collector goldens and CLI tests)."""

from __future__ import annotations

from pathlib import Path

from fabricd_lab.replay import add_ethtool_capture, add_net_capture, add_rdma_tree, add_sysfs_files

HERE = Path(__file__).parent
READERS = HERE / "readers"
HOST_CAPTURES = HERE / "host"

ETHTOOL_CAPTURES = {
    "eth0": ("mlx5-ethq-global-pause.txt", "mlx5_core"),
    "eth1": ("mlx4-grep-prio3-pfc-notes.txt", "mlx4_en"),
    "eth2": ("bnxt_en-ethq.txt", "bnxt_en"),
    "eth3": ("ice-ethq.txt", "ice"),
    "eth4": ("i40e-ethq.txt", "i40e"),
    "eth5": ("mlx5-cx4lx-grep-pause-pci-globalpause-notes.txt", "mlx5_core"),
    "eth6": ("mlx5-cx4lx-grep-discards-notes.txt", "mlx5_core"),
    "eth7": ("ixgbe-82599-grep-flowcontrol-notes.txt", "ixgbe"),
    "eth8": ("virtio_net-ethq.txt", "virtio_net"),
    "eth9": ("mlx5-grep-prio-bytes-packets-byteps-issue179.txt", "mlx5_core"),
}
RDMA_TREES = {
    "hfi1_0": "procfs-testdata/hfi1_0",
    "mlx4_0": "procfs-testdata/mlx4_0",
    "mlx5_0": "procfs-testdata/mlx5_0",
    "i40iw0": "node_exporter-sys/i40iw0",
    "mlx4_1": "node_exporter-sys/mlx4_0",
    "mlx5_bond_0": "mlx5_bond_0-show_counters-notes/mlx5_bond_0",
}
CONFIG_FILES = {
    # No capture of these exists: RDMA-CM configfs (kernel ABI configfs-rdma_cm) and MLNX_OFED's qos/pfc, written
    # by the test with the standard recipe's values (ToS 106, PFC on priority 3).
    "sys/kernel/config/rdma_cm/mlx5_0/ports/1/default_roce_tos": "106",
    "sys/kernel/config/rdma_cm/mlx5_0/ports/1/default_roce_mode": "RoCE v2",
    "sys/class/net/eth0/qos/pfc": "0,0,0,1,0,0,0,0",
    "sys/class/net/eth0/qos/trust": "dscp",
    "sys/class/infiniband/mlx5_0/device/net/eth0/ifindex": "2",
}


def strip_source(text: str) -> str:
    first, _, rest = text.partition("\n")
    return rest if first.startswith("# source:") else text


def build_capture_host(root: Path) -> Path:
    """A replay root made of the real captures (plus CONFIG_FILES, which have no capture)."""
    for ifname, (name, driver) in ETHTOOL_CAPTURES.items():
        add_ethtool_capture(root, ifname, strip_source((READERS / "ethtool" / name).read_text()), driver=driver)
    for dev, rel in RDMA_TREES.items():
        add_rdma_tree(root, READERS / "sysfs" / rel, dev)
    add_net_capture(root, "eth0", (HOST_CAPTURES / "net-class-eth0-ecn-procfs.txt").read_text())
    add_sysfs_files(root, CONFIG_FILES)
    return root
