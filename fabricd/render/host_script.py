"""The view of a :class:`~fabricd.intent.host.HostIntent` that ``templates/linux_host`` prints as a shell script.

The host intent (decided in :mod:`fabricd.intent.host` from the NIC's family profile) holds lists indexed by
priority or TC. Shell commands want them as arguments (``dcb pfc set dev X prio-pfc all:off 3:on``); this module
spells them out once so the template only prints. It decides nothing: every value and every file comes from the
host intent, so a Broadcom or Intel NIC gets its own family's files and no mlx5 path or ``mlnx_qos`` hint.

Command syntax: iproute2 dcb-pfc(8), dcb-ets(8), dcb-app(8), dcb-apptrust(8); ``ethtool -A``; mlnx-tools
``cma_roce_tos``/``cma_roce_mode`` (configfs ``rdma_cm``); the families' sysfs/configfs files (docs/nics.md).
"""

from __future__ import annotations

from pydantic import Field

from fabricd.intent.host import HostIntent, NicIntent, roce_mode_path, roce_tos_path, traffic_class_path
from fabricd.model import TrustMode
from fabricd.model.types import Model


class SysfsWrite(Model):
    path: str = Field(description="absolute sysfs/configfs path")
    value: str = Field(description="the text written (decimal, or 0x-hex for bnxt_re)")


class Prereq(Model):
    what: str
    check: str
    command: str
    automatic: bool = Field(description="run `command` when `check` fails (else stop and tell the operator)")


class NicScript(Model):
    netdev: str
    family: str = Field(description="NIC profile family, or 'unknown'")
    rdma_device: str | None
    mtu_bytes: int
    vlan_id: int | None
    vlan_netdev: str | None
    ip_netdev: str
    address: str | None
    pause_off: bool = Field(description="turn 802.3x global pause off (ethtool -A rx off tx off)")
    dcb: bool = Field(description="set PFC/ETS/APP with iproute2 dcb")
    apptrust: bool = Field(description="set trust with dcb apptrust (drivers with dcbnl_setapptrust)")
    mlnx_qos_hint: bool = Field(description="on an apptrust failure, point at mlnx_qos (mlx5 only)")
    apptrust_order: str = Field(description="dcb apptrust order: 'dscp' or 'pcp'")
    prio_pfc: str = Field(description="dcb pfc prio-pfc argument, e.g. 'all:off 3:on'")
    tc_tsa: str = Field(description="dcb ets tc-tsa argument")
    tc_bw: str = Field(description="dcb ets tc-bw argument")
    prio_tc: str = Field(description="dcb ets prio-tc argument")
    dscp_prio: str = Field(description="dcb app dscp-prio argument: the DSCP:priority pairs, in order")
    rdma_cm: bool = Field(description="set the RDMA-CM default ToS and RoCE mode (configfs)")
    configfs_device: str | None = Field(description="/sys/kernel/config/rdma_cm/<dev>, None without RDMA")
    roce_tos_path: str | None
    roce_mode_path: str | None
    traffic_class_path: str | None = Field(description="MLNX_OFED tc/<port>/traffic_class (optional), or None")
    roce_tos: int
    roce_mode: str
    cc_group: str | None = Field(description="configfs group to create before the writes (bnxt_re, irdma)")
    writes: list[SysfsWrite] = Field(description="the family's CNP, CC enables and parameters, in write order")
    cc_commit: str | None = Field(description="file to write 1 to after the writes (bnxt_re cc/apply)")
    prerequisites: list[Prereq]


class HostScript(Model):
    host: str
    fabric: str
    lossless: bool
    nics: list[NicScript]


def _nic(nic: NicIntent) -> NicScript:
    pfc = "all:off" + "".join(f" {p}:on" for p in nic.pfc_priorities)
    dev = nic.rdma_device
    rdma_cm = dev is not None and nic.rdma_cm
    return NicScript(
        netdev=nic.netdev,
        family=nic.family or "unknown",
        rdma_device=dev,
        mtu_bytes=nic.mtu_bytes,
        vlan_id=nic.vlan_id,
        vlan_netdev=nic.vlan_netdev,
        ip_netdev=nic.ip_netdev,
        address=nic.address,
        pause_off=nic.global_pause is False,
        dcb=nic.dcb,
        apptrust=nic.dcb and nic.apptrust,
        mlnx_qos_hint=nic.family == "mlx5",
        apptrust_order="dscp" if nic.trust == TrustMode.DSCP else "pcp",
        prio_pfc=pfc,
        tc_tsa=" ".join(f"{tc}:{t.value}" for tc, t in enumerate(nic.tc_tsa)),
        tc_bw=" ".join(f"{tc}:{bw}" for tc, bw in enumerate(nic.tc_bw_percent)),
        prio_tc=" ".join(f"{p}:{tc}" for p, tc in enumerate(nic.prio_tc)),
        dscp_prio=" ".join(f"{e.dscp}:{e.priority}" for e in nic.dscp_to_priority),
        rdma_cm=rdma_cm,
        configfs_device=f"/sys/kernel/config/rdma_cm/{dev}" if rdma_cm else None,
        roce_tos_path=roce_tos_path(dev, nic.rdma_port) if rdma_cm and dev else None,
        roce_mode_path=roce_mode_path(dev, nic.rdma_port) if rdma_cm and dev else None,
        traffic_class_path=traffic_class_path(dev, nic.rdma_port) if dev and nic.traffic_class else None,
        roce_tos=nic.roce_tos,
        roce_mode=nic.roce_mode,
        cc_group=nic.cc_group,
        writes=[SysfsWrite(path=w.path, value=w.text) for w in nic.writes],
        cc_commit=nic.cc_commit,
        prerequisites=[
            Prereq(what=p.what, check=p.check, command=p.command, automatic=p.automatic) for p in nic.prerequisites
        ],
    )


def host_script(intent: HostIntent) -> HostScript:
    """The script view of a host intent."""
    return HostScript(
        host=intent.host, fabric=intent.fabric, lossless=intent.lossless, nics=[_nic(n) for n in intent.nics]
    )
