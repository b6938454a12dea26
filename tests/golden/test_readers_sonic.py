"""SONiC readers against real outputs (sonic-utilities' own CLI code, issues, command reference): values read by eye
from the captures in tests/golden/readers/switch/sonic/, the several-port-block history, and the rule that a
non-empty output the parser reads nothing from is a problem, never an empty success."""

from __future__ import annotations

from pathlib import Path

import pytest

from fabricd.nos.sonic import show as sonic

SONIC = Path(__file__).parent / "readers" / "switch" / "sonic"


def capture(name: str) -> str:
    first, _, rest = (SONIC / f"{name}.txt").read_text().partition("\n")
    assert first.startswith("# source:")
    return rest


def test_pfc_history_reads_every_port_block() -> None:
    """Three port blocks separated by empty lines under one header: all 24 rows, not the first block only."""
    got = sonic.parse_show_pfc_counters_history(capture("show-pfc-counters-history-sonic-utilities-test"))
    assert not got.problems
    pause = {(p.interface, p.priority): p.duration_us for p in got.pfc}
    assert len(pause) == 24
    assert pause[("Ethernet0", 0)] == 12_000_000
    assert pause[("Ethernet4", 1)] == 40_000_001
    assert pause[("Ethernet8", 7)] == 80_000_007
    assert all(p.direction == "rx" and p.frames is None for p in got.pfc)


def test_pfc_history_na_rows_are_none() -> None:
    got = sonic.parse_show_pfc_counters_history(capture("show-pfc-counters-history-all-sonic-utilities-test"))
    pause = {(p.interface, p.priority): p.duration_us for p in got.pfc}
    assert len(pause) == 48
    assert pause[("Ethernet-BP256", 3)] is None
    assert pause[("Ethernet-BP4", 3)] == 80_000_003


def test_pfc_counters_rx_and_tx_with_na() -> None:
    got = sonic.parse_show_pfc_counters(capture("show-pfc-counters-sonic-utilities-test"))
    frames = {(p.interface, p.direction, p.priority): p.frames for p in got.pfc}
    assert frames[("Ethernet0", "rx", 0)] == 1200 and frames[("Ethernet4", "tx", 7)] == 417
    assert frames[("Ethernet-BP260", "tx", 3)] is None


def test_queue_counters_one_namespace_block_per_port() -> None:
    got = sonic.parse_show_queue_counters(capture("show-queue-counters-namespaces-sonic-utilities-test"))
    q = {(x.interface, x.index): x for x in got.queues}
    assert len(q) == 90 and {i for i, _ in q} == {"Ethernet0", "Ethernet4", "Ethernet8"}
    assert (q[("Ethernet4", 13)].kind, q[("Ethernet4", 13)].packets, q[("Ethernet4", 13)].dropped_bytes) == (
        "multicast",
        74,
        39,
    )
    assert q[("Ethernet8", 25)].kind == "all" and q[("Ethernet8", 25)].packets is None


def test_pfcwd_stats_and_config() -> None:
    wd = sonic.parse_show_pfcwd_stats(capture("show-pfcwd-stats-sonic-utilities-test")).pfcwd
    assert [(w.interface, w.queue, w.status, w.detected, w.restored, w.tx_drop, w.rx_last_drop) for w in wd] == [
        ("Ethernet0", 3, "stormed", 1, 0, 300, 200),
        ("Ethernet4", 3, "operational", 2, 2, 100, 0),
        ("Ethernet8", 4, "stormed", 3, 2, 300, 200),
    ]
    cfg = sonic.parse_show_pfcwd_config(capture("show-pfcwd-config-history-sonic-utilities-test")).pfcwd_config
    assert len(cfg) == 3
    first = cfg[0]
    assert (first.interface, first.action, first.detection_ms, first.restoration_ms) == ("Ethernet0", "drop", 600, 600)


