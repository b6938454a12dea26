"""The Arista EOS parser roles: every output this pack parses, and the captures that prove it (or why none
does). The parser-role registry (:mod:`fabricd.nos.roles`) walks the platform registry for them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from fabricd.nos.role import Role, config, lldp, ref, sw, version

if TYPE_CHECKING:
    from fabricd.nos.spec import PlatformSpec


def roles(spec: PlatformSpec) -> list[Role]:
    """Every parser role of the pack, in the order docs list them."""
    return [
        sw(
            spec,
            "pfc",
            "parse_show_priority_flow_control_counters",
            ("show-pfc-counters-detail-json-documented.txt",),
            "no public capture of the `detail | json` form: key path from facebook/DNE-TaaC's health check; the "
            "totals form (pfc-totals) is verified on ANTA's eAPI output with the same parser",
        ),
        ref(
            spec,
            "pfc-totals",
            "show priority-flow-control counters | json",
            "parse_show_priority_flow_control_counters",
            ("show-pfc-counters-json-anta.txt",),
        ),
        sw(
            spec,
            "pfc",
            "parse_show_priority_flow_control_counters",
            ("show-pfc-counters-text-documented.txt",),
            "no public capture: the golden is written from EOS's documented columns",
            form="text",
        ),
        sw(
            spec,
            "queue",
            "parse_show_interfaces_counters_queue_detail",
            ("show-interfaces-counters-queue-detail-*.txt",),
        ),
        sw(
            spec,
            "queue",
            "parse_show_interfaces_counters_queue_detail",
            (),
            "no device capture of the `| json` forms in this repository: key paths from ANTA's queue-drop tests "
            "(egressQueueCounters, interfaces.<if>.trafficClasses) and Arista's snmpext sample (ingressVoqCounters, "
            "values edited there)",
            form="json",
        ),
        sw(spec, "ecn", "parse_show_qos_ecn_counters", ("show-qos-ecn-counters-json-anta.txt",)),
        sw(
            spec,
            "pfcwd",
            "parse_show_pfc_counters_watchdog",
            ("show-pfc-counters-watchdog-json-documented.txt",),
            "no public `| json` capture: key names from facebook/DNE-TaaC's health check, not a device",
        ),
        sw(spec, "discards", "parse_show_interfaces_counters_discards"),
        sw(spec, "transceiver", "parse_show_interfaces_transceiver"),
        sw(spec, "flaps", "parse_show_interfaces_flaps"),
        sw(
            spec,
            "fec",
            "parse_show_interfaces_phy_detail",
            ("show-interfaces-phy-detail-json-documented.txt",),
            "no public capture of `show interfaces phy detail | json` found (searched ANTA's unit tests, napalm, the "
            "code index): key paths from ANTA's VerifyInterfacesBER (interfacePhyStatuses.<if>.phyStatuses[].fec."
            "correctedCodewords.value, uncorrectedCodewords.value, preFecBer.value)",
        ),
        ref(
            spec,
            "hardware-counter-drop",
            "show hardware counter drop",
            "parse_show_hardware_counter_drop",
            ("show-hardware-counter-drop-*.txt",),
        ),
        config(spec, ("avd-qos-profiles.txt", "ceoslab-*.txt")),
        version(spec),
        lldp(spec, ("arista_eos-show-lldp-neighbors-detail-json-*.txt",)),
        Role(
            spec.platform.value,
            "lldp-text",
            "show lldp neighbors detail (text form)",
            "fabricd.nos.arista_eos.lldp.parse_show_lldp_neighbors",
            "audit cabling (reference)",
            ("readers/lldp/arista_eos-show-lldp-neighbors-detail-text-*.txt",),
        ),
    ]
