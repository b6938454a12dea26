"""Host intent: everything a RoCE host must be set to, decided from the :class:`~fabricd.model.Fabric` model.

L1: pure, no device libraries. ``templates/linux_host/*.sh`` print a :class:`HostIntent` as it is; the host
backends (``fabricd.hosts``) apply it; ``fabricd audit host`` diffs live state against it. Every decision lives
here: which priorities are lossless, how the 8 hardware TCs are scheduled, the full DSCP -> priority table, the
RoCE ToS, which DCQCN knobs are touched (only those the inventory sets; ``None`` leaves the device alone).

A :class:`HostPlan` is the list of typed steps a backend would take (``backend``, ``object``, ``path``,
``current``, ``desired``); ``fabricd render`` writes the desired-only plan (``current`` = null) as
``DIR/hosts/<name>.plan.json`` and ``fabricd host plan`` fills ``current`` from the live host.

Sources: mlnx-tools ``mlnx_qos``/``cma_roce_tos``/``cma_roce_mode``; Linux ``Documentation/ABI/testing/
configfs-rdma_cm``; iproute2 dcb-ets(8), dcb-pfc(8), dcb-app(8), dcb-apptrust(8); MLNX_OFED ECN sysfs
(``/sys/class/net/<if>/ecn/roce_np|roce_rp``, parsed by prometheus/procfs ``sysfs/net_class_ecn.go``).
"""

from __future__ import annotations

from enum import StrEnum
from ipaddress import IPv4Interface
from typing import Any, Literal

from pydantic import Field, JsonValue

from fabricd.model import Fabric, Host, Nic, Scheduler, Speed, Transport, TrustMode, split_endpoint
from fabricd.model.types import Model

from .nics import Knob, NicProfile, nic_profile
from .units import split_percent

NUM_PRIORITIES = 8
"""IEEE 802.1p priorities 0-7."""
NUM_TCS = 8
"""Hardware traffic classes on mlx5 / IEEE 802.1Qaz ETS: 8."""
NUM_DSCP = 64
"""DSCP code points 0-63."""
IFNAMSIZ = 15
"""Longest Linux interface name (IFNAMSIZ 16 minus the NUL)."""
ROCE_MODE_V2 = "RoCE v2"
"""``default_roce_mode`` value for RoCEv2, as the kernel prints it (configfs-rdma_cm ABI, cma_roce_mode -m 2)."""

DCQCN_RP_PARAMS: tuple[str, ...] = (
    "rpg_time_reset",
    "rpg_byte_reset",
    "rpg_threshold",
    "rpg_ai_rate",
    "rpg_hai_rate",
    "rpg_gd",
    "rpg_min_dec_fac",
    "rpg_min_rate",
    "rpg_max_rate",
    "rate_to_set_on_first_cnp",
    "rate_reduce_monitor_period",
    "dce_tcp_g",
    "dce_tcp_rtt",
    "initial_alpha_value",
    "clamp_tgt_rate",
    "clamp_tgt_rate_after_time_inc",
)
"""Files under ``/sys/class/net/<if>/ecn/roce_rp/`` (MLNX_OFED mlx5), in the order fabricd writes them."""
DCQCN_NP_PARAMS: tuple[str, ...] = ("min_time_between_cnps",)
"""Parameter files under ``/sys/class/net/<if>/ecn/roce_np/`` besides ``cnp_dscp`` and ``cnp_802p_prio``."""


class Tsa(StrEnum):
    """Transmission selection algorithm of a TC (IEEE 802.1Qaz; dcb-ets(8) ``tc-tsa``)."""

    STRICT = "strict"
    ETS = "ets"


class Backend(StrEnum):
    """Which host backend applies a step (fabricd.hosts)."""

    NETLINK = "netlink"
    SYSFS = "sysfs"
    DCB = "dcb"


class DscpPriority(Model):
    """One DCB APP entry, selector DSCP (IEEE 802.1Qcd, selector 5): packets with ``dscp`` get ``priority``."""

    dscp: int = Field(ge=0, le=63, description="DSCP code point, 0-63")
    priority: int = Field(ge=0, le=7, description="802.1p priority, 0-7")


