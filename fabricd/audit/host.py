"""``fabricd audit host``: the live RoCE host against its intent, check by check.

Each check has a code, a title and a fix hint. Differences come from the backends' pure ``plan`` (a step left in
the plan is a finding of its check); checks that no step covers are computed here: the NIC exists, the link is
operationally up, the MTU fits the peer switch port, and a RoCEv2 GID exists for the RDMA address. A NIC or file
the intent names but the host lacks is a finding, never an error. A check with no source (e.g. DCB on a replay
root, or ``--skip dcb``) is reported as skipped with the reason.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass

from pydantic import JsonValue

from fabricd.errors import Fix
from fabricd.hosts.base import HostBackend, Reading
from fabricd.hosts.dcb_bundle import DcbBundle
from fabricd.hosts.sysfs import SysfsLinks
from fabricd.intent.host import COMMIT_CHECK, Backend, HostIntent, HostStep, NicIntent
from fabricd.model.checks import by_code
from fabricd.readers.gids import gid_of_ipv4
from fabricd.readers.link_speed import read_speed_mbps
from fabricd.readers.rdma import read_gids

from .report import AuditReport, CheckSpec, Results

log = logging.getLogger(__name__)


@dataclass(frozen=True, kw_only=True)
class HostCheck(CheckSpec):
    """A host audit check: its declaration, and the backend whose reading and plan it compares (None: computed
    here)."""

    subject: str = "host"
    backend: Backend | None = None


def _host(code: str, title: str, hint: str, backend: Backend | None = None, fixes: tuple[Fix, ...] = ()) -> HostCheck:
    return HostCheck(code=code, title=title, hint=hint, backend=backend, fixes=fixes)


_APPLY = Fix(("host", "apply"))
_NICS_DOC = Fix(("docs",), operands=("nics",), text="each family's files")


HOST_CHECKS: tuple[HostCheck, ...] = (
    _host("HOST-NIC", "RDMA NIC present", "check the NIC's netdev name in the inventory (`ip link`)", Backend.NETLINK),
    _host(
        "HOST-LINK",
        "link admin and oper up",
        "check the cable and the peer switch port",
        Backend.NETLINK,
        (Fix(("host", "apply"), text="sets it up"),),
    ),
    _host(
        "HOST-MTU",
        "MTU as intended and within the switch port MTU",
        "keep the host MTU <= the switch port MTU",
        Backend.NETLINK,
        (_APPLY,),
    ),
    _host(
        "HOST-SPEED",
        "link speed as intended",
        "check the cable or optic and the switch port's speed "
        "(`ethtool IF`): the link came up at another speed, or the inventory names the wrong speed",
        Backend.NETLINK,
    ),
    _host(
        "HOST-VLAN",
        "RDMA VLAN netdev",
        "the 8021q module must be loaded",
        Backend.NETLINK,
        (Fix(("host", "apply"), text="creates it"),),
    ),
    _host("HOST-ADDR", "RDMA address", "remove a competing address in the same subnet", Backend.NETLINK, (_APPLY,)),
    _host(
        "HOST-PAUSE",
        "802.3x global pause off",
        "`ethtool -A IF rx off tx off` (PFC and global pause exclude each other)",
        Backend.NETLINK,
    ),
    _host(
        "HOST-TRUST", "trust mode", "`dcb apptrust set dev IF order dscp` or `mlnx_qos -i IF --trust dscp`", Backend.DCB
    ),
    _host(
        "HOST-PFC",
        "PFC enable mask",
        "`mlnx_qos -i IF --pfc 0,0,0,1,0,0,0,0` or `dcb pfc set dev IF prio-pfc all:off 3:on`",
        Backend.DCB,
    ),
    _host(
        "HOST-ETS",
        "ETS: priority to TC, TSA and bandwidth",
        "`dcb ets set dev IF prio-tc ... tc-tsa ... tc-bw ...`",
        Backend.DCB,
    ),
    _host(
        "HOST-DSCP-MAP",
        "DSCP to priority map",
        "`dcb app replace dev IF dscp-prio 26:3 48:6 ...` or `mlnx_qos --dscp2prio set,26,3`",
        Backend.DCB,
    ),
    _host(
        "HOST-ROCE-TOS",
        "RoCE ToS (RDMA-CM default and traffic_class)",
        "`cma_roce_tos -d DEV -t 106`; `echo 106 > /sys/class/infiniband/DEV/tc/1/traffic_class`",
        Backend.SYSFS,
    ),
    _host("HOST-ROCE-MODE", "RDMA-CM default RoCE mode", "`cma_roce_mode -d DEV -p 1 -m 2`", Backend.SYSFS),
    _host(
        "HOST-CNP",
        "CNP DSCP and 802.1p priority",
        "apply writes the NIC family's CNP files (mlx5 ecn/roce_np/cnp_dscp, bnxt_re cc/cnp_dscp)",
        Backend.SYSFS,
        (_APPLY, _NICS_DOC),
    ),
    _host(
        "HOST-ECN-ENABLE",
        "congestion control (DCQCN / ECN) enabled for the RoCE priority",
        "apply writes the family's enable (mlx5 ecn/roce_np|roce_rp/enable/<prio>, bnxt_re cc/ecn_enable, "
        "irdma roce_dcqcn_enable or iw_ecn_enable)",
        Backend.SYSFS,
        (_APPLY, _NICS_DOC),
    ),
    _host(
        "HOST-DCQCN",
        "congestion-control parameters",
        "values are per firmware, so set what the inventory sets (policy.dcqcn for mlx5, cc: per NIC)",
        Backend.SYSFS,
        (_APPLY,),
    ),
    _host(
        "HOST-GID",
        "RoCEv2 GID for the RDMA address",
        "the GID appears when the address is on the RDMA netdev (VLAN netdev when tagged)",
        Backend.SYSFS,
        (Fix(("gids",), text="lists them"),),
    ),
    _host(
        "HOST-PREREQ",
        "NIC family prerequisites",
        "run the rendered host script, which checks and sets them, or the command each one names",
        fixes=(_NICS_DOC,),
    ),
)
CHECK_BY_CODE = by_code(HOST_CHECKS)
ROCE_V2 = "RoCE v2"
OPER_OK = ("UP", "UNKNOWN")

_NO_BACKEND: tuple[tuple[Backend, str], ...] = (
    (Backend.NETLINK, "no link source"),
    (Backend.DCB, "no DCB source (a replay root without dcb/, no network namespace given, or dcb skipped)"),
    (Backend.SYSFS, "no sysfs source (sysfs skipped)"),
)
"""Why a backend's checks are skipped when it is not there."""


