"""SONiC render conformance: every config_db fabricd renders for a SONiC switch validates against SONiC's own YANG
models (sonic-buildimage src/sonic-yang-models, pinned in ./sonic-yang/) through libyang 3.12.2, translated the way
sonic-yang-mgmt translates CONFIG_DB (see sonic_yang_oracle.py).

A fabricd render is a fragment: it writes QoS, buffer, watchdog and VLAN tables and assumes the switch's own
DEVICE_METADATA, PORT rows (lanes, speed) and buffer pools. Each fragment is merged onto a minimal base that holds
exactly those (sonic_yang_oracle.base_config, built here in the test) before validation.

The ``.cli`` render (``config`` commands and ``sonic-cfggen -a`` JSON) is checked too: its commands are turned into the
CONFIG_DB rows they write (sonic-utilities: ``config vlan add``, ``config vlan member add``, ``config interface mtu``,
``config pfcwd start/interval``) and validated the same way.

libyang comes from scripts/libyang.sh (``make libyang``, part of ``make test``). Without it these tests skip with the
reason, except when CI=true, where they fail.
"""

from __future__ import annotations

import json
import re
import shlex
from typing import Any

import pytest
from conformance_corpus import REPO, accepted, corpus, intent_space, record, renders_of
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from model_space import WholeModel
from sonic_yang_oracle import (
    Rejection,
    base_config,
    check_fragment,
    in_ci,
    libyang_missing,
    merged,
    oracle,
    rows_of,
)

from fabricd.render.render import DeviceRender

ORACLE = "libyang 3.12.2 + sonic-yang-models 086b03bd"


@pytest.fixture(scope="module", autouse=True)
def _libyang() -> None:
    why = libyang_missing()
    if why is not None:
        if in_ci():
            pytest.fail(f"CI=true and the SONiC YANG oracle is missing: {why}")
        pytest.skip(why)


def config_db_of(render: DeviceRender) -> dict[str, Any]:
    files = [f for f in render.files if f.relpath.endswith(".json")]
    assert len(files) == 1, [f.relpath for f in render.files]
    loaded: dict[str, Any] = json.loads(files[0].text)
    return loaded


def config_db_of_cli(render: DeviceRender) -> tuple[dict[str, Any], int]:
    """The CONFIG_DB rows the ``.cli`` render writes, and its command count."""
    files = [f for f in render.files if f.relpath.endswith(".cli")]
    assert len(files) == 1, [f.relpath for f in render.files]
    db: dict[str, Any] = {}
    commands = 0

    def put(table: str, key: str, row: dict[str, str]) -> None:
        db.setdefault(table, {}).setdefault(key, {}).update(row)

    for line in files[0].text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        commands += 1
        words = shlex.split(line)
        assert words[0] == "sudo", line
        words = words[1:]
        if words[0] == "sonic-cfggen":
            assert words[1] == "-a" and words[3] == "--write-to-db", line
            for table, rows in json.loads(words[2]).items():
                for key, row in rows.items():
                    put(table, key, row)
        elif words[:3] == ["config", "vlan", "add"]:
            put("VLAN", f"Vlan{words[3]}", {"vlanid": words[3]})
        elif words[:4] == ["config", "vlan", "member", "add"]:
            untagged = words[4] == "-u"
            vid, port = words[5:7] if untagged else words[4:6]
            put("VLAN_MEMBER", f"Vlan{vid}|{port}", {"tagging_mode": "untagged" if untagged else "tagged"})
        elif words[:3] == ["config", "interface", "mtu"]:
            put("PORT", words[3], {"mtu": words[4]})
        elif words[:3] == ["config", "pfcwd", "interval"]:
            put("PFC_WD", "GLOBAL", {"POLL_INTERVAL": words[3]})
        elif words[:3] == ["config", "pfcwd", "start"]:
            m = re.fullmatch(
                r"config pfcwd start --action (\S+) ports (.+) detection-time (\d+) "
                r"--restoration-time (\d+)",
                " ".join(words),
            )
            assert m, line
            for port in m.group(2).split():
                put(
                    "PFC_WD", port, {"action": m.group(1), "detection_time": m.group(3), "restoration_time": m.group(4)}
                )
        elif words[:3] == ["config", "save", "-y"]:
            pass
        else:
            raise AssertionError(f"a .cli command this test does not know how to turn into CONFIG_DB rows: {line}")
    return db, commands