class KnobWrite(Model):
    """One family knob fabricd writes (sysfs or configfs): the file, the value as the driver reads it back, the text
    written (``0x1a`` for bnxt_re's hexadecimal configfs), and the audit check it belongs to."""

    knob: str = Field(description="the profile's knob name, e.g. cnp_dscp, rpg_time_reset, ecn_enable")
    path: str = Field(description="absolute sysfs/configfs path on the host")
    value: int = Field(description="desired value, as the driver prints it back (decimal)")
    text: str = Field(description="what is written to the file: decimal, or 0x-prefixed hex where the driver wants it")
    check: str = Field(description="audit check code, e.g. HOST-CNP")


class PrerequisiteIntent(Model):
    """A condition the family needs first that no backend sets (NicProfile.prerequisites), rendered for this NIC."""

    object: str = Field(description="the netdev it concerns")
    what: str
    check: str = Field(description="shell test that is true when the condition holds; empty = not checkable")
    command: str = Field(description="what sets it")
    source: str
    automatic: bool = Field(
        description="True when `command` is a verified command the rendered script may run; "
        "False when it only names what the operator must do"
    )


class NicIntent(Model):
    """The desired state of one RDMA NIC port on a host. Flat and template-friendly: lists are indexed by
    priority (0-7) or TC (0-7), scalars are the values written to the device."""

    netdev: str = Field(description="physical netdev name, e.g. ens1f0np0 (/sys/class/net/<netdev>)")
    rdma_device: str | None = Field(
        description="RDMA device, e.g. mlx5_0 (/sys/class/infiniband/<dev>); None for a NIC without RDMA"
    )
    rdma_port: int = Field(ge=1, le=2, description="RDMA port number, 1-2 (ports/<n> in sysfs and configfs)")
    driver: str = Field(description="kernel driver, e.g. mlx5_core (from `ethtool -i`)")
    family: str | None = Field(
        description="NIC profile family (mlx5, ice, bnxt, rxe); None = unknown driver, then only links and DCB are set"
    )
    transport: Transport = Field(description="this NIC's RDMA transport (Nic.transport or policy.transport)")
    dcb: bool = Field(description="whether trust/PFC/ETS/APP are set through DCB netlink on this NIC")
    apptrust: bool = Field(description="whether the driver takes dcb apptrust (else DSCP trust follows the APP table)")
    speed: Speed | None = Field(description="expected link speed; None = not checked")

    # --- netlink: links, MTU, VLAN, address, pause -------------------------------------------------------
    mtu_bytes: int = Field(ge=576, le=9216, description="L3 MTU in bytes on the netdev (and its VLAN netdev)")
    vlan_id: int | None = Field(description="802.1Q VLAN id 1-4094 of the RDMA VLAN; None = untagged")
    vlan_netdev: str | None = Field(
        description="VLAN netdev name '<netdev>.<vid>' (the netdev part shortened to fit 15 characters); "
        "None when untagged"
    )
    ip_netdev: str = Field(description="netdev that carries the RDMA address: vlan_netdev if set, else netdev")
    address: str | None = Field(description="RDMA IPv4 address with prefix, e.g. 10.100.0.11/16; None = none")
    global_pause: bool | None = Field(
        description="desired 802.3x global pause (rx and tx, `ethtool -A`); False = off, which PFC requires; "
        "None = leave alone (lossy transports)"
    )

    # --- DCB: trust, PFC, ETS, APP ----------------------------------------------------------------------
    trust: TrustMode = Field(description="ingress classification: dscp or pcp (dcb apptrust / mlnx_qos --trust)")
    pfc_priorities: list[int] = Field(description="priorities with PFC enabled, 0-7 each (dcb pfc prio-pfc)")
    pfc_mask: int = Field(ge=0, le=255, description="PFC enable bitmap, bit p = priority p (ieee_pfc.pfc_en)")
    prio_tc: list[int] = Field(description="TC (0-7) of each priority 0-7 (dcb ets prio-tc, mlnx_qos -p)")
    tc_tsa: list[Tsa] = Field(description="TSA of each TC 0-7 (dcb ets tc-tsa, mlnx_qos -s)")
    tc_bw_percent: list[int] = Field(
        description="ETS bandwidth share of each TC 0-7 in %, summing to 100 over ETS TCs; 0 for strict TCs "
        "(dcb ets tc-bw, mlnx_qos -t)"
    )
    dscp_to_priority: list[DscpPriority] = Field(
        description="all 64 DSCP -> priority APP entries (unmapped DSCPs get the policy's default priority); "
        "dcb app dscp-prio, mlnx_qos --dscp2prio"
    )

    # --- sysfs / configfs: RoCE ToS and mode, DCQCN ------------------------------------------------------
    roce_tos: int = Field(
        ge=0,
        le=255,
        description="IPv4 ToS of RoCE traffic = DSCP << 2 | ECT(0), 106 by default; written to configfs "
        "rdma_cm/<dev>/ports/<p>/default_roce_tos and /sys/class/infiniband/<dev>/tc/<p>/traffic_class",
    )
    roce_mode: Literal["RoCE v2", "IB/RoCE v1"] = Field(
        description="configfs rdma_cm/<dev>/ports/<p>/default_roce_mode ('RoCE v2' for RoCEv2)"
    )
    cnp_dscp: int | None = Field(description="ecn/roce_np/cnp_dscp, 0-63; None = leave alone (no DCQCN)")
    cnp_802p_prio: int | None = Field(description="ecn/roce_np/cnp_802p_prio, 0-7; None = leave alone")
    np_priorities: list[int] = Field(
        description="priorities whose ecn/roce_np/enable/<prio> is set to 1 (DCQCN notification point); "
        "the others are left alone"
    )
    rp_priorities: list[int] = Field(
        description="priorities whose ecn/roce_rp/enable/<prio> is set to 1 (DCQCN reaction point); "
        "the others are left alone"
    )
    dcqcn_rp: dict[str, int] = Field(
        description="ecn/roce_rp/<name> -> value, only the parameters the inventory sets (units in "
        "fabricd.model.DcqcnRp); absent = leave alone"
    )
    dcqcn_np: dict[str, int] = Field(
        description="ecn/roce_np/<name> -> value, only the parameters the inventory sets; absent = leave alone"
    )
    rdma_cm: bool = Field(description="set RDMA-CM default_roce_tos/default_roce_mode (configfs) for this NIC")
    traffic_class: bool = Field(description="also write MLNX_OFED tc/<port>/traffic_class (optional file)")
    cc_group: str | None = Field(description="configfs group created (mkdir) before the family's cc writes")
    cc_commit: str | None = Field(description="file written with 1 after the cc writes (bnxt_re cc/apply)")
    writes: list[KnobWrite] = Field(
        description="the family's CNP, congestion-control enables and parameter writes, "
        "in write order (from the NIC profile)"
    )
    prerequisites: list[PrerequisiteIntent] = Field(
        description="conditions the family needs first (checked by the rendered script, listed by `host plan`)"
    )

    # --- context for audit -------------------------------------------------------------------------------
    peer: str | None = Field(description="'switch:port' this NIC is cabled to, None if unknown")
    peer_port_mtu_bytes: int | None = Field(
        description="MTU of the peer switch port in bytes (L2, as the switch counts it); None if unknown"
    )
    roce_dscp: int = Field(ge=0, le=63, description="DSCP of RoCE data (policy.qos.roce.dscp)")
    roce_priority: int = Field(ge=0, le=7, description="priority of RoCE data (policy.qos.roce.priority)")

    @property
    def address_ip(self) -> str | None:
        """The bare IPv4 address (no prefix) of the RDMA interface, or None."""
        return str(IPv4Interface(self.address).ip) if self.address else None


