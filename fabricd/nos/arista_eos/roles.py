"""The Arista EOS parser roles: every output this pack parses, and the captures that prove it (or why none
does). The parser-role registry (:mod:`fabricd.nos.roles`) walks the platform registry for them."""

from __future__ import annotations

from fabricd.nos.role import RoleOf, config, lldp, ref, sw, version

ROLES: tuple[RoleOf, ...] = (
    sw(
        "pfc",
        "parse_show_priority_flow_control_counters",
        ("show-pfc-counters-detail-json-documented.txt",),
        "no public capture of the `detail | json` form: key path from facebook/DNE-TaaC's health check; the "
        "totals form (pfc-totals) is verified on ANTA's eAPI output with the same parser",
    ),
    ref(
        "pfc-totals",
        "show priority-flow-control counters | json",
        "parse_show_priority_flow_control_counters",
        ("show-pfc-counters-json-anta.txt",),
    ),
    sw(
        "pfc",
        "parse_show_priority_flow_control_counters",
        ("show-pfc-counters-text-documented.txt",),
        "no public capture: the golden is written from EOS's documented columns",
        form="text",
    ),
    sw(
        "queue",
        "parse_show_interfaces_counters_queue_detail",
        ("show-interfaces-counters-queue-detail-*.txt",),
    ),
    sw(
        "queue",
        "parse_show_interfaces_counters_queue_detail",
        (),
        "no device capture of the `| json` forms in this repository: key paths from ANTA's queue-drop tests "
        "(egressQueueCounters, interfaces.<if>.trafficClasses) and Arista's snmpext sample (ingressVoqCounters, "
        "values edited there)",
        form="json",
    ),
    sw("ecn", "parse_show_qos_ecn_counters", ("show-qos-ecn-counters-json-anta.txt",)),
    sw(
        "pfcwd",
        "parse_show_pfc_counters_watchdog",
        ("show-pfc-counters-watchdog-json-documented.txt",),
        "no public `| json` capture: key names from facebook/DNE-TaaC's health check, not a device",
    ),
    sw("discards", "parse_show_interfaces_counters_discards"),
    sw("transceiver", "parse_show_interfaces_transceiver"),
    sw("flaps", "parse_show_interfaces_flaps"),
    sw(
        "fec",
        "parse_show_interfaces_phy_detail",
        ("show-interfaces-phy-detail-json-documented.txt",),
        "no public capture of `show interfaces phy detail | json` found (searched ANTA's unit tests, napalm, the "
        "code index): key paths from ANTA's VerifyInterfacesBER (interfacePhyStatuses.<if>.phyStatuses[].fec."
        "correctedCodewords.value, uncorrectedCodewords.value, preFecBer.value)",
    ),
    ref(
        "hardware-counter-drop",
        "show hardware counter drop",
        "parse_show_hardware_counter_drop",
        ("show-hardware-counter-drop-*.txt",),
    ),
    config(("avd-qos-profiles.txt", "ceoslab-*.txt")),
    version(),
    lldp(("arista_eos-show-lldp-neighbors-detail-json-*.txt",)),
    lldp(
        ("arista_eos-show-lldp-neighbors-detail-text-*.txt",),
        name="lldp-text",
        command="show lldp neighbors detail (text form)",
    ),
)
"""Every parser role of the pack, in the order docs list them."""
