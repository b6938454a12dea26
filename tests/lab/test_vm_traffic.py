"""Real verbs traffic between the two Soft-RoCE VMs (Debian 12 kernel, rdma_rxe, pyverbs 44): every RC operation with
payload checks, the ToS on the wire, rxe hw_counters through the readers, validate-fabric, and clean-up after bad
input. The VMs come from conftest.py (one pair per session)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from fabricd.readers.rdma import RdmaKey, read_rdma_device
from fabricd.traffic import snapshot, sniff
from fabricd.traffic.pair import run_pair
from fabricd.traffic.spec import LAB_ACK_TIMEOUT, Mode, Op, TrafficSpec

pytestmark = [pytest.mark.vm, pytest.mark.timeout(1800)]  # the first test also builds and boots


def fabricd(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """The real CLI entry point, as a user runs it."""
    code = "import sys; from fabricd.cli.main import main; sys.argv[0] = 'fabricd'; main()"
    return subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=timeout, check=False
    )


def rdma_res(lab_vm: Any, which: str) -> str:
    """``rdma resource show`` counts (pd/cq/qp/mr/ctx) of the guest's rxe0."""
    r = lab_vm.agent(which).run(["rdma", "resource", "show"], timeout_s=30)
    assert r.ok, r.stderr
    m = re.search(r"rxe0: (.*)", r.stdout)
    assert m, r.stdout
    return m.group(1).strip()


def test_selftest_every_op_moves_intact_payloads(lab_vm: Any) -> None:
    r = fabricd("traffic", "selftest", "--name", lab_vm.name, "--iterations", "64", "--output", "json")
    assert r.returncode == 0, r.stderr + r.stdout
    data = json.loads(r.stdout)
    results = data["session"]["results"]
    assert [x["op"] for x in results] == [op.value for op in Op]
    for x in results:
        assert x["verify"]["ok"] and x["verify"]["checked"] > 0, x
        assert x["messages"] == 2 * 64  # 2 QPs x 64 iterations
    assert data["server_session"]["ok"]


def test_latency_ping_pong_and_one_sided_round_trips(lab_vm: Any) -> None:
    a, _b = lab_vm.endpoints
    spec = TrafficSpec(
        ops=[Op.SEND, Op.READ, Op.FETCH_ADD],
        mode=Mode.LAT,
        sizes=[64],
        depth=1,
        post_list=1,
        signal_every=1,
        iterations=100,
        duration_s=None,
        ack_timeout=LAB_ACK_TIMEOUT,
    )
    run = run_pair(lab_vm.runner("a"), lab_vm.runner("b"), a.address, spec)
    assert run.ok, run.error
    assert run.client is not None
    send, read, faa = run.client.results
    assert send.latency and send.latency.kind == "one_way" and send.latency.samples == 100
    assert read.latency and read.latency.kind == "rtt" and faa.latency and faa.latency.kind == "rtt"
    assert 0 < send.latency.min_us <= send.latency.p50_us <= send.latency.max_us


def test_tos_on_the_wire_and_rxe_counters_through_the_readers(lab_vm: Any, tmp_path: Path) -> None:
    """A non-default ToS (DSCP 34 << 2 = 136) is what the receiver captures, and rxe's hw_counters, read back by
    fabricd.readers from a snapshot, moved by exactly the packets the WRITEs needed (64 KiB / 4 KiB MTU = 16)."""
    a, b = lab_vm.endpoints
    snaps: dict[str, dict[str, Path]] = {}

    def snap(label: str) -> None:
        for ep in (a, b):
            files = snapshot.take(lab_vm.runner(ep.role), [ep.rdma_device], [ep.netdev, ep.ip_netdev])
            snaps.setdefault(ep.host, {})[label] = snapshot.materialise(files, tmp_path / f"{ep.host}-{label}")

    snap("before")
    started = sniff.start(lab_vm.runner("b"), b.ip_netdev, seconds=120, limit=200)
    spec = TrafficSpec(
        ops=[Op.WRITE],
        sizes=[65536],
        depth=1,
        post_list=1,
        signal_every=1,
        iterations=64,
        duration_s=None,
        warmup=False,
        tos=136,
        ack_timeout=LAB_ACK_TIMEOUT,
    )
    run = run_pair(lab_vm.runner("b"), lab_vm.runner("a"), b.address, spec)
    capture = sniff.collect(started, b.ip_netdev, timeout_s=150)
    snap("after")
    assert run.ok, run.error
    assert capture.packets == 200 and capture.tos == {136: 200}, capture

    def delta(host: str, key: RdmaKey) -> int:
        ports = [read_rdma_device(snaps[host][lbl], "rxe0").ports[0].normalised() for lbl in ("before", "after")]
        return ports[1][key] - ports[0][key]

    assert delta(a.host, RdmaKey("packets", "tx")) == 64 * 16
    assert delta(b.host, RdmaKey("packets", "rx")) == 64 * 16
    assert delta(b.host, RdmaKey("packets", "tx")) == 64  # one ACK per message
    assert delta(b.host, RdmaKey("out_of_sequence", "rx")) == 0