class HostIntent(Model):
    """Everything fabricd sets on one host, per NIC. Built by :func:`host_intent`; never typed in."""

    host: str = Field(description="host name as in the inventory")
    fabric: str = Field(description="fabric name as in the inventory")
    lossless: bool = Field(description="True when any NIC of this host runs RoCEv2 lossless (PFC + ECN)")
    nics: list[NicIntent] = Field(description="one entry per RDMA NIC port, inventory order")

    def nic(self, netdev: str) -> NicIntent | None:
        return next((n for n in self.nics if n.netdev == netdev), None)


class HostStep(Model):
    """One typed step of a host plan: set ``object``'s ``path`` from ``current`` to ``desired``.

    ``path`` is the sysfs/configfs file (absolute, as on the host) for the sysfs backend, the link attribute
    (``mtu``, ``state``, ``vlan``, ``address``, ``pause``) for netlink, and the DCB object (``pfc``, ``ets``,
    ``app``, ``apptrust``) for dcb. ``current`` is None in a rendered plan (not read) and when the object is
    missing on the host. ``check`` names the audit check the step belongs to.
    """

    backend: Backend
    object: str = Field(description="interface or RDMA device the step acts on")
    path: str = Field(description="sysfs/configfs path, link attribute or DCB object")
    current: JsonValue = Field(default=None, description="value read from the host; None = unknown or absent")
    desired: JsonValue = Field(description="value fabricd sets")
    check: str = Field(description="audit check code, e.g. HOST-PFC")