def _report(label: str, rejections: list[Rejection]) -> str:
    return f"{label}: SONiC YANG refuses {len(rejections)}:\n" + "\n".join(f"  {r}" for r in rejections)


def _rejected_rows(rejections: list[Rejection]) -> int:
    return len({(r.table, r.key) for r in rejections})


SONIC = corpus("sonic")


@pytest.mark.parametrize(("label", "render"), SONIC, ids=[label for label, _ in SONIC])
def test_corpus_render_validates(label: str, render: DeviceRender) -> None:
    fragment = config_db_of(render)
    rejections = check_fragment(fragment)
    record("sonic", ORACLE, files=1, lines=rows_of(fragment), rejected=_rejected_rows(rejections))
    assert not rejections, _report(label, rejections)


@pytest.mark.parametrize(("label", "render"), SONIC, ids=[label for label, _ in SONIC])
def test_corpus_cli_render_validates_and_matches_the_json(label: str, render: DeviceRender) -> None:
    from_cli, commands = config_db_of_cli(render)
    rejections = check_fragment(from_cli)
    record("sonic", ORACLE, files=1, lines=commands, rejected=_rejected_rows(rejections))
    assert not rejections, _report(label + " (.cli)", rejections)
    assert from_cli == config_db_of(render), f"{label}: the .cli writes other rows than the .json"


def test_corpus_has_sonic_renders() -> None:
    assert len(SONIC) >= 3, [label for label, _ in SONIC]
    assert any(label.startswith("inventory/lab:") for label, _ in SONIC)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(intent_space())
def test_nothing_validate_accepts_renders_a_row_sonic_refuses(doc: dict[str, Any]) -> None:
    fabric = accepted(doc)
    assume(fabric is not None)
    assert fabric is not None
    for render in renders_of(fabric, "sonic"):
        fragment = config_db_of(render)
        rejections = check_fragment(fragment)
        record("sonic", ORACLE + " (property)", files=1, lines=rows_of(fragment), rejected=_rejected_rows(rejections))
        assert not rejections, _report(f"drawn fabric {fabric.name!r} {render.device}", rejections)


# --- the oracle bites: one hand-made bad row per rule ----------------------------------------------------------


def _good() -> dict[str, Any]:
    label, render = next((lab, r) for lab, r in SONIC if lab.startswith("inventory/lab:"))
    fragment = config_db_of(render)
    assert not check_fragment(fragment), label
    return fragment


def _with_wred_name(name: str, *, referenced: bool = True) -> dict[str, Any]:
    """The lab render with its WRED profile renamed; ``referenced=False`` drops the QUEUE rows' references, so that
    the first (and only) error libyang reports is the WRED_PROFILE row's own."""
    fragment = _good()
    ((old, profile),) = fragment["WRED_PROFILE"].items()
    fragment["WRED_PROFILE"] = {name: profile}
    for row in fragment["QUEUE"].values():
        if row.get("wred_profile") == old:
            if referenced:
                row["wred_profile"] = name
            else:
                del row["wred_profile"]
    return fragment


def _refused(fragment: dict[str, Any], table: str, needle: str) -> None:
    rejections = check_fragment(fragment)
    assert any(r.table == table and re.search(needle, r.message) for r in rejections), _report("hand-made", rejections)


@pytest.mark.parametrize("name", ["roce.v2", "a:b", "a/b", "a@b", "a+b", "x" * 33, "_lead", "-lead"])
def test_oracle_refuses_a_bad_wred_profile_name(name: str) -> None:
    _refused(_with_wred_name(name, referenced=False), "WRED_PROFILE", "Unsatisfied pattern|Invalid length")
    # the QUEUE rows refer to it through a leafref with the same pattern
    _refused(_with_wred_name(name), "QUEUE", "Unsatisfied pattern|Invalid length")


def test_oracle_takes_a_32_character_wred_profile_name() -> None:
    assert not check_fragment(_with_wred_name("A" + "b-_9" * 7 + "xyz"))


@pytest.mark.parametrize("vid", [1, 4095])
def test_oracle_refuses_vlan_outside_2_to_4094(vid: int) -> None:
    fragment = _good()
    fragment["VLAN"] = {f"Vlan{vid}": {"vlanid": str(vid)}}
    fragment["VLAN_MEMBER"] = {}
    _refused(fragment, "VLAN", "Unsatisfied")