class _Collector(Results):
    """The host audit's results; ``touched`` are the checks something was compared for, ``origins`` where the
    values read came from (the DCB bundle's notes)."""

    def __init__(self) -> None:
        super().__init__(HOST_CHECKS)
        self.touched: set[str] = set()
        self.origins: dict[str, list[str]] = {}

    def add_finding(self, code: str, obj: str, path: str, message: str, *, expected: JsonValue, got: JsonValue) -> None:
        self.add(CHECK_BY_CODE[code].finding(obj=obj, path=path, message=message, expected=expected, got=got))


def _step_message(step: HostStep, current: Reading | None) -> str:
    if current is not None and current.error:
        return f"cannot read: {current.error}"
    if current is None or not current.present:
        return "missing on this host"
    return "differs from intent"


def audit_host(
    intent: HostIntent,
    backends: list[HostBackend],
    *,
    gid_root: str | os.PathLike[str] | None = None,
    skip: frozenset[str] = frozenset(),
    sources: dict[Backend, str] | None = None,
) -> AuditReport:
    """Compare the host with ``intent`` through ``backends`` (their read_state/plan; nothing is written).

    ``gid_root`` is the sysfs root holding /sys/class/infiniband (None: no GID check). ``sources`` names where
    each backend read from, for the report's notes.
    """
    col = _Collector()
    have = {b.backend: b for b in backends}
    for kind, why in _NO_BACKEND:
        if kind not in have:
            for c in HOST_CHECKS:
                if c.backend == kind:
                    col.skip(c.code, why)
    for backend in backends:
        _compare_backend(col, backend, intent, skip)
    _live_checks(col, intent, have, gid_root, skip)
    _untouched_skips(col, intent, skip, gid_root=gid_root, sysfs=Backend.SYSFS in have)
    for c in HOST_CHECKS:
        note = (sources or {}).get(c.backend) if c.backend else None
        if c.code in col.origins:
            note = "; ".join(dict.fromkeys(col.origins[c.code]))
        if note is not None:
            col.notes[c.code] = note
    return col.report("host", intent.host)