class HostPlan(Model):
    """The steps to bring a host to its intent, in apply order (netlink, then dcb, then sysfs)."""

    host: str
    steps: list[HostStep] = Field(default_factory=list)
    prerequisites: list[PrerequisiteIntent] = Field(
        default_factory=list, description="what the NICs' families need first and no backend sets (`fabricd docs nics`)"
    )

    def for_backend(self, backend: Backend) -> list[HostStep]:
        return [s for s in self.steps if s.backend == backend]

    def to_json(self) -> str:
        """The HostPlan JSON format written as ``DIR/hosts/<name>.plan.json``."""
        return self.model_dump_json(indent=2) + "\n"


# ------------------------------------------------------------------------------------------------------------
# Decisions
# ------------------------------------------------------------------------------------------------------------


def vlan_netdev_name(netdev: str, vlan_id: int) -> str:
    """``<netdev>.<vid>``, the netdev part shortened so the whole fits IFNAMSIZ (15 characters)."""
    suffix = f".{vlan_id}"
    return netdev[: IFNAMSIZ - len(suffix)] + suffix


def _ets(fabric: Fabric, profile: NicProfile | None = None) -> tuple[list[int], list[Tsa], list[int]]:
    """prio_tc, tc_tsa and tc_bw_percent for the 8 hardware TCs from the policy's traffic classes.

    A priority in no class goes to the class of the default priority (else TC 0). TCs no class uses are ETS
    with 0 % (no priority maps to them). DWRR classes without a weight share equally. On a family that pins TCs
    by role (bnxt_re: RoCE on TC1, CNP on TC2) or wants them contiguous from 0 (E810), the policy's class ids are
    renumbered for the host (the switch keeps the policy's ids; a TC number is local to a port).
    """
    qos = fabric.policy.qos
    tc_id = _tc_ids(fabric, profile)
    default_tc = qos.class_of(qos.default_priority)
    prio_tc = []
    for prio in range(NUM_PRIORITIES):
        tc = qos.class_of(prio) or default_tc
        prio_tc.append(tc_id[tc.id] if tc is not None else 0)
    tsa = [Tsa.ETS] * NUM_TCS
    weights: dict[int, int] = {}
    for tc in qos.traffic_classes:
        if tc.scheduler == Scheduler.STRICT:
            tsa[tc_id[tc.id]] = Tsa.STRICT
        else:
            weights[tc_id[tc.id]] = tc.weight_percent if tc.weight_percent is not None else 1
    if weights and all(tc.weight_percent is None for tc in qos.traffic_classes if tc_id[tc.id] in weights):
        weights = dict.fromkeys(weights, 1)
    shares = split_percent(weights)
    bw = [shares.get(tc, 0) for tc in range(NUM_TCS)]
    return prio_tc, tsa, bw


def _tc_ids(fabric: Fabric, profile: NicProfile | None) -> dict[int, int]:
    """Policy class id -> the host TC it becomes on this family (identity unless the profile pins or compacts)."""
    qos = fabric.policy.qos
    ids = sorted(tc.id for tc in qos.traffic_classes)
    if profile is None or not (profile.tc_of_class or profile.compact_tcs):
        return {i: i for i in ids}
    out: dict[int, int] = {}
    if profile.tc_of_class:
        roles = {
            "roce": qos.class_of(qos.roce.priority),
            "cnp": qos.class_of(qos.cnp.priority),
            "default": qos.class_of(qos.default_priority),
        }
        for role, tc in roles.items():
            if tc is not None and tc.id not in out and role in profile.tc_of_class:
                out[tc.id] = profile.tc_of_class[role]
    free = [t for t in range(NUM_TCS) if t not in out.values()]
    for i in ids:
        if i not in out:
            out[i] = free.pop(0) if free else 0
    return out


def nic_transport(fabric: Fabric, nic: Nic) -> Transport:
    """The NIC's own transport, else the fabric's."""
    return nic.transport if nic.transport is not None else fabric.policy.transport


