"""The Cisco NX-OS parser roles: every output this pack parses, and the captures that prove it (or why none
does). The parser-role registry (:mod:`fabricd.nos.roles`) walks the platform registry for them."""

from __future__ import annotations

from fabricd.nos.role import RoleOf, config, lldp, ref, sw, version

_NXOS_SEARCHED = (
    "searched 2026-11-26 without finding one: Cisco's N9K QoS guides 9.2x-10.5x and NX-API pages (only the stored "
    "openings of the guides' PFC chapters were readable), genieparser, ntc-templates, ansible cisco.nxos fixtures, "
    "SuzieQ, fakenos, datacenter/nexus9000, allenrobel/nxapi-netbox, paregupt/nexus_traffic_monitor, GitHub code "
    "and issue indexes"
)
NXOS_PFC_JSON = (
    "no public capture or schema of `show interface priority-flow-control | json` (the golden is the lab's "
    "TABLE_entity JSON; third-party NX-API scripts read TABLE_pfc_interface rows with rx-stats/tx-stats, unconfirmed); "
    "the exporter polls the verified text form; " + _NXOS_SEARCHED
)
NXOS_QUEUING_JSON = (
    "no public `show queuing interface | json` capture with values: the parser walks Cisco's NX-API schema "
    "(TABLE_module/ROW_module/TABLE_queuing_interface/...); the exporter polls the verified text form; "
    + _NXOS_SEARCHED
)
NXOS_PFCWD = (
    "no device capture of `show queuing pfc-queue [detail]` in any form: JSON keys from Cisco's NX-API schema "
    "(confirmed only by paregupt/nexus_traffic_monitor's collector code, no output), the text only from an "
    "OpenTelemetry test author's fixture; " + _NXOS_SEARCHED
)
"""Why the NX-OS JSON and watchdog roles stay unverified (issue 16), and where the search looked."""


ROLES: tuple[RoleOf, ...] = (
    sw("pfc", "parse_show_interface_priority_flow_control", ("show-interface-priority-flow-control-*.txt",)),
    sw("pfc", "parse_show_interface_priority_flow_control", (), NXOS_PFC_JSON, form="json"),
    sw("queuing", "parse_show_queuing", ("show-queuing-interface-*-n9k-*.txt",)),
    sw("queuing", "parse_show_queuing", (), NXOS_QUEUING_JSON, form="json"),
    sw("pfcwd", "parse_show_queuing_pfc_queue", ("show-queuing-pfc-queue-detail-otel.txt",), NXOS_PFCWD),
    sw("errors", "parse_show_interface_counters_errors", ("show-interface-counters-errors-*.txt",)),
    sw("transceiver", "parse_show_interface_transceiver_details"),
    ref(
        "queuing-interface",
        "show queuing interface <port>",
        "parse_show_queuing_interface",
        ("show-queuing-interface-n5k-*.txt",),
    ),
    ref("interface", "show interface <port>", "parse_show_interface", ("show-int-*.txt",)),
    config(("azurelocal-tor.txt",)),
    version(),
    lldp(("cisco_nxos-show-lldp-neighbors-detail-*.txt",)),
    lldp(
        ("cisco_nxos-show-lldp-neighbors-multiline-*.txt",),
        name="lldp-summary",
        command="show lldp neighbors (summary table)",
    ),
    lldp(
        (),
        "no device capture of the NX-API JSON: TABLE_nbor_detail/ROW_nbor_detail keys as public NX-API "
        "collectors read them; the text form is polled",
        name="lldp-json",
        command="show lldp neighbors detail | json",
    ),
)
"""Every parser role of the pack, in the order docs list them."""
