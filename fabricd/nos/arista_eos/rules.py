"""Arista EOS's rules as data: what Arista AVD's ``eos_cli_config_gen`` schema (pyavd 6.4, the oracle of
tests/conformance/test_arista_eos_avd.py) and the EOS User Manual state. :mod:`fabricd.nos.checks` checks them."""

from __future__ import annotations

import re

from fabricd.nos.rules import HEADROOM_INPUTS, DeviceRules, EcnUnits, MtuRule, NameRule, PortNames, Source, WatchdogGrid

AVD = "pyavd 6.4 eos_cli_config_gen schema"

EOS_L3_MTU = (68, 9214)
"""EOS's interface ``mtu`` (the IP MTU of a routed port or an SVI), bytes: the EOS User Manual's documented range.
EOS refuses more than the platform's maximum with ``% Max MTU for <interface> is <max>``."""


_HEADROOM = "note: EOS sizes PFC headroom itself (no per-port xoff/xon CLI); render lists fabricd's values"


RULES = DeviceRules(
    ports=PortNames(
        physical=re.compile(r"Ethernet\d+(?:/\d+){0,2}"),
        forms="EthernetN, EthernetN/M (breakout lane) or EthernetS/N/M (modular)",
        lag=re.compile(r"Port-Channel\d+(?:\.\d+)?"),
        source=Source(
            "EOS User Manual, Ethernet Ports (Ethernet<port>[/<lane>], modular Ethernet<slot>/<port>"
            "[/<lane>]) and Port Channels (Port-Channel<n>); AVD's ethernet_interfaces[].name is a free "
            "string, so no schema states the form",
            verified=False,
        ),
    ),
    mtu=MtuRule(
        routed=EOS_L3_MTU,
        source=Source(
            "EOS User Manual, 'Support for Layer 3 MTU on 7280R3/7500R3/7800R3': `mtu` on routed interfaces and SVIs, "
            "'MTU sizes ranging from 68 to 9214 bytes' (arista.com/um-eos/eos-support-for-layer-3-mtu-on-"
            "7280r37500r37800r3); Arista's rbeapi (ipinterfaces.rb set_mtu, since EOS 4.13.7M) and puppet-eos "
            "(eos_ipinterface) also state 68-9214. The parser takes <68-65535> (cEOS `mtu ?` in "
            f"aristanetworks/avd#3274; {AVD} ethernet_interfaces[].mtu 68-65535); above the platform's maximum EOS "
            "answers '% Max MTU for Ethernet4 is 9194' (a virtual EOS, ipspace/netlab#1890; vEOS/cEOS/CloudEOS cap "
            "at 9194, aristanetworks/avd#4338). "
            "No per-model maximum for 7050X/7060X/7280R/7800R was found: the inventory has no hardware model, so "
            "fabricd takes the documented 68-9214 on every EOS switch"
        ),
        l2_source=Source(
            "a switchport: EOS's `mtu` is the IP (L3) MTU and is not enforced on switched traffic (aristaeos."
            "blogspot.com 'Arista EOS MTU Behavior (1)'); whether EOS also caps it at 9214 on a switchport is not "
            "documented, so fabricd, which renders `mtu` on every port, keeps every port in 68-9214",
            verified=False,
        ),
    ),
    watchdog=WatchdogGrid(
        poll_ms=(5, 30000),
        detection_ms=(10, 60000),
        restoration_ms=(10, 60000),
        step_ms=10,
        source=Source(
            "EOS priority-flow-control pause watchdog timeout/recovery-time 0.01-60 s, polling-interval "
            "0.005-30 s: a third-party guide; the 2-decimal form is the AVD schema pattern "
            "\\d+(\\.\\d{1,2})?",
            verified=False,
        ),
        actions=("drop", "alert"),
        actions_source=Source(
            f"{AVD} qos_profiles[].priority_flow_control.watchdog.action drop|notify-only "
            "(no-drop removed in AVD 6.0 as invalid CLI, aristanetworks/avd#6399)"
        ),
        refuses_other_actions=True,  # FAB120 (checks.py) refuses forward
    ),
    ecn=EcnUnits(
        unit_bytes=1,
        rounding="exact-or-bytes",
        source=Source(
            f"{AVD} qos_profiles[].tx_queues[].random_detect.ecn.threshold units segments|bytes|kbytes|mbytes, min 1"
        ),
    ),
    vlan_name=NameRule(
        max_length=32,
        source=Source(
            "EOS User Manual, VLANs: `name` takes up to 32 characters; AVD's vlans[].name is a free string",
            verified=False,
        ),
    ),
    port_description=NameRule(
        max_length=200,
        source=Source(f"{AVD} ethernet_interfaces[].description: a free string; fabricd's model caps it at 200"),
    ),
    coverage={
        **dict.fromkeys(HEADROOM_INPUTS, _HEADROOM),
        "policy.pfc.watchdog.action": "rendered (drop, alert = notify-only; FAB120 refuses forward)",
        "policy.pfc.watchdog.detection_ms": "rendered (FAB041/FAB042: 10 ms steps)",
        "policy.pfc.watchdog.restoration_ms": "rendered (FAB041/FAB042: 10 ms steps)",
        "policy.pfc.watchdog.poll_ms": "rendered (FAB042: at most half the smaller timer)",
        "policy.ecn_profiles[].min_bytes": "rendered (kbytes when exact, else bytes; FAB143 at a 0 threshold)",
        "switches[].ports[].mtu": "rendered (`mtu N`, the IP MTU; FAB142: at most 9214 on every port)",
    },
)