def _app_entries(fabric: Fabric, profile: NicProfile | None) -> list[DscpPriority]:
    """All 64 DSCP -> priority entries, or (bnxt_re) only the mapped DSCPs with the CNP DSCP last (README)."""
    qos = fabric.policy.qos
    if profile is None or profile.app_all_dscp:
        return [DscpPriority(dscp=d, priority=qos.priority_of(d)) for d in range(NUM_DSCP)]
    mapped = sorted({*qos.dscp_to_priority, qos.roce.dscp} - {qos.cnp.dscp})
    entries = [DscpPriority(dscp=d, priority=qos.priority_of(d)) for d in mapped]
    return [*entries, DscpPriority(dscp=qos.cnp.dscp, priority=qos.priority_of(qos.cnp.dscp))]


def _peer_mtu(fabric: Fabric, nic: Nic) -> int | None:
    if not nic.peer:
        return None
    try:
        switch_name, port_name = split_endpoint(nic.peer)
    except ValueError:
        return None
    switch = fabric.switch(switch_name)
    port = switch.port(port_name) if switch else None
    return port.mtu if port else None


def _write(knob: Knob, nic: Nic, value: int, check: str, prio: int | None = None) -> KnobWrite:
    text = hex(value) if knob.fmt == "hex" else str(value)
    return KnobWrite(
        knob=knob.name,
        path=knob.render_path(nic.netdev, nic.rdma_device, nic.rdma_port, prio),
        value=value,
        text=text,
        check=check,
    )


def _role_writes(nic: Nic, profile: NicProfile, roles: tuple[tuple[str, int], ...], check: str) -> list[KnobWrite]:
    """One write per role the family has a knob for (roles it lacks are skipped)."""
    return [_write(knob, nic, value, check) for role, value in roles if (knob := profile.role(role)) is not None]


def _param_writes(
    fabric: Fabric, nic: Nic, profile: NicProfile, transport: Transport, *, roce: bool
) -> list[KnobWrite]:
    """The congestion-control parameters at run time: the policy's DCQCN values (RoCE; the NIC's own ``cc`` wins),
    then the NIC's own ``cc``."""
    dcqcn = fabric.policy.dcqcn
    params = {**dcqcn.rp.model_dump(exclude_none=True), **dcqcn.np.model_dump(exclude_none=True)} if roce else {}
    chosen = [*((n, v) for n, v in params.items() if n not in nic.cc), *nic.cc.items()]
    out: list[KnobWrite] = []
    for name, value in chosen:
        knob = profile.tunables.get(name)
        if knob is not None and knob.runtime and knob.exists_for(transport):
            out.append(_write(knob, nic, value, "HOST-DCQCN"))
    return out


def _cc_writes(
    fabric: Fabric,
    nic: Nic,
    profile: NicProfile,
    transport: Transport,
    *,
    dcqcn_on: bool,
    np_prios: list[int],
    rp_prios: list[int],
) -> list[KnobWrite]:
    """The family's CNP marking, congestion-control enables and parameters, in write order."""
    qos = fabric.policy.qos
    if nic.rdma_device is None or transport == Transport.INFINIBAND:
        return []
    roce = transport in (Transport.ROCE_V2_LOSSLESS, Transport.ROCE_V2_LOSSY)
    # RoCE classification knobs of families that keep them beside their CC (bnxt_re cc/roce_dscp, roce_prio)
    out = (
        _role_writes(nic, profile, (("roce_dscp", qos.roce.dscp), ("roce_prio", qos.roce.priority)), "HOST-ROCE-TOS")
        if roce
        else []
    )
    if not dcqcn_on:
        return out
    if roce:
        out += _role_writes(nic, profile, (("cnp_dscp", qos.cnp.dscp), ("cnp_prio", qos.cnp.priority)), "HOST-CNP")
        for role, prios in (("np_enable", np_prios), ("rp_enable", rp_prios)):
            knob = profile.role(role)
            if knob is not None:
                out += [_write(knob, nic, 1, "HOST-ECN-ENABLE", p) for p in prios]
    enable = profile.cc_enable(transport)
    if enable is not None:
        out.append(_write(enable, nic, 1, "HOST-ECN-ENABLE"))
    return out + _param_writes(fabric, nic, profile, transport, roce=roce)


