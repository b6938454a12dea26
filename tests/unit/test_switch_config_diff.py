"""Client-side config handling of the drivers: EOS/NX-OS trees, SONiC JSON patches, NVUE set paths."""

from __future__ import annotations

import json

import pytest

from fabricd.errors import DriverError
from fabricd.nos.arista_eos.patterns import OWNERSHIP as EOS
from fabricd.nos.cumulus_nvue import schema
from fabricd.nos.cumulus_nvue.driver import changes as nvue_changes
from fabricd.nos.sonic.driver import patch_ops
from fabricd.platforms.textcfg import commands, diff_text, parse, verify, walk
from fabricd_lab.sonic_db import apply_patch, validate

RUNNING = """! Command: show running-config
hostname leaf2-eos
qos profile OLD
   qos trust cos
!
qos map dscp 26 to traffic-class 2
interface Ethernet1
   description to gpu3
   mtu 1500
   service-profile OLD
!
interface Ethernet2
!
end
"""
CANDIDATE = """! fabricd: generated
qos map dscp 26 to traffic-class 3
qos profile ROCE
   qos trust dscp
   tx-queue 3
      bandwidth percent 50
!
interface Ethernet1
   mtu 9216
   service-profile ROCE
!
"""


def test_eos_walk_removes_owned_replaces_single_valued_and_keeps_foreign_lines() -> None:
    run, cand = parse(RUNNING, EOS), parse(CANDIDATE, EOS)
    changes = list(walk(run, cand, EOS))
    kinds = [(c.kind, c.path, c.line) for c in changes]
    assert ("remove", (), "qos profile OLD") in kinds
    assert ("remove", (), "qos map dscp 26 to traffic-class 2") in kinds
    assert ("add", ("interface Ethernet1",), "mtu 9216") in kinds
    assert not any(c.line == "mtu 1500" for c in changes), "mtu is single-valued: set, not removed"
    assert not any("description" in c.line for c in changes), "lines fabricd does not own stay"
    cmds = commands(changes)
    assert cmds[:2] == ["no qos profile OLD", "no qos map dscp 26 to traffic-class 2"]
    i = cmds.index("qos profile ROCE")
    assert cmds[i : i + 6] == [
        "qos profile ROCE",
        "qos trust dscp",
        "tx-queue 3",
        "bandwidth percent 50",
        "exit",
        "exit",
    ]
    assert cmds[-4:] == ["interface Ethernet1", "mtu 9216", "service-profile ROCE", "exit"]
    text = diff_text(changes)
    assert "-qos profile OLD" in text and " interface Ethernet1\n+   mtu 9216" in text
    assert verify(parse(CANDIDATE + "interface Ethernet1\n   description x\n", EOS), cand, EOS) == []
    problems = verify(run, cand, EOS)
    assert "missing under interface Ethernet1: mtu 9216" in problems


def test_owned_block_with_extra_child_is_fixed_in_place() -> None:
    run = parse("qos profile ROCE\n   qos trust dscp\n   shape rate 10 percent\n", EOS)
    cand = parse("qos profile ROCE\n   qos trust dscp\n", EOS)
    assert commands(list(walk(run, cand, EOS))) == ["qos profile ROCE", "no shape rate 10 percent", "exit"]
    assert list(walk(cand, cand, EOS)) == []


RUN_DB = {
    "PORT": {"Ethernet0": {"mtu": "9100", "speed": "400000"}},
    "WRED_PROFILE": {"OLD": {"ecn": "ecn_all"}, "roce": {"ecn": "ecn_none"}},
    "PFC_WD": {"Ethernet0": {"detection_time": "200"}},
}
CAND_DB = {
    "PORT": {"Ethernet0": {"mtu": "9216"}},
    "WRED_PROFILE": {"roce": {"ecn": "ecn_all"}},
    "SCHEDULER": {"scheduler.3": {"type": "DWRR", "weight": "50"}},
}