def test_oracle_refuses_a_vlanid_that_is_not_the_name() -> None:
    fragment = _good()
    fragment["VLAN"] = {"Vlan10": {"vlanid": "11"}}
    fragment["VLAN_MEMBER"] = {}
    _refused(fragment, "VLAN", "vlanid must correspond")


@pytest.mark.parametrize(
    ("field", "value"),
    [("detection_time", "99"), ("detection_time", "5001"), ("restoration_time", "60001"), ("action", "alert-only")],
)
def test_oracle_refuses_out_of_range_pfc_watchdog_values(field: str, value: str) -> None:
    fragment = _good()
    port = next(k for k in fragment["PFC_WD"] if k != "GLOBAL")
    fragment["PFC_WD"][port][field] = value
    assert check_fragment(fragment)


def test_oracle_refuses_a_detection_time_below_the_poll_interval() -> None:
    fragment = _good()
    fragment["PFC_WD"]["GLOBAL"] = {"POLL_INTERVAL": "500"}
    port = next(k for k in fragment["PFC_WD"] if k != "GLOBAL")
    fragment["PFC_WD"][port]["detection_time"] = "400"
    _refused(fragment, "PFC_WD", "POLL_INTERVAL")


def test_oracle_refuses_wred_max_below_min_and_probability_over_100() -> None:
    fragment = _good()
    ((_, profile),) = fragment["WRED_PROFILE"].items()
    profile["green_max_threshold"] = str(int(profile["green_min_threshold"]) - 1)
    _refused(fragment, "WRED_PROFILE", "max threshold must be greater")
    fragment = _good()
    next(iter(fragment["WRED_PROFILE"].values()))["red_drop_probability"] = "101"
    assert check_fragment(fragment)


def test_oracle_refuses_a_dwrr_weight_of_zero_and_a_dangling_reference() -> None:
    fragment = _good()
    dwrr = next(row for row in fragment["SCHEDULER"].values() if row["type"] == "DWRR")
    dwrr["weight"] = "0"
    assert check_fragment(fragment)
    fragment = _good()
    next(iter(fragment["QUEUE"].values()))["scheduler"] = "no-such-scheduler"
    _refused(fragment, "QUEUE", "leafref")


def test_oracle_refuses_a_bad_pfc_enable_list_and_a_bad_map_entry() -> None:
    fragment = _good()
    next(iter(fragment["PORT_QOS_MAP"].values()))["pfc_enable"] = "3,8"
    _refused(fragment, "PORT_QOS_MAP", "pattern")
    fragment = _good()
    fragment["TC_TO_QUEUE_MAP"]["FABRICD"]["16"] = "0"  # sonic-types tc_type: 0..15
    _refused(fragment, "TC_TO_QUEUE_MAP", "")


def test_oracle_refuses_unknown_tables_fields_and_bad_keys() -> None:
    fragment = _good()
    fragment["FABRICD_NO_SUCH_TABLE"] = {"x": {"a": "b"}}
    _refused(fragment, "FABRICD_NO_SUCH_TABLE", "no loaded SONiC YANG module")
    fragment = _good()
    next(iter(fragment["PORT"].values()))["no_such_field"] = "1"
    _refused(fragment, "PORT", "no_such_field")
    fragment = _good()
    fragment["QUEUE"]["Ethernet0"] = {"scheduler": next(iter(fragment["SCHEDULER"]))}  # key lacks the queue index
    _refused(fragment, "QUEUE", "keys are")


def test_the_base_alone_validates_and_a_fragment_needs_it() -> None:
    """The minimal base (DEVICE_METADATA, PORT with lanes and speed, stock pools) is itself valid SONiC; without it
    a fabricd fragment is refused (its ports and the lossless pool do not exist)."""
    fragment = _good()
    ports = list(fragment["PORT"])
    assert not oracle().check(base_config(ports))
    assert oracle().check(fragment), "a fragment alone must fail: it refers to PORT rows and BUFFER_POOLs"
    assert not oracle().check(merged(base_config(ports), fragment))