def _link_fields(fabric: Fabric, nic: Nic, profile: NicProfile | None, transport: Transport) -> dict[str, Any]:
    """Addressing, VLAN, MTU and link pause of one NIC port."""
    vlan_netdev = vlan_netdev_name(nic.netdev, nic.vlan) if nic.vlan is not None else None
    pause_ok = profile is None or profile.global_pause
    return {
        "netdev": nic.netdev,
        "rdma_device": nic.rdma_device,
        "rdma_port": nic.rdma_port,
        "driver": nic.driver,
        "family": profile.family if profile else None,
        "transport": transport,
        "speed": nic.speed,
        "mtu_bytes": nic.mtu,
        "vlan_id": nic.vlan,
        "vlan_netdev": vlan_netdev,
        "ip_netdev": vlan_netdev or nic.netdev,
        "address": str(nic.ip) if nic.ip is not None else None,
        "global_pause": False if transport == Transport.ROCE_V2_LOSSLESS and pause_ok else None,
        "peer": nic.peer,
        "peer_port_mtu_bytes": _peer_mtu(fabric, nic),
    }


def _qos_fields(fabric: Fabric, nic: Nic, profile: NicProfile | None, transport: Transport) -> dict[str, Any]:
    """DCB: trust, PFC, ETS, the DSCP -> priority table and the RoCE TOS, as this family takes them."""
    qos = fabric.policy.qos
    roce = transport in (Transport.ROCE_V2_LOSSLESS, Transport.ROCE_V2_LOSSY)
    prio_tc, tsa, bw = _ets(fabric, profile)
    pfc = sorted(set(fabric.policy.pfc.priorities)) if transport == Transport.ROCE_V2_LOSSLESS else []
    return {
        "dcb": transport != Transport.INFINIBAND and (profile is None or profile.dcb),
        "apptrust": profile is None or profile.apptrust,
        "trust": qos.trust,
        "pfc_priorities": pfc,
        "pfc_mask": sum(1 << p for p in pfc),
        "prio_tc": prio_tc,
        "tc_tsa": tsa,
        "tc_bw_percent": bw,
        "dscp_to_priority": _app_entries(fabric, profile),
        "roce_tos": qos.roce.effective_tos,
        "roce_mode": ROCE_MODE_V2,
        "rdma_cm": nic.rdma_device is not None and roce and (profile is None or profile.rdma_cm),
        "traffic_class": nic.rdma_device is not None and roce and profile is not None and profile.traffic_class,
        "roce_dscp": qos.roce.dscp,
        "roce_priority": qos.roce.priority,
    }


def _cc_commands(nic: Nic, profile: NicProfile | None, writes: list[KnobWrite]) -> dict[str, Any]:
    """The family's group to create before its knob writes and the command that commits them (when there are any)."""
    dev = nic.rdma_device if profile and writes else None
    if profile is None or not dev:
        return {"cc_group": None, "cc_commit": None}
    return {
        "cc_group": profile.cc_group.format(dev=dev) if profile.cc_group else None,
        "cc_commit": profile.cc_commit.format(dev=dev, port=nic.rdma_port) if profile.cc_commit else None,
    }


def _cc_fields(fabric: Fabric, nic: Nic, profile: NicProfile | None, transport: Transport) -> dict[str, Any]:
    """Congestion control: CNP marking, the ECN priorities and DCQCN parameters of mlx5-like families, and the knob
    writes (with the family's group and commit) of the others."""
    policy = fabric.policy
    qos = policy.qos
    roce = transport in (Transport.ROCE_V2_LOSSLESS, Transport.ROCE_V2_LOSSY)
    dcqcn_on = policy.congestion_control.value == "dcqcn" and nic.rdma_device is not None
    on = dcqcn_on and roce
    rp_prios = sorted(set(policy.dcqcn.rp_priorities or [qos.roce.priority])) if on else []
    np_prios = sorted(set(policy.dcqcn.np_priorities or [qos.roce.priority])) if on else []
    mlx5_like = profile is not None and profile.role("np_enable") is not None
    writes = (
        _cc_writes(fabric, nic, profile, transport, dcqcn_on=dcqcn_on, np_prios=np_prios, rp_prios=rp_prios)
        if profile
        else []
    )
    cnp_on = on and profile is not None and profile.role("cnp_dscp") is not None
    params = dcqcn_on and mlx5_like
    rp_params = policy.dcqcn.rp.model_dump(exclude_none=True) if params else {}
    np_params = policy.dcqcn.np.model_dump(exclude_none=True) if params else {}
    return {
        "cnp_dscp": qos.cnp.dscp if cnp_on else None,
        "cnp_802p_prio": qos.cnp.priority if cnp_on else None,
        "np_priorities": np_prios if mlx5_like else [],
        "rp_priorities": rp_prios if mlx5_like else [],
        "dcqcn_rp": {k: rp_params[k] for k in DCQCN_RP_PARAMS if k in rp_params},
        "dcqcn_np": {k: np_params[k] for k in DCQCN_NP_PARAMS if k in np_params},
        "writes": writes,
        **_cc_commands(nic, profile, writes),
    }


