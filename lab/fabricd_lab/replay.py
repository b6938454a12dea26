"""Replay roots: directory trees laid out like a host's sysfs/configfs plus captured ethtool text (docs/contracts.md
"Replay root"), which ``fabricd export host --root``, ``fabricd watch --root`` and the readers read instead of the
live machine.

:class:`ReplayHost` writes an mlx5-like host (ConnectX with RoCE): per NIC ``DIR/ethtool/<if>.stats`` with the full
mlx5_core statistic set (names and order from a real ConnectX-4 Lx ``ethtool -S``: global, per-channel
``rxN_``/``txN_``, ``_phy``, per-priority bytes/packets, plus ``rx/tx_prioN_pause``, ``_pause_duration`` (µs)
and ``_pause_transition`` for the PFC priorities), ``<if>.info``,
``sys/class/net/<if>/{mtu,operstate,ecn/roce_np|roce_rp/...}``,
``sys/class/infiniband/<dev>/ports/1/{counters,hw_counters,state,phys_state,rate,link_layer,gids,gid_attrs}`` and the
RDMA-CM configfs ToS. Tests, benchmarks and ``fabricd demo`` then drive it (:meth:`ReplayHost.traffic`,
:meth:`ReplayHost.pause`, :meth:`ReplayHost.hw_add`, :meth:`ReplayHost.reset`) and :meth:`ReplayHost.flush` rewrites
the changed files atomically (write + rename), so a reader never sees half a file.

:func:`add_ethtool_capture` and :func:`add_rdma_tree` build a root from real captures instead (support engineers
reading a customer's capture offline do the same by hand).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path


# Names in the order mlx5_core prints them (ConnectX-4 Lx, kernel 4.15 inbox driver; tests/golden/readers/ethtool/
# mlx5-ethq-global-pause.txt). Per-priority and per-channel names are generated below.
def _words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


MLX5_GLOBAL_HEAD: tuple[str, ...] = _words(
    "rx_packets rx_bytes tx_packets tx_bytes tx_tso_packets tx_tso_bytes tx_tso_inner_packets tx_tso_inner_bytes "
    "tx_added_vlan_packets rx_lro_packets rx_lro_bytes rx_removed_vlan_packets rx_csum_unnecessary rx_csum_none "
    "rx_csum_complete rx_csum_unnecessary_inner rx_xdp_drop rx_xdp_tx rx_xdp_tx_full tx_csum_none tx_csum_partial "
    "tx_csum_partial_inner tx_queue_stopped tx_queue_wake tx_queue_dropped tx_xmit_more rx_wqe_err rx_mpwqe_filler "
    "rx_buff_alloc_err rx_cqe_compress_blks rx_cqe_compress_pkts rx_page_reuse rx_cache_reuse rx_cache_full "
    "rx_cache_empty rx_cache_busy rx_cache_waive link_down_events_phy rx_out_of_buffer rx_vport_unicast_packets "
    "rx_vport_unicast_bytes tx_vport_unicast_packets tx_vport_unicast_bytes rx_vport_multicast_packets "
    "rx_vport_multicast_bytes tx_vport_multicast_packets tx_vport_multicast_bytes rx_vport_broadcast_packets "
    "rx_vport_broadcast_bytes tx_vport_broadcast_packets tx_vport_broadcast_bytes rx_vport_rdma_unicast_packets "
    "rx_vport_rdma_unicast_bytes tx_vport_rdma_unicast_packets tx_vport_rdma_unicast_bytes "
    "rx_vport_rdma_multicast_packets rx_vport_rdma_multicast_bytes tx_vport_rdma_multicast_packets "
    "tx_vport_rdma_multicast_bytes tx_packets_phy rx_packets_phy rx_crc_errors_phy tx_bytes_phy rx_bytes_phy "
    "tx_multicast_phy tx_broadcast_phy rx_multicast_phy rx_broadcast_phy rx_in_range_len_errors_phy "
    "rx_out_of_range_len_phy rx_oversize_pkts_phy rx_symbol_err_phy tx_mac_control_phy rx_mac_control_phy "
    "rx_unsupported_op_phy rx_pause_ctrl_phy tx_pause_ctrl_phy rx_discards_phy tx_discards_phy tx_errors_phy "
    "rx_undersize_pkts_phy rx_fragments_phy rx_jabbers_phy rx_64_bytes_phy rx_65_to_127_bytes_phy "
    "rx_128_to_255_bytes_phy rx_256_to_511_bytes_phy rx_512_to_1023_bytes_phy rx_1024_to_1518_bytes_phy "
    "rx_1519_to_2047_bytes_phy rx_2048_to_4095_bytes_phy rx_4096_to_8191_bytes_phy rx_8192_to_10239_bytes_phy "
    "rx_pcs_symbol_err_phy rx_corrected_bits_phy rx_buffer_passed_thres_phy rx_pci_signal_integrity "
    "tx_pci_signal_integrity outbound_pci_stalled_rd outbound_pci_stalled_wr outbound_pci_stalled_rd_events "
    "outbound_pci_stalled_wr_events"
)
MLX5_GLOBAL_TAIL: tuple[str, ...] = _words("module_unplug module_bus_stuck module_high_temp module_bad_shorted")
MLX5_STORM: tuple[str, ...] = ("tx_pause_storm_warning_events", "tx_pause_storm_error_events")
MLX5_RX_CHANNEL: tuple[str, ...] = _words(
    "packets bytes csum_complete csum_unnecessary csum_unnecessary_inner csum_none xdp_drop xdp_tx xdp_tx_full "
    "lro_packets lro_bytes removed_vlan_packets wqe_err mpwqe_filler buff_alloc_err cqe_compress_blks "
    "cqe_compress_pkts page_reuse cache_reuse cache_full cache_empty cache_busy cache_waive"
)
MLX5_TX_CHANNEL: tuple[str, ...] = _words(
    "packets bytes tso_packets tso_bytes tso_inner_packets tso_inner_bytes csum_partial csum_partial_inner "
    "added_vlan_packets nop csum_none stopped wake dropped xmit_more"
)

# PMA counters of an mlx5 RoCE port (prometheus/procfs fixture mlx5_0) and hw_counters (mlx5_bond_0 show_counters).
MLX5_PMA: tuple[str, ...] = _words(
    "VL15_dropped excessive_buffer_overrun_errors link_downed link_error_recovery local_link_integrity_errors "
    "multicast_rcv_packets multicast_xmit_packets port_rcv_constraint_errors port_rcv_data port_rcv_errors "
    "port_rcv_packets port_rcv_remote_physical_errors port_rcv_switch_relay_errors port_xmit_constraint_errors "
    "port_xmit_data port_xmit_discards port_xmit_packets port_xmit_wait symbol_error unicast_rcv_packets "
    "unicast_xmit_packets"
)
MLX5_HW: tuple[str, ...] = _words(
    "duplicate_request implied_nak_seq_err lifespan local_ack_timeout_err np_cnp_sent np_ecn_marked_roce_packets "
    "out_of_buffer out_of_sequence packet_seq_err req_cqe_error req_cqe_flush_error req_remote_access_errors "
    "req_remote_invalid_request resp_cqe_error resp_cqe_flush_error resp_local_length_error "
    "resp_remote_access_errors rnr_nak_retry_err roce_adp_retrans roce_adp_retrans_to roce_slow_restart "
    "roce_slow_restart_cnps roce_slow_restart_trans rp_cnp_handled rp_cnp_ignored rx_atomic_requests rx_dct_connect "
    "rx_icrc_encapsulated rx_read_requests rx_write_requests"
)

ECN_NP_PARAMS: dict[str, int] = {"min_time_between_cnps": 4, "cnp_dscp": 48, "cnp_802p_prio": 6}
"""roce_np parameter files of mlx5 (values as a fresh ConnectX-6 Dx reads them; NVIDIA DOCA "DCQCN CC Parameters")."""
ECN_RP_PARAMS: dict[str, int] = {
    "clamp_tgt_rate": 0,
    "clamp_tgt_rate_after_time_inc": 1,
    "dce_tcp_g": 1019,
    "dce_tcp_rtt": 1,
    "initial_alpha_value": 1023,
    "rate_reduce_monitor_period": 4,
    "rate_to_set_on_first_cnp": 0,
    "rpg_ai_rate": 5,
    "rpg_byte_reset": 32767,
    "rpg_gd": 11,
    "rpg_hai_rate": 50,
    "rpg_max_rate": 0,
    "rpg_min_dec_fac": 50,
    "rpg_min_rate": 1,
    "rpg_threshold": 1,
    "rpg_time_reset": 300,
}
"""roce_rp parameter files of mlx5 (names from the kernel/MLNX_OFED sysfs; values are example read-backs)."""


@dataclass(frozen=True)
class ReplayNic:
    """One mlx5-like RoCE NIC: netdev ``interface`` and RDMA ``device`` port ``port``."""

    interface: str
    device: str
    port: int = 1
    channels: int = 16
    pfc_priorities: tuple[int, ...] = (3,)
    ecn_priorities: tuple[int, ...] = (3,)
    roce_tos: int = 106
    mtu: int = 9000
    rate: str = "100 Gb/sec (2X HDR)"
    firmware: str = "22.36.1010 (MT_0000000359)"
    driver_version: str = "6.1.0-18-amd64"
    bus_info: str = "0000:3b:00.0"
    board_id: str = "MT_0000000359"
    hca_type: str = "MT4125"
    node_guid: str = "b859:9f03:00d4:2f10"


def _atomic_write(path: str, text: str) -> None:
    tmp = f"{path}.fdtmp{os.getpid()}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)
    os.replace(tmp, path)


def _mkfile(path: str, text: str) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    _atomic_write(path, text if text.endswith("\n") else text + "\n")


@dataclass
class _NicState:
    nic: ReplayNic
    ethtool: dict[str, int] = field(default_factory=dict)
    pma: dict[str, int] = field(default_factory=dict)
    hw: dict[str, int] = field(default_factory=dict)
    dirty_ethtool: bool = True
    dirty_pma: set[str] = field(default_factory=set)
    dirty_hw: set[str] = field(default_factory=set)
    lines: list[str] | None = None
    """The ``ethtool -S`` text's lines as last written (None: rebuild them all at the next flush)."""
    line_of: dict[str, int] = field(default_factory=dict)
    """Counter name -> its index in ``lines``."""
    dirty_names: set[str] = field(default_factory=set)
    """Counters changed since the last flush: only their lines are formatted again."""


