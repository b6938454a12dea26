"""The packs' device rules (fabricd/nos/<id>/rules.py) as `fabricd validate` checks them (fabricd/nos/checks.py):
each case is an inventory the base commit accepted with 0 errors that a switch refuses or silently changes
(issue 24), now refused or warned at the inventory line with the device's own value in the message."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fabricd.errors import Problem
from fabricd.inventory import load_inventory
from fabricd.model import Platform
from fabricd.nos.registry import SPECS
from fabricd.nos.rules import DeviceRules, Source
from fabricd.nos.validate import run_checks
from tests.unit.test_checks import D, P, S, lab_docs, write


def _problems(tmp_path: Path, docs: dict[str, Any], code: str) -> list[Problem]:
    return [p for p in run_checks(load_inventory(write(tmp_path / "inv", docs))) if p.code == code]


def _switch(docs: dict[str, Any], platform: str) -> Any:
    return next(sw for sw in S(docs) if sw["platform"] == platform and sw["name"].startswith("leaf"))


def test_sonic_portchannel_and_alias_are_not_ports(tmp_path: Path) -> None:
    """SONiC's PORT rows need lanes: a LAG or an alias as a port name is a row for a port the switch lacks."""
    docs = lab_docs()
    _switch(docs, "sonic")["ports"] += [{"name": "PortChannel0001", "role": "host"}, {"name": "etp1", "role": "host"}]
    found = _problems(tmp_path, docs, "FAB140")
    assert [p.got for p in found] == ["PortChannel0001", "etp1"]
    assert all(p.severity == "error" and p.location is not None and p.location.line > 0 for p in found)
    assert "LAG" in found[0].message and "member ports" in (found[0].hint or "")
    assert found[0].path.startswith("switches[leaf1-sonic].ports[PortChannel0001]")


def test_eos_and_nxos_port_names_are_checked(tmp_path: Path) -> None:
    docs = lab_docs()
    _switch(docs, "arista_eos")["ports"].append({"name": "Port-Channel10", "role": "host"})
    _switch(docs, "cisco_nxos")["ports"].append({"name": "Ethernet7", "role": "host"})
    assert {p.got for p in _problems(tmp_path, docs, "FAB140")} == {"Port-Channel10", "Ethernet7"}


def test_nxos_l2_port_takes_only_default_or_jumbo_mtu(tmp_path: Path) -> None:
    """Cisco TechNote 118994: a fabric-wide 9214 fails on every NX-OS switchport (the lab's NX-OS host ports carry
    VLAN 100, so fabricd renders `switchport` on them); its routed uplinks take 9214."""
    docs = lab_docs()
    D(docs)["port"]["mtu"] = 9214
    found = _problems(tmp_path, docs, "FAB142")
    assert sorted(p.path for p in found) == [
        "switches[leaf3-nxos].ports[Ethernet1/1].mtu",
        "switches[leaf3-nxos].ports[Ethernet1/2].mtu",
    ]
    assert found[0].expected is not None and "1500, 9216" in found[0].expected


def test_eos_port_mtu_above_9214_is_refused_at_its_line(tmp_path: Path) -> None:
    """EOS's `mtu` is the IP MTU, 68-9214 (EOS User Manual): the model's 9216, which the base commit rendered with
    0 errors, is refused on every EOS port (switchports too: fabricd renders `mtu` on them), with the documented
    range, the value and the fix; 9214 passes, and the other packs keep taking 9216."""
    docs = lab_docs()
    eos = _switch(docs, "arista_eos")
    eos["ports"][0]["mtu"] = 9216
    eos["ports"][2]["mtu"] = 9215
    found = _problems(tmp_path, docs, "FAB142")
    assert sorted(p.path for p in found) == [
        "switches[leaf2-eos].ports[Ethernet1].mtu",
        "switches[leaf2-eos].ports[Ethernet49].mtu",
    ]
    first = next(p for p in found if p.path.endswith("[Ethernet1].mtu"))
    assert first.severity == "error" and first.got == "9216"
    assert first.location is not None and str(first.location.file).endswith("switches.yml") and first.location.line > 0
    assert first.expected is not None and first.expected.startswith("68-9214 (EOS User Manual")
    assert first.hint is not None and "mtu: 9214" in first.hint
    assert SPECS[Platform.ARISTA_EOS].rules.mtu.routed == (68, 9214)
    for other in ("sonic", "cumulus_nvue"):
        _switch(docs, other)["ports"][0]["mtu"] = 9216
    assert {p.path.split(".")[0] for p in _problems(tmp_path, docs, "FAB142")} == {"switches[leaf2-eos]"}


def test_nxos_vlan_name_over_32_characters(tmp_path: Path) -> None:
    docs = lab_docs()
    P(docs)["vlans"][0]["name"] = "r" * 33
    found = _problems(tmp_path, docs, "FAB141")
    nxos = [p for p in found if "Cisco NX-OS" in p.message]
    assert len(nxos) == 1 and "system vlan long-name" in (nxos[0].hint or "")
    assert nxos[0].path == f"policy.vlans[{'r' * 33}].name"
    P(docs)["vlans"][0]["name"] = "r" * 32
    assert _problems(tmp_path, docs, "FAB141") == []


def test_nxos_watchdog_grid_5000ms_at_100ms_poll(tmp_path: Path) -> None:
    """NX-OS detection is the interface multiplier (1-40) x the poll: 5000 ms at 100 ms rendered as 4000 ms."""
    docs = lab_docs()
    P(docs)["pfc"]["watchdog"].update(detection_ms=5000, restoration_ms=5000)
    found = [p for p in _problems(tmp_path, docs, "FAB041") if "cisco_nxos" in p.message]
    assert [p.path for p in found] == ["policy.pfc.watchdog.detection_ms"]
    assert "4000 ms" in found[0].message and "poll_ms: 125" in (found[0].hint or "")
    assert found[0].location is not None and str(found[0].location.file).endswith("fabric.yml")


def test_nxos_ecn_kbytes_rounding_warns_at_the_profile(tmp_path: Path) -> None:
    docs = lab_docs()
    P(docs)["ecn_profiles"][0]["min_bytes"] = 150_400
    found = _problems(tmp_path, docs, "FAB143")
    assert [(p.severity, p.path) for p in found] == [("warning", "policy.ecn_profiles[roce].min_bytes")]
    assert "150 kbytes" in found[0].message and "cisco_nxos" in found[0].message


def test_every_rule_has_a_source() -> None:
    for platform, spec in SPECS.items():
        rules = spec.rules
        assert isinstance(rules, DeviceRules), platform
        named = list(rules.sources())
        assert {"ports", "mtu", "watchdog", "ecn"} <= {n for n, _ in named}, platform
        for name, src in named:
            assert isinstance(src, Source) and len(src.ref) > 20, (platform, name)
    assert SPECS[Platform.CISCO_NXOS].rules.mtu.l2_values == (1500, 9216)


def test_ecn_min_bytes_150_warns_as_kbytes(tmp_path: Path) -> None:
    """`min_bytes: 150` (kbytes typed as bytes) passed with 0 warnings and rendered `minimum-threshold 150 bytes`."""
    docs = lab_docs()
    P(docs)["ecn_profiles"][0]["min_bytes"] = 150
    found = [p for p in run_checks(load_inventory(write(tmp_path / "inv", docs))) if p.code == "FAB059"]
    assert [(p.severity, p.path) for p in found] == [("warning", "policy.ecn_profiles[roce].min_bytes")]
    assert "min_bytes: 150000" in (found[0].hint or "")
