"""Intel Ethernet 800 Series, E810 (``ice`` + ``irdma``), RoCEv2 or iWARP.

Sources:

- Intel irdma Linux driver README (irdma 1.x for E800/X722): "iWARP/RoCEv2 Selection", "Flow Control Settings"
  (at most 4 TCs, contiguous from 0, one PFC-enabled; firmware DCB must be off for non-willing PFC:
  ``ethtool --set-priv-flags <if> fw-lldp-agent off``), "ECN Configuration" (configfs
  ``/sys/kernel/config/irdma/<dev>/{roce_dcqcn_enable,roce_dctcp_enable,roce_timely_enable,iw_ecn_enable,
  iw_dctcp_enable,iw_timely_enable}``, defaults; DCQCN tuning only as module parameters), "DSCP Configuration"
  (L3 QoS needs FW-LLDP off), "RDMA Statistics" (hw_counters names).
- Linux ``Documentation/networking/devlink/ice.rst`` and devlink-params.rst: the generic ``enable_roce`` /
  ``enable_iwarp`` parameters select the RDMA protocol per PF (runtime cmode).
- Linux ``Documentation/networking/device_drivers/ethernet/intel/ice.rst``: the ``fw-lldp-agent`` private flag.
- ethtool names: the ice capture in tests/golden/readers/ethtool (``rx_priority_N_xoff.nic`` ...).
"""

from __future__ import annotations

from fabricd.model import Transport
from fabricd.readers.counter_names import (
    DIR,
    DISCARDS,
    LINK_PAUSE_FRAMES,
    LINK_RESUME_FRAMES,
    PAUSE_FRAMES,
    PAUSE_TRANSITIONS,
    PRIO,
    RESUME_FRAMES,
    DriverNames,
    Generation,
    HwMeaning,
    NameRule,
)

from .base import Knob, LabNic, NicProfile, Prerequisite

CFG = "/sys/kernel/config/irdma/{dev}"
SRC_README = "Intel irdma README 'ECN Configuration' (configfs /sys/kernel/config/irdma/<dev>)"
SRC_MODPARAM = "Intel irdma README 'Advanced Congestion Control Knobs' (module parameters, out-of-tree irdma only)"
ROCE = frozenset({Transport.ROCE_V2_LOSSLESS, Transport.ROCE_V2_LOSSY})


def _bool(name: str, default: int) -> Knob:
    # the README: "If the interface is in iWARP mode, the files have a "iw_" prefix", RoCEv2 mode "roce_"
    mode = frozenset({Transport.IWARP}) if name.startswith("iw_") else ROCE
    return Knob(name, f"{CFG}/{name}", 0, 1, "bool", SRC_README, default=default, transports=mode)


def _modparam(name: str, unit: str, lo: int, hi: int) -> Knob:
    # ranges come from the README's words where it gives them (min_dec_factor 1-100 %); the others are the u32
    # module parameter type: unverified
    return Knob(
        name,
        f"/sys/module/irdma/parameters/{name}",
        lo,
        hi,
        unit,
        SRC_MODPARAM,
        runtime=False,
        verified=name == "dcqcn_min_dec_factor",
    )


ICE_NIC_SUFFIX: tuple[NameRule, ...] = (
    NameRule(rf"{DIR}_priority_{PRIO}_xoff\.nic", PAUSE_FRAMES),
    NameRule(rf"{DIR}_priority_{PRIO}_xon\.nic", RESUME_FRAMES),
    NameRule(rf"rx_priority_{PRIO}_xon_2_xoff\.nic", PAUSE_TRANSITIONS, "rx"),
    NameRule(rf"link_xoff_{DIR}\.nic", LINK_PAUSE_FRAMES),
    NameRule(rf"link_xon_{DIR}\.nic", LINK_RESUME_FRAMES),
    NameRule(r"rx_dropped\.nic", DISCARDS, qualifier="rx_port_buffer"),
    NameRule(r"tx_dropped_link_down\.nic", DISCARDS, qualifier="tx_link_down"),
)
"""ice (Intel E810), in-tree and older out-of-tree drivers: port counters carry a ``.nic`` suffix; no pause
duration."""

ICE_EVENTS: tuple[NameRule, ...] = (
    NameRule(rf"port-{DIR}-xoff_prio-{PRIO}_events", PAUSE_FRAMES),
    NameRule(rf"port-{DIR}-xon_prio-{PRIO}_events", RESUME_FRAMES),
)
"""ice, newer out-of-tree drivers (Intel's ice_ethtool.h ``PICK()``: ``port-rx-xoff_prio-N_events``); no capture
holds them."""

ETHTOOL = DriverNames(
    "ice",
    (
        Generation("in-tree and older out-of-tree (.nic suffix)", ICE_NIC_SUFFIX, "ice_ethtool.c; capture"),
        Generation("newer out-of-tree (port-*_events)", ICE_EVENTS, "Intel ice_ethtool.h PICK(); no capture"),
    ),
)
"""ice ``ethtool -S`` names per generation."""

HW_COUNTERS: dict[str, HwMeaning] = {
    # Intel irdma README "RDMA Statistics" (out-of-tree irdma 1.x for E800/X722)
    "cnpSent": ("cnp_sent", "tx", None),
    "cnpHandled": ("cnp_handled", "rx", None),
    "cnpIgnored": ("cnp_ignored", "rx", None),
    "RxECNMrkd": ("ecn_marked_packets", "rx", None),
    "tcpRetransSegs": ("retransmits", "tx", None),
    "RxUDP": ("packets", "rx", None),
    "TxUDP": ("packets", "tx", None),
}
"""irdma ``hw_counters`` (Intel E810 RoCEv2/iWARP, X722 iWARP). In iWARP mode the traffic counters are
``tcpInSegs``/``tcpOutSegs`` (kept by their own name)."""

