"""The NVIDIA Cumulus NVUE parser roles: every output this pack parses, and the captures that prove it (or why none
does). The parser-role registry (:mod:`fabricd.nos.roles`) walks the platform registry for them."""

from __future__ import annotations

from fabricd.nos.role import RoleOf, config, lldp, ref, sw, version

LAB_ONLY = "no real capture in the repository: only fabricd's lab simulator output"


ROLES: tuple[RoleOf, ...] = (
    sw(
        "qos",
        "parse_counters_qos",
        ("nv-show-interface-counters-qos-json-documented.txt",),
        "no public `-o json` capture: the golden is written from the text capture's columns",
    ),
    sw("qos", "parse_counters_qos", ("nv-show-interface-counters-qos-cl*-docs.txt",), form="text"),
    sw("pfcwd", "parse_pfc_watchdog", ("nv-show-interface-qos-pfc-watchdog-*.txt",)),
    sw("transceiver", "parse_nv_show_interface_transceiver"),
    sw("flaps", "parse_nv_show_interface_counters_flaps"),
    sw("fec", "parse_nv_show_interface_link_phy_detail"),
    ref(
        "qos-roce-counters",
        "nv show interface <port> qos roce counters",
        "parse_qos_roce_counters",
        ("nv-show-interface-qos-roce-counters-*.txt",),
    ),
    ref(
        "counters-errors",
        "nv show interface <port> counters errors",
        "parse_counters_errors",
        ("nv-show-interface-counters-errors-*.txt",),
    ),
    ref(
        "interface-counters-table",
        "nv show interface --view=counters (and cl-netstat)",
        "parse_interface_counters_table",
        ("nv-show-interface-view-counters-*.txt", "cl-netstat-*.txt"),
    ),
    config((), LAB_ONLY + ": no public `nv config show -o commands` of a QoS config"),
    version(),
    lldp(("cumulus_nvue-nv-show-interface-*-lldp-neighbor-*.txt",)),
)
"""Every parser role of the pack, in the order docs list them."""