def _prerequisites(nic: Nic, profile: NicProfile | None, transport: Transport) -> list[PrerequisiteIntent]:
    return [
        PrerequisiteIntent(
            object=nic.netdev,
            what=p.what,
            check=p.render(p.check, nic.netdev, nic.rdma_device),
            command=p.render(p.command, nic.netdev, nic.rdma_device),
            source=p.source,
            automatic=p.verified,
        )
        for p in (profile.prerequisites if profile else ())
        if p.applies_to(transport)
    ]


def nic_intent(fabric: Fabric, nic: Nic) -> NicIntent:
    """Decide the desired state of one NIC port from the fabric policy and the NIC's family profile."""
    profile = nic_profile(nic)
    transport = nic_transport(fabric, nic)
    return NicIntent(
        **_link_fields(fabric, nic, profile, transport),
        **_qos_fields(fabric, nic, profile, transport),
        **_cc_fields(fabric, nic, profile, transport),
        prerequisites=_prerequisites(nic, profile, transport),
    )


def _host_intent(fabric: Fabric, host: Host) -> HostIntent:
    nics = [nic_intent(fabric, nic) for nic in host.nics]
    lossless = any(n.transport == Transport.ROCE_V2_LOSSLESS for n in nics) if nics else fabric.policy.lossless
    return HostIntent(host=host.name, fabric=fabric.name, lossless=lossless, nics=nics)


def host_intent(fabric: Fabric, host_name: str) -> HostIntent:
    """The :class:`HostIntent` of ``host_name``. Raises KeyError when the fabric has no such host."""
    host = fabric.host(host_name)
    if host is None:
        raise KeyError(host_name)
    return _host_intent(fabric, host)


def host_intents(fabric: Fabric) -> list[HostIntent]:
    """The :class:`HostIntent` of every host, inventory order."""
    return [_host_intent(fabric, h) for h in fabric.hosts]


# ------------------------------------------------------------------------------------------------------------
# Desired steps (the plan with current values unknown)
# ------------------------------------------------------------------------------------------------------------

SYS_NET = "/sys/class/net"
SYS_IB = "/sys/class/infiniband"
CONFIGFS_RDMA_CM = "/sys/kernel/config/rdma_cm"


def roce_tos_path(dev: str, port: int) -> str:
    return f"{CONFIGFS_RDMA_CM}/{dev}/ports/{port}/default_roce_tos"


def roce_mode_path(dev: str, port: int) -> str:
    return f"{CONFIGFS_RDMA_CM}/{dev}/ports/{port}/default_roce_mode"


def traffic_class_path(dev: str, port: int) -> str:
    return f"{SYS_IB}/{dev}/tc/{port}/traffic_class"


def netlink_steps(nic: NicIntent, skip: frozenset[str] = frozenset()) -> list[HostStep]:
    """Desired netlink steps of one NIC: MTU and up on the netdev, the VLAN netdev, the address, pause off."""
    steps = [
        HostStep(backend=Backend.NETLINK, object=nic.netdev, path="mtu", desired=nic.mtu_bytes, check="HOST-MTU"),
        HostStep(backend=Backend.NETLINK, object=nic.netdev, path="state", desired="up", check="HOST-LINK"),
    ]
    if nic.vlan_netdev is not None and "vlan" not in skip:
        steps += [
            HostStep(
                backend=Backend.NETLINK,
                object=nic.vlan_netdev,
                path="vlan",
                desired={"link": nic.netdev, "id": nic.vlan_id},
                check="HOST-VLAN",
            ),
            HostStep(
                backend=Backend.NETLINK, object=nic.vlan_netdev, path="mtu", desired=nic.mtu_bytes, check="HOST-MTU"
            ),
            HostStep(backend=Backend.NETLINK, object=nic.vlan_netdev, path="state", desired="up", check="HOST-LINK"),
        ]
    if nic.address is not None:
        # with the VLAN skipped (no 802.1Q on this kernel, or an untagged test bed) the address goes untagged
        where = nic.netdev if "vlan" in skip else nic.ip_netdev
        steps.append(
            HostStep(backend=Backend.NETLINK, object=where, path="address", desired=nic.address, check="HOST-ADDR")
        )
    if nic.global_pause is not None and "pause" not in skip:
        steps.append(
            HostStep(
                backend=Backend.NETLINK,
                object=nic.netdev,
                path="pause",
                desired={"rx": nic.global_pause, "tx": nic.global_pause},
                check="HOST-PAUSE",
            )
        )
    return steps


