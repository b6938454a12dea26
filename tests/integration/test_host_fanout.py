"""SSH fan-out (`fabricd host apply --hosts`, `fabricd audit host --hosts`) against real SSH servers on 127.0.0.1
(asyncssh servers that run the command, see sshhosts.py) standing for namespace hosts. An unreachable host and one
whose host key differs from known_hosts fail alone; the failure budget stops the rest of a rollout; JUnit parses.
Needs root for the namespaces; names start with fdt-fl-."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from nshost import NsHost, can_netns
from sshhosts import SshHosts, client_identity

from fabricd import settings
from fabricd.intent.host import host_intent
from fabricd.inventory import load_inventory

pytestmark = [pytest.mark.integration, pytest.mark.netns]

FABRICD = str(Path(sys.executable).with_name("fabricd"))
NS_HOSTS = ("gpu1", "gpu3")
UNREACHABLE = "gpu2"
IMPOSTOR = "gpu4"


@dataclass
class Fleet:
    inventory: Path
    known_hosts: Path
    identity: Path
    ns: dict[str, NsHost]
    ssh: SshHosts

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [
                FABRICD,
                *args,
                str(self.inventory),
                "--known-hosts",
                str(self.known_hosts),
                "--identity",
                str(self.identity),
                "--remote-inventory",
                str(self.inventory),
                "--remote-fabricd",
                FABRICD,
                "--skip",
                "vlan,dcb",
                "--connect-timeout",
                "5",
                "--output",
                "json",
            ],
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
        )


@pytest.fixture()
def fleet(tmp_path: Path, reserve_port: Callable[[], int]) -> Iterator[Fleet]:
    why = can_netns()
    if why:
        pytest.skip(why)
    src = settings.default_inventory()
    inv = tmp_path / "inventory"
    shutil.copytree(src, inv)
    fabric = load_inventory(src).fabric
    identity = tmp_path / "id_ed25519"
    public = client_identity(identity)
    made: dict[str, NsHost] = {}
    try:
        with SshHosts(public, tmp_path) as ssh:
            ports: dict[str, int] = {}
            for name in NS_HOSTS:
                h = made[name] = NsHost.create(host_intent(fabric, name), tmp_path)
                env = dict(
                    os.environ,
                    FABRICD_NETNS=h.ns,
                    FABRICD_ROOT=str(h.root),
                    FABRICD_STATE_DIR=str(tmp_path / "state" / name),
                    FABRICD_APPLY_LOCK_DIR=str(tmp_path / "lock" / name),
                )
                ports[name] = ssh.add(name, env).port
            # an impostor: a server that would run the command, but with a key known_hosts does not have
            ports[IMPOSTOR] = ssh.add(IMPOSTOR, dict(os.environ)).port
            ports[UNREACHABLE] = reserve_port()  # nothing listens there
            hosts_yml = inv / "hosts.yml"
            doc = yaml.safe_load(hosts_yml.read_text())
            for h in doc["hosts"]:
                if h["name"] in ports:
                    h["mgmt"] = {"host": "127.0.0.1", "port": ports[h["name"]]}
            hosts_yml.write_text(yaml.safe_dump(doc, sort_keys=False))
            known = ssh.known_hosts(tmp_path / "known_hosts", wrong=frozenset({IMPOSTOR}))
            yield Fleet(inv, known, identity, made, ssh)
    finally:
        for h in made.values():
            h.close()


def _by_host(res: subprocess.CompletedProcess[str]) -> dict[str, dict[str, object]]:
    data = json.loads(res.stdout)
    return {h["host"]: h for h in data["hosts"]}


def test_audit_fans_out_and_bad_hosts_fail_alone(fleet: Fleet, tmp_path: Path) -> None:
    junit = tmp_path / "audit.xml"
    res = fleet.run("audit", "host", "--hosts", "gpu1,gpu2,gpu3,gpu4", "--junit", str(junit))
    assert res.returncode == 3, res.stderr
    hosts = _by_host(res)
    assert {h: r["state"] for h, r in hosts.items()} == {
        "gpu1": "findings",
        "gpu2": "failed",
        "gpu3": "findings",
        "gpu4": "failed",
    }
    assert "host key refused" in str(hosts[IMPOSTOR]["error"])
    assert "Connect" in str(hosts[UNREACHABLE]["error"]) or "refused" in str(hosts[UNREACHABLE]["error"])
    assert not [c for c in fleet.ssh.commands if c[0] == IMPOSTOR]  # nothing ran on the impostor
    result = hosts["gpu1"]["result"]
    assert isinstance(result, dict) and result["target"] == "gpu1" and result["compliant"] is False
    suites = ET.parse(junit).getroot()
    assert sorted(s.get("name", "") for s in suites) == ["fabricd audit host gpu1", "fabricd audit host gpu3"]
    assert "gpu2: " in res.stderr and "gpu4: " in res.stderr


def test_apply_with_a_failure_budget_stops_the_rollout(fleet: Fleet) -> None:
    # one at a time, in inventory order: gpu1 applies, gpu2 is unreachable, the budget (0) stops gpu3 and gpu4
    res = fleet.run("host", "apply", "--hosts", "gpu1,gpu2,gpu3,gpu4", "--concurrency", "1")
    assert res.returncode == 3, res.stderr
    hosts = _by_host(res)
    assert {h: r["state"] for h, r in hosts.items()} == {
        "gpu1": "ok",
        "gpu2": "failed",
        "gpu3": "skipped",
        "gpu4": "skipped",
    }
    assert json.loads(res.stdout)["budget_spent"] is True
    assert "failure budget spent" in res.stderr
    assert [c[0] for c in fleet.ssh.commands] == ["gpu1"]
    assert "--yes" in fleet.ssh.commands[0][1] and "--host gpu1" in fleet.ssh.commands[0][1]

    # a budget of 1 tolerates gpu2: gpu3 is applied, the impostor fails alone
    res = fleet.run("host", "apply", "--hosts", "gpu*,!gpu5,!gpu6,!gpu7,!gpu8", "--max-failures", "1")
    assert res.returncode == 3
    states = {h: r["state"] for h, r in _by_host(res).items()}
    assert states["gpu3"] == "ok" and states["gpu1"] == "ok"
    assert {states[UNREACHABLE], states[IMPOSTOR]} <= {"failed", "skipped"}
    assert "failed" in {states[UNREACHABLE], states[IMPOSTOR]}

    res = fleet.run("audit", "host", "--hosts", ",".join(NS_HOSTS))
    assert res.returncode == 0, res.stdout + res.stderr
    assert {h: r["state"] for h, r in _by_host(res).items()} == {"gpu1": "ok", "gpu3": "ok"}
    mtu = subprocess.run(
        ["ip", "-n", fleet.ns["gpu3"].ns, "-o", "link", "show", "ens1f0np0"], capture_output=True, text=True, check=True
    ).stdout
    assert "mtu 9000" in mtu


def test_selector_errors_are_bad_input(fleet: Fleet) -> None:
    res = fleet.run("audit", "host", "--hosts", "nosuch*")
    assert res.returncode == 2 and "matches no inventory host" in res.stderr and "Traceback" not in res.stderr
