"""Cisco NX-OS's rules as data: what Cisco's Nexus 9000 guides and TechNotes state, and the sourced grammar of
tests/conformance/nxos_grammar.yml. :mod:`fabricd.nos.checks` checks them."""

from __future__ import annotations

import re

from fabricd.nos.rules import (
    HEADROOM_INPUTS,
    DeviceRules,
    EcnUnits,
    MtuRule,
    NameRule,
    PortNames,
    Reserved,
    Source,
    WatchdogGrid,
)

from .watchdog import NXOS_FIXED_RESTORE_MULTIPLIER, NXOS_INTERFACE_MULTIPLIER, NXOS_POLL_MS

NXOS_RESERVED_VLANS = (3968, 4094)
"""NX-OS allocates VLANs 3968-4094 for internal use by default and VLAN 1 cannot be modified (Cisco Nexus 9000
Layer 2 Switching Configuration Guide, "Configuring VLANs", VLAN ranges table)."""
NXOS_VLAN_NAME = 32
"""NX-OS VLAN names: 32 characters, 128 with ``system vlan long-name`` (which fabricd does not render)."""
NXOS_SYSTEM_JUMBO_MTU = 9216
"""``system jumbomtu`` default; fabricd does not render ``system jumbomtu``, so a switchport takes 1500 or this."""

_HEADROOM = "note: NX-OS sizes PFC headroom itself (no per-port xoff/xon CLI); render lists fabricd's values"

RULES = DeviceRules(
    ports=PortNames(
        physical=re.compile(r"Ethernet\d+/\d+(?:/\d+)?"),
        forms="EthernetS/P or EthernetS/P/B (breakout)",
        lag=re.compile(r"(?i)port-channel\d+(?:\.\d+)?"),
        source=Source(
            "tests/conformance/nxos_grammar.yml slot iface (Cisco Nexus 9000 Interfaces Configuration "
            "Guide: Ethernet slot/port, breakout slot/port/lane; port-channel N)"
        ),
    ),
    mtu=MtuRule(
        routed=(576, 9216),
        source=Source(
            "tests/conformance/nxos_grammar.yml if-mtu (netascode terraform-provider-nxos l1PhysIf mtu 576-9216)"
        ),
        l2_values=(1500, NXOS_SYSTEM_JUMBO_MTU),
        l2_source=Source(
            "Cisco TechNote 118994 'Configure and Verify Maximum Transmission Unit on Cisco Nexus "
            "Platforms': a Layer 2 port takes only the default (1500) or the system jumbo MTU "
            "('ERROR: MTU can only be default or system jumbo MTU'); read: blog.madnetworks.fr/2014/10/"
            "mtunexus-7000 (device output 'MTU on L2 interfaces can only be set to default or "
            "system-jumboMTU', `system jumbomtu 9216` the default)"
        ),
    ),
    watchdog=WatchdogGrid(
        poll_ms=NXOS_POLL_MS,
        detect_polls=NXOS_INTERFACE_MULTIPLIER,
        restore_polls=NXOS_FIXED_RESTORE_MULTIPLIER,
        source=Source(
            "watch-dog interval 100-1000 ms (Cisco NDFC pfc_watch_int), interface-multiplier 0-40 (DME "
            "ipqosPriorFlowCtrlWd.interfaceMutiplier, terraform-provider-nxos); fixed-restore multiplier "
            "1-100 from the NX-API REST SDK 9.3(x) without a stated range",
            verified=False,
        ),
    ),
    ecn=EcnUnits(
        unit_bytes=1000,
        source=Source(
            "tests/conformance/nxos_grammar.yml queuing random-detect "
            "minimum-threshold ... kbytes (Cisco N9K QoS guide, WRED/ECN)"
        ),
    ),
    vlan_name=NameRule(
        max_length=NXOS_VLAN_NAME,
        source=Source(
            "Cisco Nexus 9000 Series NX-OS Layer 2 Switching Configuration Guide, Configuring VLANs: `name` up to 32 "
            "characters, up to 128 after `system vlan long-name`",
            verified=False,
        ),
        longer="longer NX-OS VLAN names need `system vlan long-name`, which fabricd does not render",
    ),
    profile_name=NameRule(
        max_length=40,
        source=Source(
            "Cisco Nexus 9000 Series NX-OS QoS Configuration Guide: class-map and policy-map names up to 40 "
            "characters (not found in a source read here)",
            verified=False,
        ),
    ),
    reserved_vlans=Reserved(
        ((1, 1), NXOS_RESERVED_VLANS),
        Source(
            "Cisco Nexus 9000 Layer 2 Switching Configuration Guide, Configuring VLANs, VLAN ranges table; "
            "tests/conformance/nxos_grammar.yml vlan {int:2-3967}"
        ),
        "NX-OS does not let you modify VLAN 1 and reserves 3968-4094 for internal use",
    ),
    port_description=NameRule(
        max_length=200,
        source=Source(
            "Cisco Nexus 9000 Interfaces Configuration Guide: `description` up to 254 characters; fabricd's model caps "
            "it at 200",
            verified=False,
        ),
    ),
    coverage={
        **dict.fromkeys(HEADROOM_INPUTS, _HEADROOM),
        "policy.pfc.watchdog.action": "rendered (alert = disable-action; FAB042 warns that forward renders as drop)",
        "policy.pfc.watchdog.detection_ms": "rendered (FAB041: 1-40 polls; FAB042: whole polls)",
        "policy.pfc.watchdog.restoration_ms": "rendered (FAB041: 1-100 polls; FAB042: whole polls)",
        "policy.pfc.watchdog.poll_ms": "rendered (FAB041: 100-1000 ms)",
        "policy.ecn_profiles[].min_bytes": "rendered (kbytes; FAB143 warns where it rounds)",
        "policy.ecn_profiles[].max_bytes": "rendered (kbytes; FAB143 warns where it rounds)",
        "policy.vlans[].name": "rendered (FAB141: at most 32 characters)",
        "policy.qos.traffic_classes[].name": "rendered (class-map FABRICD_<NAME>)",
        "switches[].ports[].mtu": "rendered (FAB142: a Layer 2 port takes 1500 or 9216)",
    },
)