def test_sonic_patch_replaces_owned_tables_and_merges_port_fields() -> None:
    ops = patch_ops(RUN_DB, CAND_DB)
    assert {"op": "add", "path": "/PORT/Ethernet0/mtu", "value": "9216"} in ops
    assert {"op": "remove", "path": "/WRED_PROFILE/OLD"} in ops
    assert {"op": "replace", "path": "/WRED_PROFILE/roce", "value": {"ecn": "ecn_all"}} in ops
    assert {"op": "add", "path": "/SCHEDULER", "value": CAND_DB["SCHEDULER"]} in ops
    assert {"op": "remove", "path": "/PFC_WD"} in ops
    after = apply_patch(RUN_DB, ops)
    assert after["PORT"]["Ethernet0"] == {"mtu": "9216", "speed": "400000"}
    assert patch_ops(after, CAND_DB) == []
    assert patch_ops(RUN_DB, CAND_DB, replace=False) == [
        {"op": "add", "path": "/PORT/Ethernet0/mtu", "value": "9216"},
        {"op": "add", "path": "/WRED_PROFILE/roce/ecn", "value": "ecn_all"},
        {"op": "add", "path": "/SCHEDULER", "value": CAND_DB["SCHEDULER"]},
    ]
    assert (
        patch_ops({"QUEUE": {"Ethernet0|3": {}}}, {"QUEUE": {"Ethernet0/1|3": {"x": "1"}}})[1]["path"]
        == "/QUEUE/Ethernet0~11|3"
    )


def test_sonic_gcu_validation_like_sonic_yang() -> None:
    assert validate({"PORT": {"Ethernet0": {"mtu": "9216"}}}) is None
    assert "empty" in (validate({"PORT": {}}) or "")
    assert "does not have a YANG model" in (validate({"NOPE": {"x": {"a": "b"}}}) or "")
    assert "must be <=" in (
        validate({"WRED_PROFILE": {"r": {"green_min_threshold": "9", "green_max_threshold": "1"}}}) or ""
    )
    assert "out of range" in (validate({"PFC_WD": {"Ethernet0": {"detection_time": "50"}}}) or "")
    assert "does not exist" in (
        validate({"PORT": {"Ethernet0": {"mtu": "9216"}}, "QUEUE": {"Ethernet8|3": {"scheduler": "s"}}}) or ""
    )
    with pytest.raises(ValueError, match="non-existent"):
        apply_patch({}, [{"op": "remove", "path": "/PORT"}])


def test_nvue_set_paths_expand_lists_and_reject_unknown_words() -> None:
    leaves = schema.parse_set(["qos", "mapping", "default-global", "dscp", "0,1,26", "switch-priority", "3"])
    assert leaves == [
        (("qos", "mapping", "default-global", "dscp", d, "switch-priority"), "3") for d in ("0", "1", "26")
    ]
    assert schema.parse_set(["interface", "swp1", "qos", "pfc-watchdog"]) == [
        (("interface", "swp1", "qos", "pfc-watchdog"), None)
    ]
    assert schema.parse_set(["qos", "pfc", "p", "switch-priority", "3-4"]) == [
        (("qos", "pfc", "p", "switch-priority", "3"), None),
        (("qos", "pfc", "p", "switch-priority", "4"), None),
    ]
    err = schema.parse_set(["qos", "pfc", "p", "cable-length", "0"])
    assert isinstance(err, schema.PathError) and err.position == 4
    err = schema.parse_set(["qos", "pfx", "p"])
    assert isinstance(err, schema.PathError)
    assert "expected one of:" in err.message("set", ["qos", "pfx", "p"]) and "pfc" in err.expected
    assert schema.parse_unset(["qos", "pfc", "p"]) == [("qos", "pfc", "p")]
    assert schema.parse_unset(["interface", "swp1", "link", "mtu", "9216"]) == [("interface", "swp1", "link", "mtu")]


def test_nvue_changes_unset_owned_leaves_only() -> None:
    running = "nv set system hostname leaf4\nnv set qos pfc old switch-priority 3\nnv set interface swp1 link mtu 1500"
    candidate = "# comment\nnv set qos pfc new switch-priority 3\nnv set interface swp1 link mtu 9216"
    problems, unsets, sets = nvue_changes(running, candidate, "leaf4")
    assert unsets == ["nv unset qos pfc old switch-priority 3"]
    assert sets == ["nv set qos pfc new switch-priority 3", "nv set interface swp1 link mtu 9216"]
    assert "different: nv set interface swp1 link mtu 9216" in problems
    with pytest.raises(DriverError, match="not an `nv set` line"):
        nvue_changes("show me", candidate, "leaf4")


def test_sonic_patch_ops_are_json_serialisable() -> None:
    assert json.loads(json.dumps(patch_ops(RUN_DB, CAND_DB)))
