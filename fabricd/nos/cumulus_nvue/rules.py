"""Cumulus Linux (NVUE)'s rules as data: the pinned NVUE grammar (:mod:`.grammar`, Cumulus Linux 5.11) and the
Cumulus docs it cites. :mod:`fabricd.nos.checks` checks them."""

from __future__ import annotations

import re

from fabricd.nos.rules import DeviceRules, EcnUnits, MtuRule, NameRule, PortNames, Reserved, Source, WatchdogGrid

from .grammar import SWP

DOCS = "CumulusNetworks/docs content/cumulus-linux-511"

NVUE_RESERVED_VLANS = (3725, 3999)

RULES = DeviceRules(
    ports=PortNames(
        physical=SWP,
        forms="swpN or swpNsM (breakout)",
        lag=None,
        source=Source(
            f"{DOCS}/Layer-1-and-Switch-Ports/Quality-of-Service/_index.md @ 28af43a79290 ('You can "
            "only enable PFC watchdog on a physical interface (swp)'); front-panel swpN, breakout swpNsM"
        ),
    ),
    mtu=MtuRule(
        routed=(552, 9216),
        source=Source(
            "fabricd/nos/cumulus_nvue/grammar.py interface <id> link mtu "
            "552-9216 (Cumulus Linux 5.11 NVUE command reference)"
        ),
    ),
    watchdog=WatchdogGrid(
        poll_ms=(100, 5000),
        detect_polls=(1, 1000),
        actions=("drop",),
        source=Source(
            f"{DOCS} Quality-of-Service: pfc-watchdog polling-interval 100-5000 ms, robustness 1-1000; "
            "restoration is one clean poll (no knob)"
        ),
        actions_source=Source(f"{DOCS} Quality-of-Service: the PFC watchdog drops on the stormed queue"),
    ),
    ecn=EcnUnits(
        unit_bytes=1,
        source=Source(
            "fabricd/nos/cumulus_nvue/grammar.py qos congestion-control min-threshold/max-threshold in bytes"
        ),
    ),
    reserved_vlans=Reserved(
        (NVUE_RESERVED_VLANS,),
        Source(
            f"{DOCS}/Layer-2/Ethernet-Bridging-VLANs/VLAN-aware-Bridge-Mode.md @ ad804834b92f ('the reserved range "
            "is 3725-3999')"
        ),
        "Cumulus Linux reserves 3725-3999 for its own use",
    ),
    port_description=NameRule(
        max_length=200,
        pattern=re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:/@+=,-]*"),
        forms="one word of letters, digits and _ . : / @ + = , - (the nv command runs in bash: no spaces, no "
        "glob or shell characters)",
        source=Source(
            "fabricd/nos/cumulus_nvue/grammar.py interface <interface-id> description <value>: one word "
            "(Cumulus Linux 5.5 NVUE command list); fabricd pushes nv commands through bash"
        ),
    ),
    coverage={
        "policy.pfc.watchdog.restoration_ms": "note: NVUE restores after one clean poll (no knob); render warns",
        "policy.pfc.watchdog.action": "rendered (drop only; FAB042 warns that alert/forward render as drop)",
        "policy.pfc.watchdog.detection_ms": "rendered (FAB041: 1-1000 polls; FAB042: whole polls)",
        "policy.vlans[].name": "note: NVUE bridge VLANs have no name; render warns",
        "policy.qos.traffic_classes[].weight_percent": "rendered (unused queues render strict; render warns)",
        "switches[].ports[].description": "rendered (FAB141: one word)",
    },
)