def dcb_steps(nic: NicIntent) -> list[HostStep]:
    """Desired DCB steps of one NIC: apptrust (where the driver has it), PFC, ETS and the DSCP APP table; none on
    a family without DCB (Soft-RoCE) or an InfiniBand port."""
    if not nic.dcb:
        return []
    trust = (
        [
            HostStep(
                backend=Backend.DCB,
                object=nic.netdev,
                path="apptrust",
                desired=["dscp"] if nic.trust == TrustMode.DSCP else ["pcp"],
                check="HOST-TRUST",
            )
        ]
        if nic.apptrust
        else []
    )
    return [
        *trust,
        HostStep(backend=Backend.DCB, object=nic.netdev, path="pfc", desired=nic.pfc_mask, check="HOST-PFC"),
        HostStep(
            backend=Backend.DCB,
            object=nic.netdev,
            path="ets",
            desired={
                "prio_tc": list(nic.prio_tc),
                "tc_tsa": [t.value for t in nic.tc_tsa],
                "tc_bw": list(nic.tc_bw_percent),
            },
            check="HOST-ETS",
        ),
        HostStep(
            backend=Backend.DCB,
            object=nic.netdev,
            path="app",
            desired={str(e.dscp): e.priority for e in nic.dscp_to_priority},
            check="HOST-DSCP-MAP",
        ),
    ]


COMMIT_CHECK = "HOST-CC-COMMIT"
"""Check code of a commit step (bnxt_re ``cc/apply``): written with 1 after the knobs it commits, only when one of
them changes; it has no value to compare (reading ``apply`` prints the hardware's parameter set)."""


def sysfs_steps(nic: NicIntent) -> list[HostStep]:
    """Desired sysfs/configfs steps of one NIC from its family profile: RoCE ToS and mode (RDMA-CM), traffic_class
    (MLNX_OFED), then the family's CNP, congestion-control enables and parameters, then its commit file."""
    steps: list[HostStep] = []
    dev = nic.rdma_device
    if dev is not None and nic.rdma_cm:
        steps += [
            HostStep(
                backend=Backend.SYSFS,
                object=dev,
                path=roce_tos_path(dev, nic.rdma_port),
                desired=nic.roce_tos,
                check="HOST-ROCE-TOS",
            ),
            HostStep(
                backend=Backend.SYSFS,
                object=dev,
                path=roce_mode_path(dev, nic.rdma_port),
                desired=nic.roce_mode,
                check="HOST-ROCE-MODE",
            ),
        ]
    if dev is not None and nic.traffic_class:
        steps.append(
            HostStep(
                backend=Backend.SYSFS,
                object=dev,
                path=traffic_class_path(dev, nic.rdma_port),
                desired=nic.roce_tos,
                check="HOST-ROCE-TOS",
            )
        )
    for w in nic.writes:
        obj = nic.netdev if w.path.startswith(SYS_NET + "/") else (dev or nic.netdev)
        steps.append(HostStep(backend=Backend.SYSFS, object=obj, path=w.path, desired=w.value, check=w.check))
    if nic.cc_commit is not None and nic.writes:
        steps.append(
            HostStep(backend=Backend.SYSFS, object=dev or nic.netdev, path=nic.cc_commit, desired=1, check=COMMIT_CHECK)
        )
    return steps


def desired_plan(intent: HostIntent, skip: frozenset[str] = frozenset()) -> HostPlan:
    """The whole plan of a host with ``current`` unknown: what ``fabricd render`` writes as <name>.plan.json.

    ``skip`` drops step groups by name: ``vlan`` (no VLAN netdev; the address goes on the untagged netdev),
    ``pause``, ``netlink``, ``dcb``, ``sysfs``.
    """
    steps: list[HostStep] = []
    for nic in intent.nics:
        if "netlink" not in skip:
            steps += netlink_steps(nic, skip)
    for nic in intent.nics:
        if "dcb" not in skip:
            steps += dcb_steps(nic)
    for nic in intent.nics:
        if "sysfs" not in skip:
            steps += sysfs_steps(nic)
    return HostPlan(host=intent.host, steps=steps, prerequisites=[p for n in intent.nics for p in n.prerequisites])
