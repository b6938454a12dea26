"""validate-fabric's SSH runner (fabricd.deploy.ssh_runner) against real SSH servers on 127.0.0.1 (sshhosts.py):
commands with stdin and environment, background commands with wait and kill, a refused host key, and
`validate-fabric --via ssh --matrix pairs` reaching the hosts: the counter snapshot and the traffic server and client
run on them over SSH; with no RDMA device on this machine the pair then stops with the host's own error (real
traffic runs on the Soft-RoCE VMs, tests/lab)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from sshhosts import SshHosts, client_identity

from fabricd.deploy.hostfanout import FanoutOptions, SshTarget
from fabricd.deploy.ssh_runner import SshRunner
from fabricd.traffic.oob import TrafficError

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
FABRICD = str(Path(sys.executable).with_name("fabricd"))


@pytest.fixture()
def ssh(tmp_path: Path) -> Iterator[tuple[SshHosts, Path, Path]]:
    ident = tmp_path / "id"
    with SshHosts(client_identity(ident), tmp_path) as hosts:
        hosts.add("rxe-a", dict(os.environ))
        hosts.add("rxe-b", dict(os.environ))
        hosts.add("impostor", dict(os.environ))
        known = hosts.known_hosts(tmp_path / "known_hosts", wrong=frozenset({"impostor"}))
        yield hosts, ident, known


def _runner(hosts: SshHosts, name: str, ident: Path, known: Path) -> SshRunner:
    return SshRunner(
        SshTarget(name, "127.0.0.1", hosts.hosts[name].port),
        FanoutOptions(identity_files=(ident,), known_hosts=(known,), connect_timeout_s=5),
    )


def test_run_start_wait_kill(ssh: tuple[SshHosts, Path, Path]) -> None:
    hosts, ident, known = ssh
    r = _runner(hosts, "rxe-a", ident, known)
    try:
        res = r.run(
            ["sh", "-c", 'read line; echo "$line $GREETING"; echo err >&2; exit 3'],
            timeout_s=30,
            stdin=b"hello\n",
            env={"GREETING": "world"},
        )
        assert (res.rc, res.stdout, res.stderr) == (3, "hello world\n", "err\n")
        started = r.start(["sh", "-c", "sleep 0.3; echo done"])
        done = started.wait(timeout_s=30)
        assert done.ok and done.stdout == "done\n"
        slow = r.start(["sleep", "5"])
        with pytest.raises(TrafficError, match="still runs after"):
            slow.wait(timeout_s=0.5)
        assert r.traffic_command == ("fabricd", "traffic")
    finally:
        r.close()
    bad = _runner(hosts, "impostor", ident, known)
    try:
        with pytest.raises(
            TrafficError,
            match=r"SSH to 127\.0\.0\.1:\d+ failed: host key refused \(it does not "
            r"match the one in .*known_hosts",
        ):
            bad.run(["true"], timeout_s=30)
        assert not [c for c in hosts.commands if c[0] == "impostor"]
    finally:
        bad.close()


def test_validate_fabric_via_ssh_reaches_every_host(ssh: tuple[SshHosts, Path, Path], tmp_path: Path) -> None:
    hosts, ident, known = ssh
    doc = yaml.safe_load((REPO / "inventory/examples/softroce.yml").read_text())
    for h in doc["hosts"]:
        h["mgmt"] = {"host": "127.0.0.1", "port": hosts.hosts[h["name"]].port}
    inv = tmp_path / "fabric.yml"
    inv.write_text(yaml.safe_dump(doc, sort_keys=False))
    res = subprocess.run(
        [
            FABRICD,
            "validate-fabric",
            str(inv),
            "--via",
            "ssh",
            "--matrix",
            "pairs",
            "--identity",
            str(ident),
            "--known-hosts",
            str(known),
            "--bar-gbps",
            "1",
            "--baseline",
            "off",
            "--remote-fabricd",
            FABRICD,
            "--iterations",
            "4",
            "--output",
            "json",
        ],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
        env=dict(os.environ, FABRICD_STATE_DIR=str(tmp_path / "state")),
    )
    assert res.returncode == 3, res.stderr
    data = json.loads(res.stdout)
    (pair,) = data["pairs"]
    assert pair["ran"] is False and pair["error"].startswith(("client on rxe-a", "server on rxe-b")), pair["error"]
    by_host: dict[str, list[str]] = {}
    for host, command in hosts.commands:
        by_host.setdefault(host, []).append(command)
    # both hosts were reached: the counter snapshot program, then the traffic server (rxe-b) and client (rxe-a)
    assert set(by_host) == {"rxe-a", "rxe-b"}
    assert any(c.startswith("python3 -") for c in by_host["rxe-a"])
    assert any(f"{FABRICD} traffic server" in c for c in by_host["rxe-b"])
    assert any(f"{FABRICD} traffic client" in c for c in by_host["rxe-a"])
