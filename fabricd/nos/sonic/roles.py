"""The SONiC parser roles: every output this pack parses, and the captures that prove it (or why none
does). The parser-role registry (:mod:`fabricd.nos.roles`) walks the platform registry for them."""

from __future__ import annotations

from fabricd.nos.role import RoleOf, config, lldp, ref, sw, version

ROLES: tuple[RoleOf, ...] = (
    sw(
        "pfc",
        "parse_show_pfc_counters",
        (
            "show-pfc-counters-ntc.txt",
            "show-pfcwd-stats-and-pfc-counters-tx-*.txt",
            "show-pfc-counters-sonic-utilities-*.txt",
        ),
    ),
    sw("queue", "parse_show_queue_counters", ("show-queue-counters-*.txt",)),
    sw("wred", "parse_show_queue_wredcounters", ("show-queue-wredcounters-*.txt",)),
    sw("pfcwd", "parse_show_pfcwd_stats", ("show-pfcwd-stats-*.txt", "pfcwd-show-stats-*.txt")),
    sw("pfc_history", "parse_show_pfc_counters_history", ("show-pfc-counters-history-*.txt",)),
    ref(
        "interfaces-counters",
        "show interfaces counters",
        "parse_show_interfaces_counters",
        (
            "portstat-show-interfaces-counters-*.txt",
            "show-interfaces-counters-cmdref.txt",
            "show-interface-counters-errors-*.txt",
        ),
    ),
    ref(
        "interfaces-counters-detailed",
        "show interfaces counters detailed <port>",
        "parse_show_interfaces_counters_detailed",
        ("show-interfaces-counters-detailed-*.txt",),
    ),
    ref("pfcwd-config", "show pfcwd config", "parse_show_pfcwd_config", ("show-pfcwd-config-*.txt",)),
    sw("pg_watermark_shared", "parse_pg_watermark_shared"),
    sw("pg_watermark_headroom", "parse_pg_watermark_headroom"),
    sw("queue_watermark_unicast", "parse_queue_watermark_unicast"),
    sw("queue_watermark_multicast", "parse_queue_watermark_multicast"),
    sw("fec", "parse_fec_stats"),
    sw("transceiver", "parse_transceiver_dom"),
    sw("flaps", "parse_show_interfaces_flap"),
    ref(
        "pg-persistent-watermark",
        "show priority-group persistent-watermark shared|headroom",
        "parse_pg_persistent_watermark",
        (),
    ),
    ref(
        "queue-persistent-watermark",
        "show queue persistent-watermark unicast|multicast|all",
        "parse_queue_persistent_watermark",
        (),
    ),
    config(
        ("sonic-utilities-mock-config-db.txt",),
        "no device dump of `show runningconfiguration all`: the capture is sonic-utilities' test CONFIG_DB "
        "regrouped by table as the command prints it (a real database, not a device's output)",
    ),
    version(),
    lldp(("sonic-show-lldp-table-*.txt",)),
    lldp(
        ("sonic-show-lldp-neighbors-*.txt",),
        name="lldp-neighbors",
        command="show lldp neighbors (lldpd's text form)",
    ),
)
"""Every parser role of the pack, in the order docs list them."""