def _compare_backend(col: _Collector, backend: HostBackend, intent: HostIntent, skip: frozenset[str]) -> None:
    """A step left in the backend's plan is a finding of its check; what the backend cannot read is a skip."""
    snap = backend.read_state(intent, skip)
    plan = backend.plan(intent, snap, skip)
    for step in plan.steps:
        if step.check == COMMIT_CHECK:
            continue  # a commit file (bnxt_re cc/apply) follows its knobs' findings; it has no value to audit
        reading = snap.get(step.object, step.path)
        col.add_finding(
            step.check, step.object, step.path, _step_message(step, reading), expected=step.desired, got=step.current
        )
    steps = backend.steps(intent, skip)
    if isinstance(backend, SysfsLinks):
        for code, path in (("HOST-VLAN", "vlan"), ("HOST-ADDR", "address"), ("HOST-PAUSE", "pause")):
            if any(s.path == path for s in steps):
                col.skip(
                    code,
                    f"{path} is not in a replay root's sysfs; audit in the host's network namespace or on the host",
                )
    elif isinstance(backend, DcbBundle):
        for step in steps:
            reason = backend.skip_reason(step.object, step.path)
            if reason is not None:
                col.skip(step.check, reason)
            elif (origin := backend.origin(step.object, step.path)) is not None:
                col.origins.setdefault(step.check, []).append(f"{step.object}: {origin}")
    col.touched.update(step.check for step in steps)


def _live_checks(
    col: _Collector,
    intent: HostIntent,
    have: dict[Backend, HostBackend],
    gid_root: str | os.PathLike[str] | None,
    skip: frozenset[str],
) -> None:
    """The checks no plan step covers: the NIC and its link, MTU against the switch port, GID and speed."""
    netlink = have.get(Backend.NETLINK)
    for nic in intent.nics:
        if netlink is not None:
            _nic_and_link(col, netlink, nic, skip)
        _mtu_vs_switch(col, nic)
        if gid_root is not None and Backend.SYSFS in have:
            _gid(col, gid_root, nic, skip)
        if gid_root is not None and netlink is not None:
            _speed(col, gid_root, nic)


def _untouched_skips(
    col: _Collector, intent: HostIntent, skip: frozenset[str], *, gid_root: str | os.PathLike[str] | None, sysfs: bool
) -> None:
    """Why a check nothing was compared for is skipped (the first reason given wins)."""
    prereqs = [f"{p.object}: {p.what}" for n in intent.nics for p in n.prerequisites]
    if prereqs:
        col.skip("HOST-PREREQ", "not read by the audit (firmware flags and devlink parameters): " + "; ".join(prereqs))
    untouched = (
        ("HOST-TRUST", "the NIC's driver has no DCB apptrust: DSCP trust follows the DSCP APP table (HOST-DSCP-MAP)"),
        ("HOST-PFC", "no DCB on this NIC family"),
        ("HOST-ETS", "no DCB on this NIC family"),
        ("HOST-DSCP-MAP", "no DCB on this NIC family"),
        ("HOST-ROCE-TOS", "no RoCE NIC (iWARP or InfiniBand transport, or no RDMA device)"),
        ("HOST-ROCE-MODE", "no RoCE NIC"),
        ("HOST-PREREQ", "no NIC family here needs one"),
        ("HOST-VLAN", "no NIC has a VLAN" if "vlan" not in skip else "vlan skipped"),
        ("HOST-PAUSE", "global pause is left alone (lossy transport)" if "pause" not in skip else "pause skipped"),
        ("HOST-ECN-ENABLE", "no DCQCN in the policy"),
        ("HOST-DCQCN", "the inventory sets no DCQCN parameter"),
        ("HOST-CNP", "no DCQCN in the policy"),
        ("HOST-ADDR", "no NIC has an address"),
    )
    for code, why in untouched:
        if code not in col.touched:
            col.skip(code, why)
    if gid_root is None or not sysfs:
        col.skip("HOST-GID", "no sysfs root to read GIDs from")
    if "HOST-SPEED" not in col.touched:
        col.skip("HOST-SPEED", "the inventory sets no NIC speed" if gid_root is not None else "no sysfs root")
        # (with no link source, the skip at the top has already said so: skip keeps the first reason)


