"""SONiC's rules as data: what its YANG models (sonic-buildimage src/sonic-yang-models, the oracle of
tests/conformance/test_sonic_yang.py) and sonic-utilities accept. :mod:`fabricd.nos.checks` checks them."""

from __future__ import annotations

import re

from fabricd.nos.rules import (
    DeviceRules,
    EcnUnits,
    MtuRule,
    NameRule,
    PortNames,
    Reserved,
    Source,
    WatchdogGrid,
)

YANG = "sonic-net/sonic-buildimage src/sonic-yang-models/yang-models @ 086b03bd"

SONIC_NAME = re.compile(r"[a-zA-Z0-9][-a-zA-Z0-9_]{0,31}")
"""sonic-wred-profile.yang (and the QoS map modules): the name pattern, anchored as YANG patterns are."""
SONIC_VLAN_IDS = (2, 4094)
"""sonic-vlan.yang: VLAN_LIST vlanid range."""

RULES = DeviceRules(
    ports=PortNames(
        physical=re.compile(r"Ethernet\d+"),
        forms="EthernetN (the PORT key: Ethernet0, Ethernet4, ...)",
        lag=re.compile(r"PortChannel\d+"),
        source=Source(
            f"{YANG} sonic-port.yang PORT/PORT_LIST: name 'Physical port name (e.g., Ethernet0)', "
            "lanes mandatory (a row for a name the switch has no port for lacks it); "
            "sonic-portchannel.yang name pattern 'PortChannel[0-9]{1,4}'"
        ),
    ),
    mtu=MtuRule(routed=(68, 9216), source=Source(f"{YANG} sonic-port.yang PORT_LIST/mtu range 68..9216")),
    watchdog=WatchdogGrid(
        poll_ms=(100, 1000),
        detection_ms=(100, 5000),
        restoration_ms=(100, 60000),
        source=Source(
            "sonic-net/sonic-utilities pfcwd/main.py: detection-time 100-5000, restoration-time "
            "100-60000, interval 100-1000 ms"
        ),
    ),
    ecn=EcnUnits(
        unit_bytes=1, source=Source(f"{YANG} sonic-wred-profile.yang green_min_threshold/green_max_threshold in bytes")
    ),
    vlan_name=NameRule(
        max_length=255,
        source=Source(f"{YANG} sonic-vlan.yang VLAN_LIST/description length 1..255 (fabricd writes the name there)"),
    ),
    profile_name=NameRule(
        max_length=32,
        pattern=SONIC_NAME,
        forms="1-32 of [-a-zA-Z0-9_], starting with a letter or digit",
        source=Source(
            f"{YANG} sonic-wred-profile.yang WRED_PROFILE_LIST/name pattern [a-zA-Z0-9]{{1}}([-a-zA-Z0-9_]{{0,31}})"
        ),
    ),
    reserved_vlans=Reserved(
        ((1, 1),),
        Source(f"{YANG} sonic-vlan.yang VLAN_LIST/vlanid range 2..4094"),
        "VLAN 1 is the default VLAN SONiC does not let CONFIG_DB define",
    ),
    port_description=NameRule(
        max_length=255, source=Source(f"{YANG} sonic-port.yang PORT_LIST/description length 0..255")
    ),
    coverage={
        "policy.pfc.watchdog.detection_ms": "rendered (FAB041: 100-5000 ms)",
        "policy.pfc.watchdog.poll_ms": "rendered (FAB042: at most the smaller timer)",
        "policy.ecn_profiles[].name": "rendered (WRED_PROFILE name; FAB110)",
        "policy.vlans[].id": "rendered (FAB111: 2-4094)",
        "switches[].ports[].name": "rendered (FAB140: EthernetN, no LAG or alias)",
    },
)
