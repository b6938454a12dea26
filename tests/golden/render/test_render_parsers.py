"""Rendered configs checked by real parsers, against the intent they were rendered from (not string matching):

* Arista EOS and Cisco NX-OS: ciscoconfparse2 parses the text into its hierarchy; the tests walk parents and
  children (qos profile -> tx-queue -> random-detect, policy-map -> class -> pause pfc-cos, interface -> ...).
  Command shapes are compared with the real captures in fixtures/ (AVD-generated EOS, Azure Local NX-OS).
* SONiC: the config_db JSON validates against schemas/sonic_config_db.schema.json, every name it references
  exists, and every ``sonic-cfggen -a`` line of the .cli file carries exactly that table.
* Cumulus NVUE: every command passes the pinned CL 5.11 grammar (fabricd.nos.cumulus_nvue.grammar).
* Linux hosts: ``bash -n`` and ``shellcheck`` (Debian package) accept every script.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from ciscoconfparse2 import CiscoConfParse
from render_cases import HERE, case_ids, intents, renders

from fabricd.nos.arista_eos.intent import EosSwitchIntent
from fabricd.nos.cisco_nxos.intent import NxosSwitchIntent
from fabricd.nos.cumulus_nvue.grammar import check_text
from fabricd.nos.cumulus_nvue.intent import NvueSwitchIntent
from fabricd.nos.sonic.intent import SonicSwitchIntent

SCHEMA = json.loads((HERE / "schemas" / "sonic_config_db.schema.json").read_text())


def _ids(platform: str) -> list[tuple[str, str]]:
    return [(p, c) for p, c in case_ids() if p == platform]


def _text(platform: str, case: str, suffix: str) -> dict[str, str]:
    return {
        f.relpath.split("/")[1].rsplit(".", 1)[0]: f.text
        for r in renders(platform, case)
        for f in r.files
        if f.relpath.endswith(suffix)
    }


def _children(obj: Any) -> list[str]:
    return [c.text.strip() for c in obj.children]


def _numbers(spec: str) -> set[int]:
    """'0-3,7' or '0 1 2' -> {0, 1, 2, 3, 7}."""
    out: set[int] = set()
    for part in re.split(r"[ ,]+", spec.strip()):
        a, _, b = part.partition("-")
        out.update(range(int(a), int(b or a) + 1))
    return out


def _shape(line: str) -> str:
    """A command with its values abstracted: numbers, ranges and lists -> N, a profile name -> W."""
    line = re.sub(r"\b\d+(\.\d+)?(-\d+)?(,\d+(-\d+)?)*\b", "N", line.strip())
    return re.sub(r"\bprofile [A-Za-z_][\w-]*", "profile W", line)


# ------------------------------------------------------------------------------------------------- Arista EOS

EOS_FIXTURE = (HERE / "fixtures" / "eos-qos-profile-avd.cfg").read_text().splitlines()[1:]
EOS_EXTRA_SHAPES = {
    # AVD qos-profiles.j2 (anchors.md §3.6) writes max-mark-probability and weight together on one line; the
    # captured molecule output uses them on separate examples.
    "random-detect ecn minimum-threshold N kbytes maximum-threshold N kbytes max-mark-probability N weight N",
    # EOS's timer line without the optional `forced` keyword (AVD priority-flow-control.j2).
    "priority-flow-control pause watchdog port timer timeout N polling-interval N recovery-time N",
    # the per-port action notify-only (fabricd's alert): AVD 6.4's schema takes drop | notify-only per profile
    # (no-drop, as in the older capture's global line, was removed in AVD 6.0 as invalid CLI, avd#6399).
    "priority-flow-control pause watchdog port action notify-only",
    # thresholds in bytes (AVD 6.4 schema units: segments, bytes, kbytes, mbytes), used when not whole kbytes.
    "random-detect ecn minimum-threshold N bytes maximum-threshold N bytes max-mark-probability N weight N",
    # PCP trust: EOS `qos trust cos` (the capture only trusts DSCP; EOS trust modes are cos, dscp, disabled).
    "qos trust cos",
}


@pytest.mark.parametrize(("platform", "case"), _ids("arista_eos"))
def test_eos_hierarchy(platform: str, case: str) -> None:
    texts = _text(platform, case, ".cfg")
    for sw in intents(platform, case):
        assert isinstance(sw, EosSwitchIntent)
        parse = CiscoConfParse(texts[sw.name].splitlines(), syntax="ios")
        (profile,) = parse.find_objects(rf"^qos profile {sw.profile_name}$")
        kids = _children(profile)
        assert ("qos trust dscp" if sw.trust_dscp else "qos trust cos") in kids
        assert ("priority-flow-control on" in kids) == sw.lossless
        for p in sw.lossless_priorities:
            assert f"priority-flow-control priority {p} no-drop" in kids
        if sw.watchdog is None:
            assert not any("watchdog" in k for k in kids)
        else:
            wd = sw.watchdog
            assert f"priority-flow-control pause watchdog port action {wd.action}" in kids
            assert (
                f"priority-flow-control pause watchdog port timer timeout {wd.timeout_s} polling-interval "
                f"{wd.polling_s} recovery-time {wd.recovery_s}"
            ) in kids
        queues = {int(c.text.split()[1]): _children(c) for c in profile.children if c.text.strip().startswith("tx-q")}
        for q in sw.queues:
            if not (q.used or q.round_robin):
                assert q.id not in queues
                continue
            body = queues[q.id]
            assert ("no priority" in body) == q.round_robin
            assert ("priority strict" in body) == q.strict
            assert (f"bandwidth percent {q.weight_percent}" in body) == q.dwrr
            red = [b for b in body if b.startswith("random-detect")]
            if q.ecn is None:
                assert red == []
            else:
                e = q.ecn
                assert red == [
                    f"random-detect ecn minimum-threshold {e.min_threshold} {e.unit} maximum-threshold "
                    f"{e.max_threshold} {e.unit} max-mark-probability {e.probability_percent} weight 0"
                ]
        # every DSCP (or CoS) is mapped exactly once, to the intended priority
        kind = "dscp" if sw.trust_dscp else "cos"
        seen: dict[int, int] = {}
        for obj in parse.find_objects(rf"^qos map {kind} "):
            m = re.match(rf"qos map {kind} ([\d ]+) to traffic-class (\d)$", obj.text)
            assert m, obj.text
            for cp in _numbers(m.group(1)):
                assert cp not in seen
                seen[cp] = int(m.group(2))
        assert seen == {cp: line.priority for line in sw.classifier for cp in line.codepoints}
        assert len(seen) == (64 if sw.trust_dscp else 8)
        for pq in sw.priority_queues:
            assert parse.find_objects(rf"^qos map traffic-class {pq.priority} to tx-queue {pq.queue}$")
        for v in sw.vlans:
            (vlan,) = parse.find_objects(rf"^vlan {v.id}$")
            assert _children(vlan) == [f"name {v.name}"]
        for port in sw.ports:
            (intf,) = parse.find_objects(rf"^interface {re.escape(port.name)}$")
            body = _children(intf)
            assert f"mtu {port.mtu_bytes}" in body and f"service-profile {sw.profile_name}" in body
            if port.access_vlan:
                assert f"switchport access vlan {port.access_vlan}" in body
            if port.tagged_vlans:
                assert "switchport mode trunk" in body
                assert _numbers(
                    next(b for b in body if b.startswith("switchport trunk allowed vlan")).split()[-1]
                ) == set(port.tagged_vlans)


@pytest.mark.parametrize(("platform", "case"), _ids("arista_eos"))
def test_eos_commands_have_the_shapes_of_real_configs(platform: str, case: str) -> None:
    known = {_shape(line) for line in EOS_FIXTURE} | EOS_EXTRA_SHAPES
    for text in _text(platform, case, ".cfg").values():
        for line in text.splitlines():
            s = _shape(line)
            if s.startswith(
                (
                    "priority-flow-control",
                    "random-detect",
                    "tx-queue",
                    "bandwidth",
                    "qos trust",
                    "no priority",
                    "priority strict",
                )
            ):
                assert s in known, f"{line.strip()!r} has no counterpart in the captured EOS config"


# ------------------------------------------------------------------------------------------------- Cisco NX-OS

NXOS_FIXTURE = (HERE / "fixtures" / "nxos-qos-azurelocal.cfg").read_text().splitlines()[1:]
NXOS_EXTRA_SHAPES = {
    # class-map match on DSCP and strict priority for CNP: anchors.md §3.7 (paregupt/nx-os roce_enable.py,
    # Cisco AI/ML blueprint); the Azure Local capture classifies by CoS and has no strict queue.
    "match dscp N",
    "priority level N",
    "class-map type qos match-any W",
    # per-interface PFC without `send-tlv` (DCBX TLV advertisement is optional) and the watchdog: anchors.md §3.7.
    "priority-flow-control mode on",
    "priority-flow-control watch-dog-interval on",
    # the watchdog's restore, interval and per-interface multiplier / syslog-only mode: the pinned grammar table
    # tests/conformance/nxos_grammar.yml gives each one's source and whether it is verified; not in the capture.
    "priority-flow-control fixed-restore multiplier N",
    "priority-flow-control watch-dog interval N",
    "priority-flow-control watch-dog interface-multiplier N",
    "priority-flow-control watch-dog disable-action",
    # an access port (a NIC without a VLAN tag); the capture has trunk ports only.
    "switchport access vlan N",
}


@pytest.mark.parametrize(("platform", "case"), _ids("cisco_nxos"))
def test_nxos_hierarchy(platform: str, case: str) -> None:
    texts = _text(platform, case, ".cfg")
    for sw in intents(platform, case):
        assert isinstance(sw, NxosSwitchIntent)
        parse = CiscoConfParse(texts[sw.name].splitlines(), syntax="nxos")
        # classification: the class-maps cover every codepoint once, each to its queue's qos-group
        prio_queue = {pq.priority: pq.queue for pq in sw.priority_queues}
        want: dict[int, set[int]] = {}
        for line in sw.classifier:
            want.setdefault(prio_queue[line.priority], set()).update(line.codepoints)
        (qos_policy,) = parse.find_objects(r"^policy-map type qos FABRICD_QOS$")
        got: dict[int, set[int]] = {}
        for cls in qos_policy.children:
            name = cls.text.split()[-1]
            (group,) = _children(cls)
            (cmap,) = parse.find_objects(rf"^class-map type qos match-any {name}$")
            (match,) = _children(cmap)
            assert match.startswith("match dscp " if sw.trust_dscp else "match cos ")
            got[int(group.split()[-1])] = _numbers(match.split()[-1])
        assert got == want
        # queuing: all 8 system queues
        (queuing,) = parse.find_objects(r"^policy-map type queuing FABRICD_QUEUING$")
        classes = {c.text.split()[-1]: _children(c) for c in queuing.children}
        assert len(classes) == 8
        for nq in sw.nx_queues:
            q, body = nq.queue, classes[nq.queuing_class]
            assert ("priority level 1" in body) == q.strict
            if q.dwrr:
                assert f"bandwidth remaining percent {q.weight_percent}" in body
            if not q.used:
                assert body == ["bandwidth remaining percent 0"]
            red = [b for b in body if b.startswith("random-detect")]
            assert red == (
                []
                if q.ecn is None
                else [
                    f"random-detect minimum-threshold {q.ecn.min_threshold} kbytes maximum-threshold "
                    f"{q.ecn.max_threshold} kbytes drop-probability {q.ecn.probability_percent} weight 0 ecn"
                ]
            )
        # network-qos: MTU on used queues, pause pfc-cos on the lossless ones
        (nq_policy,) = parse.find_objects(r"^policy-map type network-qos FABRICD_NETWORK_QOS$")
        nq_classes = {c.text.split()[-1]: _children(c) for c in nq_policy.children}
        lossless_cos: set[int] = set()
        for nq in sw.nx_queues:
            if not nq.queue.used:
                assert nq.network_class not in nq_classes
                continue
            body = nq_classes[nq.network_class]
            assert f"mtu {sw.system_mtu_bytes}" in body
            pause = [b for b in body if b.startswith("pause pfc-cos")]
            if pause:
                lossless_cos |= _numbers(pause[0].split()[-1])
        assert lossless_cos == set(sw.lossless_priorities)
        (system,) = parse.find_objects(r"^system qos$")
        assert set(_children(system)) == {
            "service-policy type network-qos FABRICD_NETWORK_QOS",
            "service-policy type queuing output FABRICD_QUEUING",
        }
        wd_lines = {o.text for o in parse.find_objects(r"^priority-flow-control ")}
        if sw.watchdog is None:
            assert wd_lines == set()
        else:
            want_wd = {
                "priority-flow-control watch-dog-interval on",
                f"priority-flow-control fixed-restore multiplier {sw.watchdog.fixed_restore_multiplier}",
            }
            if sw.watchdog.interval_ms is not None:
                want_wd.add(f"priority-flow-control watch-dog interval {sw.watchdog.interval_ms}")
            assert wd_lines == want_wd
        for port in sw.ports:
            (intf,) = parse.find_objects(rf"^interface {re.escape(port.name)}$")
            body = _children(intf)
            assert f"mtu {port.mtu_bytes}" in body and "service-policy type qos input FABRICD_QOS" in body
            assert ("priority-flow-control mode on" in body) == port.pfc
            assert ("priority-flow-control watch-dog-interval on" in body) == port.watchdog
            if port.watchdog and sw.watchdog is not None:
                mult = f"priority-flow-control watch-dog interface-multiplier {sw.watchdog.interface_multiplier}"
                assert mult in body
                assert ("priority-flow-control watch-dog disable-action" in body) == sw.watchdog.disable_action
        for v in sw.vlans:
            (vlan,) = parse.find_objects(rf"^vlan {v.id}$")
            assert _children(vlan) == [f"name {v.name}"]


def _nx_shape(line: str) -> str:
    """NX-OS command shape: values -> N, policy/class names -> W, system class names -> C."""
    s = _shape(line)
    s = re.sub(r"^class type (queuing|network-qos) c-\S+$", r"class type \1 C", s)
    s = re.sub(r"^(policy-map type \S+|class-map type qos match-\S+|class) \S+$", r"\1 W", s)
    return re.sub(r"^(service-policy type (?:network-qos|queuing output|qos input)) \S+$", r"\1 W", s)


@pytest.mark.parametrize(("platform", "case"), _ids("cisco_nxos"))
def test_nxos_commands_have_the_shapes_of_real_configs(platform: str, case: str) -> None:
    known = {_nx_shape(line) for line in NXOS_FIXTURE} | NXOS_EXTRA_SHAPES
    prefixes = (
        "policy-map",
        "class",
        "match",
        "set qos-group",
        "bandwidth",
        "random-detect",
        "priority-flow",
        "priority level",
        "mtu",
        "pause",
        "service-policy",
        "switchport",
        "system qos",
    )
    for text in _text(platform, case, ".cfg").values():
        for line in text.splitlines():
            s = _nx_shape(line)
            if s.startswith(prefixes):
                assert s in known, f"{line.strip()!r} has no counterpart in the captured NX-OS config"


# ------------------------------------------------------------------------------------------------- SONiC


def _walk_refs(db: dict[str, Any]) -> None:
    maps = {
        k: set(db.get(k, {}))
        for k in (
            "DSCP_TO_TC_MAP",
            "DOT1P_TO_TC_MAP",
            "TC_TO_QUEUE_MAP",
            "TC_TO_PRIORITY_GROUP_MAP",
            "MAP_PFC_PRIORITY_TO_QUEUE",
        )
    }
    ports = set(db["PORT"])
    for port, row in db["PORT_QOS_MAP"].items():
        assert port in ports
        for field, table in (
            ("dscp_to_tc_map", "DSCP_TO_TC_MAP"),
            ("dot1p_to_tc_map", "DOT1P_TO_TC_MAP"),
            ("tc_to_queue_map", "TC_TO_QUEUE_MAP"),
            ("tc_to_pg_map", "TC_TO_PRIORITY_GROUP_MAP"),
            ("pfc_to_queue_map", "MAP_PFC_PRIORITY_TO_QUEUE"),
        ):
            if field in row:
                assert row[field] in maps[table]
        if "pfcwd_sw_enable" in row:
            # the watchdog watches the queues the PFC priorities are paused in (pfcwd_sw_enable names queues)
            pfc_queues = {
                db["MAP_PFC_PRIORITY_TO_QUEUE"][row["pfc_to_queue_map"]][p] for p in row["pfc_enable"].split(",")
            }
            assert set(row["pfcwd_sw_enable"].split(",")) == pfc_queues
            assert port in db["PFC_WD"]
    for key, row in db["QUEUE"].items():
        assert key.split("|")[0] in ports and row["scheduler"] in db["SCHEDULER"]
        if "wred_profile" in row:
            assert row["wred_profile"] in db["WRED_PROFILE"]
    for key, row in db.get("BUFFER_PG", {}).items():
        port, pg = key.split("|")
        assert row["profile"] in db["BUFFER_PROFILE"]
        assert pg in db["PORT_QOS_MAP"][port]["pfc_enable"].split(",")
        assert port in db["CABLE_LENGTH"]["AZURE"]
    for prof in db.get("BUFFER_PROFILE", {}).values():
        assert int(prof["size"]) == int(prof["xoff"]) + int(prof["xon"])
    for key in db.get("VLAN_MEMBER", {}):
        vlan, port = key.split("|")
        assert vlan in db["VLAN"] and port in ports
    for row in db.get("WRED_PROFILE", {}).values():
        assert int(row["green_min_threshold"]) <= int(row["green_max_threshold"])
    if "PFC_WD" in db:
        poll = int(db["PFC_WD"]["GLOBAL"]["POLL_INTERVAL"])
        for port, row in db["PFC_WD"].items():
            if port != "GLOBAL":
                assert poll <= min(int(row["detection_time"]), int(row["restoration_time"]))


SONIC_CLI = [
    re.compile(r"^sudo config vlan add \d+$"),
    re.compile(r"^sudo config vlan member add (-u )?\d+ \S+$"),
    re.compile(r"^sudo config interface mtu \S+ \d+$"),
    re.compile(r"^sudo sonic-cfggen -a '(?P<json>\{.*\})' --write-to-db$"),
    re.compile(r"^sudo config pfcwd interval \d+$"),
    re.compile(
        r"^sudo config pfcwd start --action (drop|forward|alert) ports (\S+ )+detection-time \d+ "
        r"--restoration-time \d+$"
    ),
    re.compile(r"^sudo config save -y$"),
]


@pytest.mark.parametrize(("platform", "case"), _ids("sonic"))
def test_sonic_config_db_and_cli(platform: str, case: str) -> None:
    dbs = _text(platform, case, ".json")
    clis = _text(platform, case, ".cli")
    for sw in intents(platform, case):
        assert isinstance(sw, SonicSwitchIntent)
        db = json.loads(dbs[sw.name])
        jsonschema.validate(db, SCHEMA, cls=jsonschema.Draft202012Validator)
        _walk_refs(db)
        assert db == json.loads(sw.config_db.to_json())
        tables_via_cli: dict[str, Any] = {}
        for line in clis[sw.name].splitlines():
            if not line or line.startswith("#"):
                continue
            m = next((p.match(line) for p in SONIC_CLI if p.match(line)), None)
            assert m is not None, f"unexpected SONiC CLI line: {line}"
            if "json" in m.groupdict():  # one table row per line
                for table, rows in json.loads(m.group("json")).items():
                    assert len(rows) == 1, f"one row per sonic-cfggen line: {line[:80]}"
                    tables_via_cli.setdefault(table, {}).update(rows)
            if line.startswith("sudo config pfcwd start"):
                wd = db["PFC_WD"]
                ports = line.split(" ports ")[1].split(" detection-time")[0].split()
                assert set(ports) == set(wd) - {"GLOBAL"}
                assert line.endswith(
                    f"detection-time {wd[ports[0]]['detection_time']} --restoration-time "
                    f"{wd[ports[0]]['restoration_time']}"
                )
            if line.startswith("sudo config pfcwd interval"):
                assert line.split()[-1] == db["PFC_WD"]["GLOBAL"]["POLL_INTERVAL"]
            if line.startswith("sudo config interface mtu"):
                _, _, _, _, port, mtu = line.split()
                assert db["PORT"][port]["mtu"] == mtu
        # the cfggen lines carry exactly the tables that have no `config` subcommand, and VLAN (after `config vlan
        # add`: its description has no subcommand)
        assert tables_via_cli == {k: v for k, v in db.items() if k not in ("PORT", "VLAN_MEMBER", "PFC_WD")}


# ------------------------------------------------------------------------------------------------- Cumulus NVUE


def test_nvue_matcher_rejects_bad_commands() -> None:
    assert check_text("nv set qos pfc-watchdog robustness 3\n") == []
    assert check_text("nv set qos pfc-watchdog robustness 0\n")  # out of 1-1000
    assert check_text("nv set qos mapping default-global dscp 64 switch-priority 3\n")
    assert check_text("nv set qos roce-magic on\n")
    assert check_text("nv set interface swp1 link mtu 9217\n")


@pytest.mark.parametrize(("platform", "case"), _ids("cumulus_nvue"))
def test_nvue_commands_are_valid_paths(platform: str, case: str) -> None:
    texts = _text(platform, case, ".nvue")
    for sw in intents(platform, case):
        assert isinstance(sw, NvueSwitchIntent)
        rejected = check_text(texts[sw.name])
        assert rejected == [], "refused by the pinned NVUE grammar:\n" + "\n".join(map(str, rejected))
        lines = [line for line in texts[sw.name].splitlines() if line and not line.startswith("#")]
        for port in sw.ports:
            assert f"nv set interface {port.name} link mtu {port.mtu_bytes}" in lines
            if port.headroom:
                assert f"nv set interface {port.name} qos pfc profile {port.headroom.profile}" in lines
            if port.watchdog:
                assert f"nv set interface {port.name} qos pfc-watchdog state enable" in lines


# ------------------------------------------------------------------------------------------------- Linux hosts


@pytest.mark.parametrize(("platform", "case"), _ids("linux_host"))
@pytest.mark.integration  # runs bash -n and shellcheck
def test_host_scripts_pass_bash_and_shellcheck(platform: str, case: str, tmp_path: Path) -> None:
    scripts = []
    for r in renders(platform, case):
        for f in r.files:
            if f.relpath.endswith(".sh"):
                path = tmp_path / Path(f.relpath).name
                path.write_text(f.text)
                scripts.append(path)
    assert scripts
    for path in scripts:
        bash = subprocess.run(["bash", "-n", str(path)], capture_output=True, text=True, check=False)
        assert bash.returncode == 0, bash.stderr
    if shutil.which("shellcheck") is None:
        pytest.skip("shellcheck is not installed (Debian package shellcheck, in scripts/sysdeps.sh)")
    sc = subprocess.run(
        ["shellcheck", "--shell=bash", "--severity=style", *map(str, scripts)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert sc.returncode == 0, sc.stdout + sc.stderr
