"""One error per mistake (issue 25, part 2): a bad value that many objects inherit from ``defaults`` or a group is
reported once at its source line, with the count and a few names; JSON still lists every problem with its group;
a missing section is said first, once; no deadlock verdict on a fabric without switches."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fabricd.cli.main import build_app
from fabricd.errors import InventoryError, Location, Problem, group_problems
from fabricd.inventory import load_inventory

REPO = Path(__file__).resolve().parents[2]
LAB = REPO / "inventory" / "lab"


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("FORCE_COLOR", "FABRICD_INVENTORY", "FABRICD_OUTPUT", "FABRICD_FAIL_LINKS"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("COLUMNS", "400")


def _run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(build_app(), list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout, result.stderr


def _fabric_of_68_nics(root: Path, nic_default: str) -> Path:
    """The lab with 17 hosts of 4 NICs each (68 NICs), every NIC inheriting ``defaults.nic``."""
    shutil.copytree(LAB, root)
    hosts = ["hosts:"]
    for h in range(1, 18):
        hosts += [f"  - name: gpu{h}", "    groups: [gpu]", "    nics:"]
        hosts += [f"      - {{netdev: eth{n}, rdma_device: mlx5_{n}, ip: 10.{100 + n}.0.{h}/16}}" for n in range(4)]
    (root / "hosts.yml").write_text("\n".join(hosts) + "\n")
    groups = root / "groups.yml"
    text = groups.read_text()
    lab_line = "  nic: {driver: mlx5_core, mtu: 9000, speed: 400G, vlan: 100, rdma_port: 1}"
    assert lab_line in text
    groups.write_text(text.replace(lab_line, f"  nic: {{driver: mlx5_core, vlan: 100, rdma_port: 1, {nic_default}}}"))
    return root


def test_a_bad_default_that_68_nics_inherit_is_one_error_line(tmp_path: Path) -> None:
    inv = _fabric_of_68_nics(tmp_path / "inv", "mtu: 9k, speed: 400G")
    line = next(i for i, t in enumerate((inv / "groups.yml").read_text().splitlines(), 1) if "mtu: 9k" in t)
    code, out, err = _run("validate", str(inv))
    assert code == 2 and out == ""
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"error: {inv}/groups.yml:{line}: hosts[*].nics[*].mtu: ")
    assert "got '9k'" in lines[0]
    assert lines[0].endswith("(68 NICs inherit this: gpu1.eth0, gpu1.eth1, gpu1.eth2 and 65 more) [INV100]")


def test_json_still_lists_every_problem_with_its_group(tmp_path: Path) -> None:
    inv = _fabric_of_68_nics(tmp_path / "inv", "mtu: 9k, speed: 400G")
    code, out, _ = _run("validate", str(inv), "--output", "json")
    data = json.loads(out)
    assert code == 2 and data["stage"] == "load"
    assert len(data["problems"]) == 68 and {p["group"] for p in data["problems"]} == {0}
    assert data["problems"][5]["path"] == "hosts[gpu2].nics[eth1].mtu"
    (group,) = data["groups"]
    assert group["count"] == 68 and group["path"] == "hosts[*].nics[*].mtu" and group["line"] > 0
    assert group["objects"][:2] == ["gpu1.eth0", "gpu1.eth1"] and len(group["objects"]) == 68


def test_two_mistakes_on_one_line_stay_two(tmp_path: Path) -> None:
    inv = _fabric_of_68_nics(tmp_path / "inv", "mtu: 9k, speed: 400")
    with pytest.raises(InventoryError) as exc:
        load_inventory(inv)
    rendered = exc.value.render().splitlines()
    assert len(exc.value.problems) == 136 and len(rendered) == 2
    assert [re.search(r"\]\.(\w+):", r).group(1) for r in rendered] == ["mtu", "speed"]  # type: ignore[union-attr]


def test_different_values_at_different_lines_are_not_grouped() -> None:
    a = Problem("bad", path="hosts[a].mtu", location=Location("x.yml", 3), got="1", code="INV100")
    b = Problem("bad", path="hosts[b].mtu", location=Location("x.yml", 4), got="1", code="INV100")
    c = Problem("bad", path="hosts[c].mtu", location=Location("x.yml", 4), got="2", code="INV100")
    d = Problem("bad", path="hosts[d].mtu", location=Location("x.yml", 4), got="2", code="INV100")
    groups = group_problems([a, b, c, d])
    assert [g.count for g in groups] == [1, 1, 2]
    assert groups[0].render() == a.render()
    assert groups[2].render() == "x.yml:4: hosts[*].mtu: bad (expected None, got 2) (2 hosts inherit this: c, d)"


def test_missing_switches_file_is_one_hint_and_no_deadlock_verdict(tmp_path: Path) -> None:
    inv = tmp_path / "inv"
    shutil.copytree(LAB, inv)
    (inv / "switches.yml").unlink()
    code, out, _ = _run("validate", str(inv))
    lines = out.splitlines()
    assert code == 1
    assert lines[0].startswith(
        f"error: {inv}: switches: no switches defined (expected at least one switch under "
        "switches:, got 32 references to switches: links[0].a, links[0].b, links[1].a and 29 "
        "more); is switches.yml missing?"
    )
    assert lines[1:] == [
        "PFC deadlock: not analysed (no switches)",
        "lab: 0 switches, 8 hosts, 8 links: 1 error, 0 warnings: failed",
    ]
    data = json.loads(_run("validate", str(inv), "--output", "json")[1])
    assert data["deadlock"] == {"applicable": False, "reason": "no switches"}
    assert [p["code"] for p in data["problems"]] == ["FAB016"]


def test_missing_groups_file_is_one_error(tmp_path: Path) -> None:
    inv = tmp_path / "inv"
    shutil.copytree(LAB, inv)
    (inv / "groups.yml").unlink()
    code, _, err = _run("validate", str(inv))
    assert code == 2
    (line,) = err.splitlines()
    assert "no groups defined, but 14 devices list groups (switches[spine1], switches[spine2], " in line
    assert "is groups.yml missing?" in line


def test_missing_hosts_is_a_warning_first(tmp_path: Path) -> None:
    inv = tmp_path / "inv"
    shutil.copytree(LAB, inv)
    (inv / "hosts.yml").unlink()
    code, out, _ = _run("validate", str(inv))
    assert code == 0
    assert out.splitlines()[0].startswith(f"warning: {inv}: hosts: no hosts defined")
    assert "PFC deadlock: not analysed (no switch has an RDMA host)" in out
    assert "no cyclic" not in out