class ReplayHost:
    """An mlx5-like host under ``root``. Build with :meth:`build`, drive, then :meth:`flush`.

    Counter values start from a deterministic, NIC-specific base so that each NIC's series differ.
    """

    def __init__(self, root: str | os.PathLike[str], nics: Iterable[ReplayNic]) -> None:
        self.root = Path(root)
        self._nics: dict[str, _NicState] = {}
        for i, nic in enumerate(nics):
            self._nics[nic.interface] = _NicState(nic, *self._initial(nic, i))

    @classmethod
    def mlx5(cls, root: str | os.PathLike[str], count: int = 1, **nic_options: object) -> ReplayHost:
        """``count`` NICs ``eth0``.. on ``mlx5_0``.., each with the given :class:`ReplayNic` options."""
        nics = [ReplayNic(f"eth{i}", f"mlx5_{i}", **nic_options) for i in range(count)]  # type: ignore[arg-type]
        return cls(root, nics)

    @property
    def nics(self) -> list[ReplayNic]:
        return [s.nic for s in self._nics.values()]

    # -- construction -------------------------------------------------------------------------------------------

    @staticmethod
    def _initial(nic: ReplayNic, seed: int) -> tuple[dict[str, int], dict[str, int], dict[str, int]]:
        base = 1000 * (seed + 1)
        eth: dict[str, int] = {}
        for name in MLX5_GLOBAL_HEAD:
            eth[name] = 0
        for prio in range(8):
            for d in ("rx", "tx"):
                eth[f"{d}_prio{prio}_bytes"] = 0
                eth[f"{d}_prio{prio}_packets"] = 0
            if prio in nic.pfc_priorities:
                for d in ("rx", "tx"):
                    eth[f"{d}_prio{prio}_pause"] = 0
                    eth[f"{d}_prio{prio}_pause_duration"] = 0
                eth[f"rx_prio{prio}_pause_transition"] = 0
        if not nic.pfc_priorities:
            for name in (
                "rx_global_pause",
                "rx_global_pause_duration",
                "tx_global_pause",
                "tx_global_pause_duration",
                "rx_global_pause_transition",
            ):
                eth[name] = 0
        for name in MLX5_STORM:
            eth[name] = 0
        for name in MLX5_GLOBAL_TAIL:
            eth[name] = 0
        for ch in range(nic.channels):
            for name in MLX5_RX_CHANNEL:
                eth[f"rx{ch}_{name}"] = 0
        for ch in range(nic.channels):
            for name in MLX5_TX_CHANNEL:
                eth[f"tx{ch}_{name}"] = 0
        # a little history so the first scrape is not all zeros
        eth["rx_prio0_packets"] = eth["rx_packets"] = eth["rx_packets_phy"] = base * 7
        eth["rx_prio0_bytes"] = eth["rx_bytes"] = eth["rx_bytes_phy"] = base * 7 * 1500
        eth["tx_prio0_packets"] = eth["tx_packets"] = eth["tx_packets_phy"] = base * 5
        eth["tx_prio0_bytes"] = eth["tx_bytes"] = eth["tx_bytes_phy"] = base * 5 * 1500
        pma = dict.fromkeys(MLX5_PMA, 0)
        pma["port_rcv_packets"] = pma["unicast_rcv_packets"] = base * 3
        pma["port_xmit_packets"] = pma["unicast_xmit_packets"] = base * 4
        pma["port_rcv_data"] = base * 3 * 1024 // 4
        pma["port_xmit_data"] = base * 4 * 1024 // 4
        hw = dict.fromkeys(MLX5_HW, 0)
        hw["lifespan"] = 10
        return eth, pma, hw

    def _state(self, interface: str) -> _NicState:
        try:
            return self._nics[interface]
        except KeyError:
            raise KeyError(f"no NIC {interface!r} in this replay host (have {sorted(self._nics)})") from None

    def _by_device(self, device: str) -> _NicState:
        for s in self._nics.values():
            if s.nic.device == device:
                return s
        raise KeyError(f"no RDMA device {device!r} in this replay host")

    def build(self) -> Path:
        """Write the whole tree (static attributes and current counters). Returns the root."""
        root = os.fspath(self.root)
        for s in self._nics.values():
            nic = s.nic
            net = os.path.join(root, "sys", "class", "net", nic.interface)
            _mkfile(os.path.join(net, "mtu"), str(nic.mtu))
            _mkfile(os.path.join(net, "operstate"), "up")
            for point, params in (("np", ECN_NP_PARAMS), ("rp", ECN_RP_PARAMS)):
                edir = os.path.join(net, "ecn", f"roce_{point}")
                for prio in range(8):
                    _mkfile(os.path.join(edir, "enable", str(prio)), "1" if prio in nic.ecn_priorities else "0")
                for name, value in params.items():
                    _mkfile(os.path.join(edir, name), str(value))
            ib = os.path.join(root, "sys", "class", "infiniband", nic.device)
            _mkfile(os.path.join(ib, "fw_ver"), nic.firmware.split()[0])
            _mkfile(os.path.join(ib, "board_id"), nic.board_id)
            _mkfile(os.path.join(ib, "hca_type"), nic.hca_type)
            _mkfile(os.path.join(ib, "node_guid"), nic.node_guid)
            _mkfile(os.path.join(ib, "node_type"), "1: CA")
            os.makedirs(os.path.join(ib, "device", "net", nic.interface), exist_ok=True)
            port = os.path.join(ib, "ports", str(nic.port))
            _mkfile(os.path.join(port, "state"), "4: ACTIVE")
            _mkfile(os.path.join(port, "phys_state"), "5: LinkUp")
            _mkfile(os.path.join(port, "rate"), nic.rate)
            _mkfile(os.path.join(port, "link_layer"), "Ethernet")
            _mkfile(os.path.join(port, "gids", "0"), "fe80:0000:0000:0000:ba59:9fff:fed4:2f10")
            _mkfile(os.path.join(port, "gid_attrs", "types", "0"), "RoCE v2")
            _mkfile(os.path.join(port, "gid_attrs", "ndevs", "0"), nic.interface)
            cm = os.path.join(root, "sys", "kernel", "config", "rdma_cm", nic.device, "ports", str(nic.port))
            _mkfile(os.path.join(cm, "default_roce_tos"), str(nic.roce_tos))
            _mkfile(os.path.join(cm, "default_roce_mode"), "RoCE v2")
            _mkfile(
                os.path.join(root, "ethtool", f"{nic.interface}.info"),
                f"driver: mlx5_core\nversion: {nic.driver_version}\nfirmware-version: {nic.firmware}\n"
                "expansion-rom-version: \n"
                f"bus-info: {nic.bus_info}\nsupports-statistics: yes\nsupports-test: yes\n"
                "supports-eeprom-access: no\nsupports-register-dump: no\nsupports-priv-flags: yes\n",
            )
            s.dirty_ethtool = True
            s.dirty_pma = set(s.pma)
            s.dirty_hw = set(s.hw)
        self.flush()
        return self.root

    # -- driving --------------------------------------------------------------------------------------------------

    def add(self, interface: str, name: str, delta: int) -> None:
        """Add ``delta`` to the ethtool counter ``name`` of ``interface`` (created if the driver lacks it)."""
        s = self._state(interface)
        s.ethtool[name] = s.ethtool.get(name, 0) + delta
        s.dirty_ethtool = True
        s.dirty_names.add(name)

    def set(self, interface: str, name: str, value: int) -> None:
        """Set the ethtool counter ``name`` of ``interface``."""
        s = self._state(interface)
        s.ethtool[name] = value
        s.dirty_ethtool = True
        s.dirty_names.add(name)

    def get(self, interface: str, name: str) -> int:
        """The current (unflushed) value of an ethtool counter."""
        return self._state(interface).ethtool[name]

    def pause(
        self,
        interface: str,
        priority: int,
        *,
        direction: str = "rx",
        frames: int = 1,
        duration_us: int = 0,
        transitions: int = 0,
    ) -> None:
        """Count PFC pause frames and pause time on one priority (``rx``: the NIC was paused by its peer)."""
        self.add(interface, f"{direction}_prio{priority}_pause", frames)
        self.add(interface, f"{direction}_prio{priority}_pause_duration", duration_us)
        self.add(interface, f"{direction}_pause_ctrl_phy", frames)
        if transitions and direction == "rx":
            self.add(interface, f"rx_prio{priority}_pause_transition", transitions)

    def traffic(
        self, interface: str, priority: int, *, direction: str = "tx", packets: int = 1, packet_bytes: int = 1024
    ) -> None:
        """Count RoCE traffic on one priority: ethtool priority/phy counters and the RDMA port's PMA counters."""
        total = packets * packet_bytes
        for suffix, value in (("packets", packets), ("bytes", total)):
            self.add(interface, f"{direction}_prio{priority}_{suffix}", value)
            self.add(interface, f"{direction}_{suffix}_phy", value)
            self.add(interface, f"{direction}_{suffix}", value)
        s = self._state(interface)
        pfx = "port_rcv" if direction == "rx" else "port_xmit"
        self._pma_add(s, f"{pfx}_packets", packets)
        self._pma_add(s, f"{'unicast_rcv' if direction == 'rx' else 'unicast_xmit'}_packets", packets)
        self._pma_add(s, f"{pfx}_data", total // 4)

    def _pma_add(self, s: _NicState, name: str, delta: int) -> None:
        s.pma[name] = s.pma.get(name, 0) + delta
        s.dirty_pma.add(name)

    def hw_add(self, device: str, name: str, delta: int) -> None:
        """Add to an RDMA hw_counter (``np_cnp_sent``, ``out_of_sequence``...) of ``device``'s port."""
        s = self._by_device(device)
        s.hw[name] = s.hw.get(name, 0) + delta
        s.dirty_hw.add(name)

    def reset(self, interface: str) -> None:
        """Zero every counter of one NIC, as a driver reload or firmware reset does."""
        s = self._state(interface)
        s.ethtool = dict.fromkeys(s.ethtool, 0)
        s.lines = None
        s.pma = dict.fromkeys(s.pma, 0)
        s.hw = {k: (v if k == "lifespan" else 0) for k, v in s.hw.items()}
        s.dirty_ethtool = True
        s.dirty_pma = set(s.pma)
        s.dirty_hw = set(s.hw)

    @staticmethod
    def _ethtool_text(s: _NicState) -> str:
        """The ``ethtool -S`` text of one NIC; only the lines of counters changed since the last one are formatted
        again (a 16-channel mlx5 set has ~750 lines, and a writer ticking every few ms on 64 ports cannot afford to
        format them all on every tick)."""
        lines = s.lines
        if lines is None or not s.dirty_names.issubset(s.line_of.keys()):
            lines = s.lines = ["NIC statistics:"] + [f"     {k}: {v}" for k, v in s.ethtool.items()]
            s.line_of = {k: i for i, k in enumerate(s.ethtool, start=1)}
        else:
            eth, where = s.ethtool, s.line_of
            for name in s.dirty_names:
                lines[where[name]] = f"     {name}: {eth[name]}"
        s.dirty_names.clear()
        return "\n".join(lines) + "\n"

    def flush(self, *, rdma: bool = True) -> None:
        """Rewrite every changed file, each atomically. ``rdma=False`` leaves the RDMA port's counter files
        (``counters/``, ``hw_counters/``) for a later flush (they stay marked as changed)."""
        root = os.fspath(self.root)
        ethtool = os.path.join(root, "ethtool")
        if any(s.dirty_ethtool for s in self._nics.values()):
            os.makedirs(ethtool, exist_ok=True)
        for s in self._nics.values():
            nic = s.nic
            if s.dirty_ethtool:
                _atomic_write(os.path.join(ethtool, f"{nic.interface}.stats"), self._ethtool_text(s))
                s.dirty_ethtool = False
            if not rdma:
                continue
            port = os.path.join(root, "sys", "class", "infiniband", nic.device, "ports", str(nic.port))
            for sub, values, dirty in (("counters", s.pma, s.dirty_pma), ("hw_counters", s.hw, s.dirty_hw)):
                if not dirty:
                    continue
                os.makedirs(os.path.join(port, sub), exist_ok=True)
                for name in dirty:
                    _atomic_write(os.path.join(port, sub, name), f"{values[name]}\n")
                dirty.clear()


def add_ethtool_capture(
    root: str | os.PathLike[str],
    interface: str,
    stats_text: str,
    *,
    driver: str | None = None,
    firmware: str | None = None,
) -> None:
    """Put a captured ``ethtool -S`` text (and, when known, a minimal ``ethtool -i``) into a replay root."""
    base = os.path.join(os.fspath(root), "ethtool")
    os.makedirs(base, exist_ok=True)
    _atomic_write(os.path.join(base, f"{interface}.stats"), stats_text)
    if driver is not None:
        info = f"driver: {driver}\n" + (f"firmware-version: {firmware}\n" if firmware else "")
        _atomic_write(os.path.join(base, f"{interface}.info"), info)


def add_rdma_tree(root: str | os.PathLike[str], source: str | os.PathLike[str], device: str | None = None) -> None:
    """Copy a captured ``/sys/class/infiniband/<dev>`` directory into a replay root (as ``device``, default: same)."""
    src = Path(source)
    dst = Path(root) / "sys" / "class" / "infiniband" / (device or src.name)
    if dst.exists():
        shutil.rmtree(dst)
    shutil.copytree(src, dst)


def add_sysfs_files(root: str | os.PathLike[str], files: Mapping[str, str]) -> None:
    """Write ``{relative path: content}`` under the root (e.g. ``sys/class/net/eth0/ecn/roce_np/enable/3``)."""
    for rel, text in files.items():
        _mkfile(os.path.join(os.fspath(root), rel), text)


def add_net_capture(root: str | os.PathLike[str], interface: str, capture_text: str) -> None:
    """Write a captured ``/sys/class/net/<if>`` tree given as ``<relative path> TAB <content>`` lines (``#`` lines are
    comments), the format of tests/golden/host/net-class-eth0-ecn-procfs.txt, under ``sys/class/net/<interface>``."""
    base = os.path.join(os.fspath(root), "sys", "class", "net", interface)
    for line in capture_text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        rel, _, content = line.partition("\t")
        _mkfile(os.path.join(base, rel.strip()), content)