def _nic_and_link(col: _Collector, netlink: HostBackend, nic: NicIntent, skip: frozenset[str]) -> None:
    col.touched.update({"HOST-NIC", "HOST-LINK"})
    mtu = netlink.read(nic.netdev, "mtu")
    if not mtu.present:
        col.add_finding(
            "HOST-NIC",
            nic.netdev,
            "link",
            "the NIC the inventory names is not on this host",
            expected=nic.netdev,
            got=mtu.error,
        )
        return
    names = [nic.netdev] + ([nic.vlan_netdev] if nic.vlan_netdev and "vlan" not in skip else [])
    for name in names:
        oper = netlink.read(name, "operstate")
        if oper.present and str(oper.value).upper() not in OPER_OK:
            col.add_finding(
                "HOST-LINK", name, "operstate", "link is not operationally up", expected="UP", got=oper.value
            )


def _mtu_vs_switch(col: _Collector, nic: NicIntent) -> None:
    if nic.peer_port_mtu_bytes is None:
        return
    col.touched.add("HOST-MTU")
    if nic.mtu_bytes > nic.peer_port_mtu_bytes:
        col.add_finding(
            "HOST-MTU",
            nic.netdev,
            f"peer {nic.peer}",
            "host MTU exceeds the switch port MTU: large frames are dropped at the switch",
            expected=f"<= {nic.peer_port_mtu_bytes}",
            got=nic.mtu_bytes,
        )


def _speed(col: _Collector, root: str | os.PathLike[str], nic: NicIntent) -> None:
    """The NIC's link speed (``/sys/class/net/<if>/speed``, Mb/s) against the inventory's ``speed``."""
    if nic.speed is None:
        return
    got = read_speed_mbps(root, nic.netdev)
    if got is None:
        col.skip(
            "HOST-SPEED",
            f"/sys/class/net/{nic.netdev}/speed gives no speed under the root (link down, no "
            "such file, or the NIC is in another network namespace)",
        )
        return
    col.touched.add("HOST-SPEED")
    want = nic.speed.gbps * 1000
    if got != want:
        col.add_finding(
            "HOST-SPEED",
            nic.netdev,
            f"/sys/class/net/{nic.netdev}/speed",
            f"link at {got} Mb/s, the inventory says {nic.speed.value}",
            expected=f"{want} Mb/s ({nic.speed.value})",
            got=f"{got} Mb/s",
        )


def _gid(col: _Collector, root: str | os.PathLike[str], nic: NicIntent, skip: frozenset[str]) -> None:
    if nic.rdma_device is None or nic.address_ip is None:
        return
    col.touched.add("HOST-GID")
    want = gid_of_ipv4(nic.address_ip)
    ndev = nic.netdev if "vlan" in skip else nic.ip_netdev
    entries = read_gids(root, nic.rdma_device, nic.rdma_port)
    where = f"/sys/class/infiniband/{nic.rdma_device}/ports/{nic.rdma_port}/gids"
    if any(e.gid == want and (e.type or "").strip() == ROCE_V2 and e.ndev == ndev for e in entries):
        return
    got: JsonValue = [f"{e.index}:{e.gid}:{e.type}:{e.ndev}" for e in entries if e.gid == want] or None
    col.add_finding(
        "HOST-GID",
        nic.rdma_device,
        where,
        f"no RoCE v2 GID for {nic.address_ip} on {ndev}",
        expected=f"{want} RoCE v2 {ndev}",
        got=got,
    )