@pytest.mark.parametrize(
    "parse",
    [
        sonic.parse_show_pfc_counters,
        sonic.parse_show_pfc_counters_history,
        sonic.parse_show_queue_counters,
        sonic.parse_show_queue_wredcounters,
        sonic.parse_show_pfcwd_stats,
        sonic.parse_show_pfcwd_config,
        sonic.parse_show_interfaces_counters,
        lambda t: sonic.parse_show_interfaces_counters_detailed(t, "Ethernet0"),
    ],
)
def test_a_non_empty_output_read_as_nothing_is_a_problem(parse: object) -> None:
    assert callable(parse)
    got = parse("% Invalid input detected\nUsage: show [OPTIONS] COMMAND [ARGS]...\n")
    assert got.problems and "no table read from a non-empty output" in got.problems[0]
    assert "Invalid input detected" in got.problems[0]
    assert not parse("").problems  # nothing printed: nothing to read


def test_a_header_without_rows_is_no_problem() -> None:
    """`show pfcwd stats` with no watchdog queues prints the header alone (sonic-utilities'
    pfcwd_show_stats_invalid_queue_output): an empty table read, not a failure."""
    cols = [
        "QUEUE",
        "STATUS",
        "STORM DETECTED/RESTORED",
        "TX OK/DROP",
        "RX OK/DROP",
        "TX LAST OK/DROP",
        "RX LAST OK/DROP",
    ]
    text = "    ".join(cols) + "\n" + "  ".join("-" * len(c) for c in cols) + "\n"
    got = sonic.parse_show_pfcwd_stats(text)
    assert not got.pfcwd and not got.problems


CONFIG = Path(__file__).parent / "switch_config" / "sonic"


def test_running_config_from_sonic_utilities_config_db() -> None:
    """sonic-utilities' CONFIG_DB (regrouped as `show runningconfiguration all` prints it): PFC 3,4 on Ethernet0
    and Ethernet4, none on Ethernet8, the watchdog at 600 ms on all three, AZURE_LOSSLESS on queues 3 and 4."""
    from fabricd.nos.sonic.running import parse_running_config

    first, _, text = (CONFIG / "sonic-utilities-mock-config-db.txt").read_text().partition("\n")
    assert first.startswith("# source:")
    cfg = parse_running_config(text)
    assert not cfg.problems and len(cfg.ports) == 32
    e0, e8 = cfg.ports["Ethernet0"], cfg.ports["Ethernet8"]
    assert (e0.mtu_bytes, sorted(e0.pfc_priorities), sorted(e0.watchdog_priorities)) == (9100, [3, 4], [3, 4])
    assert (e0.detection_ms, e0.restoration_ms) == (600, 600)
    assert sorted(e0.ecn) == [3, 4] and e0.ecn[3].min_bytes == 1048576 and e0.ecn[3].probability_percent == 5
    assert not e8.pfc_priorities and e8.detection_ms == 600


def test_running_config_reads_older_references_and_voq_queue_keys() -> None:
    """Hand-made rows in two real shapes: the older ``[TABLE|name]`` reference form (sonic-utilities' mock CONFIG_DB
    keeps it for schedulers) and VOQ chassis QUEUE keys ``<host>|<asic>|<port>|<queue>`` (sonic-config-engine's
    chassis qos samples)."""
    import json

    from fabricd.nos.sonic.running import parse_running_config

    db = {
        "PORT": {"Ethernet0": {"mtu": "9100"}, "Ethernet8": {"mtu": "9100"}},
        "DSCP_TO_TC_MAP": {"AZURE": {"26": "3", "48": "6"}},
        "PORT_QOS_MAP": {"Ethernet0": {"dscp_to_tc_map": "[DSCP_TO_TC_MAP|AZURE]", "pfc_enable": "3"}},
        "WRED_PROFILE": {
            "AZURE_LOSSLESS": {
                "ecn": "ecn_all",
                "green_min_threshold": "1048576",
                "green_max_threshold": "2097152",
                "green_drop_probability": "5",
            }
        },
        "QUEUE": {
            "Ethernet0|3": {"wred_profile": "[WRED_PROFILE|AZURE_LOSSLESS]"},
            "lc1|asic0|Ethernet8|4": {"wred_profile": "AZURE_LOSSLESS"},
        },
    }
    cfg = parse_running_config(json.dumps(db))
    assert not cfg.problems
    assert cfg.ports["Ethernet0"].trust == "dscp" and cfg.ports["Ethernet0"].dscp_to_priority == {26: 3, 48: 6}
    assert cfg.ports["Ethernet0"].ecn[3].enabled and cfg.ports["Ethernet8"].ecn[4].max_bytes == 2097152
