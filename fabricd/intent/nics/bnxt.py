"""Broadcom NetXtreme-C/E: BCM574xx, BCM575xx (Thor), BCM576xx (Thor 2, BCM57608) (``bnxt_en`` + ``bnxt_re``).

Sources (Broadcom netxtreme-bnxt_en out-of-tree driver package; read from the public copy
lykeioner/driver@bcef51d69610dff96717235767d3bd075a1e2cdf):

- ``bnxt_re/README.TXT`` "DCB Settings": RoCE traffic must be on TC1 and CNPs on TC2, one RoCE priority, one RoCE
  DSCP in the APP table, the CNP DSCP entry programmed last; "Congestion Control": configfs
  ``/sys/kernel/config/bnxt_re/<dev>/ports/<port>/cc/`` (mkdir the device group first) with ``cnp_dscp cnp_prio
  apply cc_mode roce_prio ecn_enable g inact_cp init_cr init_tr nph_per_state rtt tcp_cp roce_dscp ecn_marking``;
  changes take effect after ``echo 1 > apply``.
- ``bnxt_re/configfs.c``: values are printed as ``%#x`` and parsed as hexadecimal by older drivers (``sscanf %x``),
  so fabricd writes ``0x..``, which both the old and the new (``kstrtouint`` base 0) parsers read alike.
- ``bnxt_re/hw_counters.c``: hw_counters names (CNP/ECN names follow mlx5's).
- ethtool names: the bnxt_en capture in tests/golden/readers/ethtool (``rx_pfc_ena_frames_pri3`` ...).
"""

from __future__ import annotations

from fabricd.model import Transport
from fabricd.readers.rdma import BNXT_RE_HW_COUNTERS

from .base import Knob, NicProfile, Prerequisite

CC = "/sys/kernel/config/bnxt_re/{dev}/ports/{port}/cc"
SRC = "Broadcom bnxt_re README.TXT 'Congestion Control' (configfs cc/), netxtreme-bnxt_en"
U8 = (0, 255)


def _knob(name: str, lo: int, hi: int, unit: str, *, verified: bool = True, default: int | None = None) -> Knob:
    return Knob(name, f"{CC}/{name}", lo, hi, unit, SRC, fmt="hex", verified=verified, default=default)


PROFILE = NicProfile(
    family="bnxt",
    title="Broadcom NetXtreme-E BCM574xx/575xx/576xx, Thor/Thor 2 (bnxt_en, bnxt_re)",
    drivers=("bnxt_en",),
    rdma_drivers=("bnxt_re",),
    transports=frozenset({Transport.ROCE_V2_LOSSLESS, Transport.ROCE_V2_LOSSY}),
    dcb=True,
    apptrust=False,
    max_tcs=8,
    max_pfc_priorities=1,
    tc_of_class={"default": 0, "roce": 1, "cnp": 2},
    app_all_dscp=False,
    global_pause=True,
    rdma_cm=True,
    traffic_class=False,
    ethtool_driver="bnxt_en",
    hw_counters=BNXT_RE_HW_COUNTERS,
    cc_group="/sys/kernel/config/bnxt_re/{dev}",
    cc_commit=f"{CC}/apply",
    roles={
        "roce_dscp": _knob("roce_dscp", 0, 63, "DSCP"),
        "roce_prio": _knob("roce_prio", 0, 7, "802.1p priority"),
        "cnp_dscp": _knob("cnp_dscp", 0, 63, "DSCP"),
        "cnp_prio": _knob("cnp_prio", 0, 7, "802.1p priority"),
        "cc_enable.roce_v2_lossless": _knob("ecn_enable", 0, 1, "bool"),
        "cc_enable.roce_v2_lossy": _knob("ecn_enable", 0, 1, "bool"),
    },
    tunables={
        # the README lists these files without ranges or units: ranges are the u8 fields of the driver's
        # bnxt_qplib_cc_param, unverified
        "ecn_marking": _knob("ecn_marking", 0, 3, "ECN codepoint marked on RoCE packets", verified=False),
        "cc_mode": _knob("cc_mode", 0, 1, "0 = DCTCP-like, 1 = probabilistic (firmware-defined)", verified=False),
        "g": _knob("g", *U8, "alpha update gain", verified=False),
        "inact_cp": _knob("inact_cp", *U8, "inactivity threshold", verified=False),
        "init_cr": _knob("init_cr", 0, 65535, "initial current rate", verified=False),
        "init_tr": _knob("init_tr", 0, 65535, "initial target rate", verified=False),
        "nph_per_state": _knob("nph_per_state", *U8, "no-congestion phases per state", verified=False),
        "rtt": _knob("rtt", 0, 65535, "RTT timer, µs", verified=False),
        "tcp_cp": _knob("tcp_cp", *U8, "TCP congestion probability", verified=False),
        # README "DCB Settings": the driver tags RoCE with a priority VLAN 0 by default; 1 disables that for
        # DSCP-only PFC
        "disable_prio_vlan_tx": _knob("disable_prio_vlan_tx", 0, 1, "bool: no VLAN 0 priority tag on RoCE"),
    },
    prerequisites=(
        Prerequisite(
            what="host-managed DCB: the firmware LLDP/DCBX agent off, so that bnxt_en accepts DCB netlink settings "
            "(else they come from the switch or from Broadcom niccli/bnxtqos)",
            check="dcb pfc show dev {netdev} > /dev/null",
            command="disable the firmware LLDP agent with Broadcom niccli (see the bnxt_en README)",
            source="bnxt_re README.TXT 'DCB Settings' (bnxtqos, niccli, lldptool); unverified which niccli option",
            verified=False,
        ),
    ),
    sources=(
        "Broadcom netxtreme-bnxt_en bnxt_re/README.TXT (DCB Settings, Congestion Control, Sysfs counters)",
        "Broadcom netxtreme-bnxt_en bnxt_re/configfs.c, bnxt_re/hw_counters.c",
    ),
    limits=(
        "RoCE must be on TC1 and CNPs on TC2 (README): fabricd pins those TCs on these NICs",
        "one RoCE priority (one PFC priority) and one RoCE DSCP in the APP table; the CNP DSCP entry goes last",
        "no mlx5 DCQCN parameters (rpg_*, dce_tcp_*...): the cc/ knobs are Broadcom's own; ranges unverified",
        "configfs cc/ exists with Broadcom's out-of-tree bnxt_re only (the inbox driver has no cc/ tree)",
    ),
)