def test_translation_of_type1_maps_containers_and_leaf_lists() -> None:
    """Spot checks of the CONFIG_DB -> YANG translation against sonic-yang-mgmt's documented examples."""
    db = {
        "DSCP_TO_TC_MAP": {"map1": {"1": "1", "2": "2"}},
        "DEVICE_METADATA": {"localhost": {"hostname": "h", "buffer_model": "traditional"}},
        "PORT": {"Ethernet0": {"lanes": "0,1", "speed": "100000", "adv_speeds": "10000,100000"}},
    }
    data, problems = oracle().translate(db)
    assert not problems
    assert data["sonic-dscp-tc-map:sonic-dscp-tc-map"]["sonic-dscp-tc-map:DSCP_TO_TC_MAP"] == {
        "DSCP_TO_TC_MAP_LIST": [
            {"name": "map1", "DSCP_TO_TC_MAP": [{"dscp": "1", "tc": "1"}, {"dscp": "2", "tc": "2"}]}
        ]
    }
    assert data["sonic-device_metadata:sonic-device_metadata"]["sonic-device_metadata:DEVICE_METADATA"] == {
        "localhost": {"hostname": "h", "buffer_model": "traditional"}
    }
    port = data["sonic-port:sonic-port"]["sonic-port:PORT"]["PORT_LIST"][0]
    assert port["speed"] == 100000 and port["adv_speeds"] == ["10000", "100000"] and port["lanes"] == "0,1"
    # a multi-list table: QUEUE holds QUEUE_LIST (ifname|qindex) and VOQ_QUEUE_LIST (hostname|asic|ifname|qindex);
    # each row goes to the list whose keys it has (the VOQ shape of sonic-config-engine's chassis qos samples)
    queue, problems = oracle().translate(
        {"QUEUE": {"Ethernet0|3": {"scheduler": "s"}, "lc1|asic0|Ethernet8|4": {"wred_profile": "AZURE_LOSSLESS"}}}
    )
    assert not problems
    lists = queue["sonic-queue:sonic-queue"]["sonic-queue:QUEUE"]
    assert lists["QUEUE_LIST"] == [{"ifname": "Ethernet0", "qindex": "3", "scheduler": "s"}]
    assert lists["VOQ_QUEUE_LIST"] == [
        {
            "hostname": "lc1",
            "asic_name": "asic0",
            "ifname": "Ethernet8",
            "qindex": "4",
            "wred_profile": "AZURE_LOSSLESS",
        }
    ]


def test_the_lab_switch_config_db_after_push_validates_whole() -> None:
    """The lab SONiC simulator's whole CONFIG_DB after `fabricd push` of inventory/lab (its own DEVICE_METADATA, PORT
    rows, buffer pools and flex counters plus what fabricd pushed; tests/golden/switch_config/sonic/lab-pushed.txt)
    is valid SONiC without any base merged onto it: the simulator follows the schema."""
    path = REPO / "tests" / "golden" / "switch_config" / "sonic" / "lab-pushed.txt"
    db = json.loads(path.read_text().split("\n", 1)[1])
    rejections = oracle().check(db)
    record("sonic", ORACLE, files=1, lines=rows_of(db), rejected=_rejected_rows(rejections))
    assert not rejections, _report(str(path.relative_to(REPO)), rejections)


@pytest.mark.integration  # starts a process or opens a socket: not in the unit tier
def test_libyang_script_is_shellcheck_clean() -> None:
    import shutil
    import subprocess

    if shutil.which("shellcheck") is None:
        pytest.skip("shellcheck is not installed (Debian package shellcheck, in scripts/sysdeps.sh)")
    result = subprocess.run(
        ["shellcheck", str(REPO / "scripts" / "libyang.sh")], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stdout


# --- the whole-model property test's part (test_model_space.py) ------------------------------------------------


def _judge_whole_model(name: str, intent: Any, text: str, sampled: bool) -> list[str]:
    fragment = json.loads(text)
    rejections = check_fragment(fragment)
    rows = len({(r.table, r.key) for r in rejections})
    record(
        "sonic",
        "libyang 3.12.2 + sonic-yang-models 086b03bd (whole model)",
        files=1,
        lines=rows_of(fragment),
        rejected=rows,
    )
    return [f"SONiC YANG refuses {name}'s CONFIG_DB: {r}" for r in rejections]


WHOLE_MODEL = WholeModel(
    ports=lambda n: st.one_of(
        st.integers(0, 63).map(lambda i: f"Ethernet{4 * i}"),  # a full port on its first lane
        st.integers(0, 255).map(lambda i: f"Ethernet{i}"),
    ),  # breakout: one lane each
    lag="PortChannel{:04d}",
    judge=_judge_whole_model,
)
"""SONiC in the whole-model property test: Ethernet<first lane> ports, PortChannelNNNN LAGs, libyang judging."""