PROFILE = NicProfile(
    family="ice",
    title="Intel Ethernet 800 Series / E810 (ice, irdma): RoCEv2 or iWARP",
    drivers=("ice",),
    rdma_drivers=("irdma",),
    transports=frozenset({Transport.ROCE_V2_LOSSLESS, Transport.ROCE_V2_LOSSY, Transport.IWARP}),
    dcb=True,
    apptrust=False,
    max_tcs=4,
    max_pfc_priorities=1,
    compact_tcs=True,
    global_pause=True,
    rdma_cm=True,
    traffic_class=False,
    ethtool=ETHTOOL,
    hw_counters=HW_COUNTERS,
    lab=LabNic("ice-ethq.txt", "ice"),
    cc_group=CFG,
    roles={
        "cc_enable.roce_v2_lossless": _bool("roce_dcqcn_enable", 0),
        "cc_enable.roce_v2_lossy": _bool("roce_dcqcn_enable", 0),
        "cc_enable.iwarp": _bool("iw_ecn_enable", 1),
    },
    tunables={
        "roce_dctcp_enable": _bool("roce_dctcp_enable", 0),
        "roce_timely_enable": _bool("roce_timely_enable", 0),
        "iw_dctcp_enable": _bool("iw_dctcp_enable", 0),
        "iw_timely_enable": _bool("iw_timely_enable", 0),
        "dcqcn_min_dec_factor": _modparam("dcqcn_min_dec_factor", "max single rate decrease, %", 1, 100),
        "dcqcn_min_rate": _modparam("dcqcn_min_rate", "rate floor, Mb/s", 0, 2**32 - 1),
        "dcqcn_F": _modparam("dcqcn_F", "stages of bandwidth recovery", 0, 2**32 - 1),
        "dcqcn_T": _modparam("dcqcn_T", "µs before a window increase", 0, 2**32 - 1),
        "dcqcn_B": _modparam("dcqcn_B", "bytes before a window increase", 0, 2**32 - 1),
        "dcqcn_rai_factor": _modparam("dcqcn_rai_factor", "MSS added in additive increase", 0, 2**32 - 1),
        "dcqcn_hai_factor": _modparam("dcqcn_hai_factor", "MSS added in hyper increase", 0, 2**32 - 1),
        "dcqcn_rreduce_mperiod": _modparam("dcqcn_rreduce_mperiod", "µs between rate reductions", 0, 2**32 - 1),
    },
    aliases={
        "rpg_min_dec_fac": "dcqcn_min_dec_factor",
        "rpg_min_rate": "dcqcn_min_rate",
        "rpg_threshold": "dcqcn_F",
        "rpg_time_reset": "dcqcn_T",
        "rpg_byte_reset": "dcqcn_B",
        "rate_reduce_monitor_period": "dcqcn_rreduce_mperiod",
    },
    prerequisites=(
        Prerequisite(
            what="firmware LLDP agent off, so that host DCB (PFC, ETS, DSCP APP) is not overridden by firmware DCBX",
            check="ethtool --show-priv-flags {netdev} | grep -Eq '^fw-lldp-agent *: *off'",
            command="ethtool --set-priv-flags {netdev} fw-lldp-agent off",
            source="irdma README 'Flow Control Settings'; Linux Documentation/networking/device_drivers/ethernet/"
            "intel/ice.rst (FW-LLDP)",
        ),
        Prerequisite(
            what="RDMA protocol RoCEv2 on this PF (devlink enable_roce)",
            check='devlink dev param show "pci/$(basename "$(readlink -f /sys/class/net/{netdev}/device)")" '
            "name enable_roce | grep -q 'value true'",
            command='devlink dev param set "pci/$(basename "$(readlink -f /sys/class/net/{netdev}/device)")" '
            "name enable_roce value true cmode runtime",
            source="Linux Documentation/networking/devlink/ice.rst (enable_roce, enable_iwarp; runtime)",
            transports=ROCE,
        ),
        Prerequisite(
            what="RDMA protocol iWARP on this PF (devlink enable_iwarp)",
            check='devlink dev param show "pci/$(basename "$(readlink -f /sys/class/net/{netdev}/device)")" '
            "name enable_iwarp | grep -q 'value true'",
            command='devlink dev param set "pci/$(basename "$(readlink -f /sys/class/net/{netdev}/device)")" '
            "name enable_iwarp value true cmode runtime",
            source="Linux Documentation/networking/devlink/ice.rst (enable_roce, enable_iwarp; runtime)",
            transports=frozenset({Transport.IWARP}),
        ),
    ),
    sources=(
        "Intel irdma Linux driver README (irdma 1.x): iWARP/RoCEv2 Selection, Flow Control Settings, ECN "
        "Configuration, DSCP Configuration, RDMA Statistics",
        "Linux Documentation/networking/devlink/ice.rst",
        "Linux Documentation/networking/device_drivers/ethernet/intel/ice.rst",
    ),
    limits=(
        "at most 4 traffic classes, contiguous from TC 0, and one PFC priority (irdma README); fabricd renumbers "
        "the policy's classes to TC 0..n-1 on these NICs",
        "no CNP DSCP or CNP priority knob: CNPs use the firmware's marking (unverified which)",
        "DCQCN parameters are irdma module parameters (load time, out-of-tree driver only): fabricd does not set "
        "them and `fabricd validate` says so",
        "no dcbnl apptrust: DSCP trust (L3 QoS mode) follows from the DSCP APP entries and needs FW-LLDP off",
        "the RDMA protocol (RoCEv2 or iWARP) is a devlink parameter: the rendered script checks it, "
        "`host apply` does not change it",
    ),
)
