"""The view of a :class:`~fabricd.intent.host.HostIntent` that ``templates/linux_host`` prints as a shell script.

The host intent (decided in :mod:`fabricd.intent.host`) holds lists indexed by priority or TC. Shell commands
want them as arguments (``dcb pfc set dev X prio-pfc all:off 3:on``); this module spells them out once so the
template only prints. It decides nothing: every value comes from the host intent.

Command syntax: iproute2 dcb-pfc(8), dcb-ets(8), dcb-app(8), dcb-apptrust(8); ``ethtool -A``; mlnx-tools
``cma_roce_tos``/``cma_roce_mode`` (configfs ``rdma_cm``); MLNX_OFED ``/sys/class/net/<if>/ecn/roce_np|roce_rp``.
"""

from __future__ import annotations

from pydantic import Field

from fabricd.intent.host import (
    HostIntent,
    NicIntent,
    ecn_path,
    roce_mode_path,
    roce_tos_path,
    traffic_class_path,
)
from fabricd.model import TrustMode
from fabricd.model.types import Model


class SysfsWrite(Model):
    path: str = Field(description="absolute sysfs/configfs path")
    value: str


class NicScript(Model):
    netdev: str
    rdma_device: str | None
    mtu_bytes: int
    vlan_id: int | None
    vlan_netdev: str | None
    ip_netdev: str
    address: str | None
    pause_off: bool = Field(description="turn 802.3x global pause off (ethtool -A rx off tx off)")
    apptrust: str = Field(description="dcb apptrust order: 'dscp' or 'pcp'")
    prio_pfc: str = Field(description="dcb pfc prio-pfc argument, e.g. 'all:off 3:on'")
    tc_tsa: str = Field(description="dcb ets tc-tsa argument")
    tc_bw: str = Field(description="dcb ets tc-bw argument")
    prio_tc: str = Field(description="dcb ets prio-tc argument")
    dscp_prio: str = Field(description="dcb app dscp-prio argument: all 64 DSCP:priority pairs")
    configfs_device: str | None = Field(description="/sys/kernel/config/rdma_cm/<dev>, None without RDMA")
    roce_tos_path: str | None
    roce_mode_path: str | None
    traffic_class_path: str | None
    roce_tos: int
    roce_mode: str
    writes: list[SysfsWrite] = Field(description="CNP, ECN NP/RP enables and DCQCN parameters, in write order")


class HostScript(Model):
    host: str
    fabric: str
    lossless: bool
    nics: list[NicScript]


def _nic(nic: NicIntent) -> NicScript:
    pfc = "all:off" + "".join(f" {p}:on" for p in nic.pfc_priorities)
    writes: list[SysfsWrite] = []
    if nic.cnp_dscp is not None:
        writes.append(SysfsWrite(path=ecn_path(nic.netdev, "roce_np", "cnp_dscp"), value=str(nic.cnp_dscp)))
    if nic.cnp_802p_prio is not None:
        writes.append(SysfsWrite(path=ecn_path(nic.netdev, "roce_np", "cnp_802p_prio"),
                                 value=str(nic.cnp_802p_prio)))
    for point, prios in (("roce_np", nic.np_priorities), ("roce_rp", nic.rp_priorities)):
        writes += [SysfsWrite(path=ecn_path(nic.netdev, point, f"enable/{p}"), value="1") for p in prios]
    for point, params in (("roce_rp", nic.dcqcn_rp), ("roce_np", nic.dcqcn_np)):
        writes += [SysfsWrite(path=ecn_path(nic.netdev, point, k), value=str(v)) for k, v in params.items()]
    dev = nic.rdma_device
    return NicScript(
        netdev=nic.netdev,
        rdma_device=dev,
        mtu_bytes=nic.mtu_bytes,
        vlan_id=nic.vlan_id,
        vlan_netdev=nic.vlan_netdev,
        ip_netdev=nic.ip_netdev,
        address=nic.address,
        pause_off=nic.global_pause is False,
        apptrust="dscp" if nic.trust == TrustMode.DSCP else "pcp",
        prio_pfc=pfc,
        tc_tsa=" ".join(f"{tc}:{t.value}" for tc, t in enumerate(nic.tc_tsa)),
        tc_bw=" ".join(f"{tc}:{bw}" for tc, bw in enumerate(nic.tc_bw_percent)),
        prio_tc=" ".join(f"{p}:{tc}" for p, tc in enumerate(nic.prio_tc)),
        dscp_prio=" ".join(f"{e.dscp}:{e.priority}" for e in nic.dscp_to_priority),
        configfs_device=f"/sys/kernel/config/rdma_cm/{dev}" if dev else None,
        roce_tos_path=roce_tos_path(dev, nic.rdma_port) if dev else None,
        roce_mode_path=roce_mode_path(dev, nic.rdma_port) if dev else None,
        traffic_class_path=traffic_class_path(dev, nic.rdma_port) if dev else None,
        roce_tos=nic.roce_tos,
        roce_mode=nic.roce_mode,
        writes=writes,
    )


def host_script(intent: HostIntent) -> HostScript:
    """The script view of a host intent."""
    return HostScript(host=intent.host, fabric=intent.fabric, lossless=intent.lossless,
                      nics=[_nic(n) for n in intent.nics])