def test_validate_fabric_on_the_two_host_inventory(lab_vm: Any, tmp_path: Path) -> None:
    junit = tmp_path / "fabric.xml"
    r = fabricd(
        "validate-fabric",
        str(Path(__file__).resolve().parents[2] / "inventory/examples/softroce.yml"),
        "--name",
        lab_vm.name,
        "--output",
        "json",
        "--junit",
        str(junit),
    )
    data = json.loads(r.stdout)
    (pair,) = data["pairs"]
    status = {c["code"]: c["status"] for c in pair["checks"]}
    assert r.returncode == 0, pair
    assert status == {
        "FABRIC-TRAFFIC": "pass",
        "FABRIC-RDMA-BYTES": "pass",
        "FABRIC-SEQUENCE": "pass",
        "FABRIC-DROPS": "pass",
        "FABRIC-DSCP": "pass",
        "FABRIC-PRIORITY-BYTES": "skip",
        "FABRIC-PFC": "skip",
        "FABRIC-ECN": "skip",
    }
    assert 'skipped="3"' in junit.read_text() and 'failures="0"' in junit.read_text()


def test_validate_fabric_sees_a_lossy_link(lab_vm: Any) -> None:
    """netem drops 3% of rxe-a's frames: RC recovers (payloads intact) but the go-back-N counters must be flagged."""
    a, _ = lab_vm.endpoints
    add = lab_vm.agent("a").run(["tc", "qdisc", "add", "dev", a.netdev, "root", "netem", "loss", "3%"], timeout_s=30)
    assert add.ok, add.stderr
    try:  # 32 x 16 packets: P(no loss at 3 %) < 1e-6; a 268 ms ACK timeout keeps tail-loss recovery short
        r = fabricd(
            "validate-fabric",
            str(Path(__file__).resolve().parents[2] / "inventory/examples/softroce.yml"),
            "--name",
            lab_vm.name,
            "--iterations",
            "32",
            "--ack-timeout",
            "16",
            "--output",
            "json",
        )
    finally:
        lab_vm.agent("a").run(["tc", "qdisc", "del", "dev", a.netdev, "root"], timeout_s=30)
    (pair,) = json.loads(r.stdout)["pairs"]
    checks = {c["code"]: c for c in pair["checks"]}
    assert r.returncode == 1, pair
    assert checks["FABRIC-TRAFFIC"]["status"] == "pass"
    (finding,) = checks["FABRIC-SEQUENCE"]["findings"]
    assert checks["FABRIC-SEQUENCE"]["status"] == "fail" and "lossy path" in finding["message"]


BAD_INPUT_PROGRAM = r"""
import json, re, subprocess, sys
from fabricd.errors import FabricdError
from fabricd.cli.traffic import traffic_app

def res():
    out = subprocess.run(["rdma", "resource", "show"], capture_output=True, text=True).stdout
    return re.search(r"rxe0: (.*)", out).group(1).strip()

results = []
for args in json.loads(sys.argv[1]):
    try:
        code, text = traffic_app(["client", *args], standalone_mode=False) or 0, ""
    except FabricdError as exc:
        code, text = exc.exit_code, exc.render()
    results.append({"args": args, "code": code, "text": text, "rdma_res": res()})
print(json.dumps(results))
"""


def test_bad_input_leaves_no_qp_or_mr_behind(lab_vm: Any) -> None:
    """Each bad input gives its clear error and exit code, through the CLI's own code, in one process that stays
    alive: after each, ``rdma resource show`` in both guests equals the baseline (the server keeps only its
    pre-registered pool; the failed client released whatever it had created)."""
    a, _b = lab_vm.endpoints
    port = 23456
    server = lab_vm.runner("a").start(
        ["fabricd-traffic", "server", "--bind", a.address, "--port", str(port), "--pool-mib", "8"]
    )
    try:
        ok = lab_vm.agent("b").run(
            [
                "fabricd-traffic",
                "client",
                "--peer",
                a.address,
                "--port",
                str(port),
                "--iterations",
                "4",
                "--depth",
                "16",
                "--connect-timeout",
                "90",
            ],
            timeout_s=180,
        )
        assert ok.rc == 0, ok.stderr  # the server is up, its pool registered and its first session cleaned
        base_a, base_b = rdma_res(lab_vm, "a"), rdma_res(lab_vm, "b")
        p = ["--peer", a.address, "--port", str(port)]
        cases = [
            (
                ["--peer", "198.18.100.77", "--port", str(port), "--connect-timeout", "2"],
                3,
                "cannot reach traffic server 198.18.100.77",
            ),
            ([*p, "--device", "rxe0", "--gid-index", "9"], 2, "GID index 9 on rxe0 port 1 is empty"),
            ([*p, "--size", "1048576", "--qps", "4"], 2, "more than the 67108864-byte MR pool"),
            ([*p, "--size", "1048576", "--depth", "16"], 3, "more than the server's 8388608-byte MR pool"),
            ([*p, "--device", "rxe9"], 2, "RDMA device 'rxe9' does not exist"),
        ]
        r = lab_vm.agent("b").run(
            ["python3", "-c", BAD_INPUT_PROGRAM, json.dumps([c[0] for c in cases])],
            env={"PYTHONPATH": "/mnt/fabricd/code:/opt/fabricd/lib", "PATH": "/usr/sbin:/usr/bin:/sbin:/bin"},
            timeout_s=300,
        )
        assert r.ok, r.stderr
        for (args, code, text), got in zip(cases, json.loads(r.stdout.strip().splitlines()[-1]), strict=True):
            assert got["code"] == code and text in got["text"], got
            assert got["rdma_res"] == base_b, (args, got["rdma_res"], base_b)
        assert rdma_res(lab_vm, "a") == base_a
    finally:
        server.kill()
