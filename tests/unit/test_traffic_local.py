"""The programs validate-fabric runs on an endpoint, run for real on this host through a local Runner:
the counter snapshot (sysfs netdev statistics, ethtool) and the AF_PACKET capture of RoCE v2 marking (real UDP
datagrams to port 4791 on loopback with IP_TOS set; needs root, as on a real endpoint). Plus the CLI's input errors.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import pytest
from fake_verbs import fake_sysfs
from typer.testing import CliRunner

from fabricd.cli.main import build_app
from fabricd.errors import FabricdError
from fabricd.traffic import snapshot, sniff
from fabricd.traffic.checks import TRAFFIC
from fabricd.traffic.oob import TrafficError
from fabricd.traffic.remote import CommandResult

REPO = Path(__file__).resolve().parents[2]


class _Started:
    def __init__(self, proc: subprocess.Popen[str], argv: Sequence[str]) -> None:
        self.proc, self.argv, self.t0 = proc, tuple(argv), time.monotonic()

    def wait(self, timeout_s: float) -> CommandResult:
        out, err = self.proc.communicate(timeout=timeout_s)
        return CommandResult(self.argv, self.proc.returncode, out, err, time.monotonic() - self.t0)

    def kill(self) -> None:
        self.proc.kill()


class LocalRunner:
    """Runs commands on this host (the Runner protocol validate-fabric uses for remote endpoints)."""

    name = "localhost"
    traffic_command = ("fabricd", "traffic")

    def run(
        self, argv: Sequence[str], *, timeout_s: float, stdin: bytes | None = None, env: Mapping[str, str] | None = None
    ) -> CommandResult:
        t0 = time.monotonic()
        r = subprocess.run(
            list(argv),
            input=stdin.decode() if stdin else None,
            capture_output=True,
            text=True,
            timeout=timeout_s,
            env={**os.environ, **(env or {})},
            check=False,
        )
        return CommandResult(tuple(argv), r.returncode, r.stdout, r.stderr, time.monotonic() - t0)

    def start(self, argv: Sequence[str], *, env: Mapping[str, str] | None = None) -> _Started:
        proc = subprocess.Popen(
            list(argv), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, **(env or {})}
        )
        return _Started(proc, argv)


@pytest.mark.integration  # runs the snapshot program as a process
def test_snapshot_program_reads_this_hosts_loopback(tmp_path: Path) -> None:
    files = snapshot.take(LocalRunner(), [], ["lo"])
    assert "sys/class/net/lo/statistics/rx_bytes" in files and files["sys/class/net/lo/mtu"].strip() == "65536"
    root = snapshot.materialise(files, tmp_path / "snap")
    stats = snapshot.read_netdev_stats(root, "lo")
    assert stats.get("rx_bytes") is not None and stats.get("rx_bytes") >= 0  # type: ignore[operator]


def test_snapshot_refuses_paths_outside_the_root(tmp_path: Path) -> None:
    with pytest.raises(TrafficError, match="leaves the replay root"):
        snapshot.materialise({"../../etc/evil": "x"}, tmp_path / "snap")


@pytest.mark.skipif(os.geteuid() != 0, reason="AF_PACKET capture needs root")
@pytest.mark.integration  # runs the capture program as a process
def test_capture_sees_the_tos_of_roce_v2_datagrams() -> None:
    started = sniff.start(LocalRunner(), "lo", seconds=20, limit=6, idle_s=5)
    time.sleep(1.0)  # let the capture open its socket
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        for tos, n in ((106, 4), (0, 2)):
            s.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, tos)
            for _ in range(n):
                s.sendto(b"\x00" * 40, ("127.0.0.1", sniff.ROCE_V2_PORT))
        s.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, 106)
        s.sendto(b"\x00" * 40, ("127.0.0.1", 4792))  # not RoCE: not counted
    cap = sniff.collect(started, "lo", timeout_s=30)
    # loopback shows each datagram once on egress and once on ingress
    assert cap.packets == 6 and set(cap.tos) <= {106, 0} and cap.tos[106] >= 4
    assert cap.dscp().get(26, 0) == cap.tos[106]


@pytest.mark.integration  # runs the capture program as a process
def test_capture_failure_is_an_error() -> None:
    with pytest.raises(TrafficError, match="capture on nosuchif0 failed"):
        sniff.collect(sniff.start(LocalRunner(), "nosuchif0", seconds=1), "nosuchif0", timeout_s=30)


runner = CliRunner()


def _cli(*args: str) -> tuple[int, str]:
    """The app as ``fabricd.cli.main.main`` runs it: a FabricdError becomes its exit code and rendered message."""
    r = runner.invoke(build_app(), list(args))
    if isinstance(r.exception, FabricdError):
        return r.exception.exit_code, r.output + r.exception.render()
    assert r.exception is None or isinstance(r.exception, SystemExit), r.exception
    return r.exit_code, r.output


@pytest.mark.integration  # the client over loopback TCP
def test_client_bad_options_are_exit_2_with_the_reason(tmp_path: Path) -> None:
    root = fake_sysfs(tmp_path)
    code, out = _cli("traffic", "client", "--peer", "127.0.0.1", "--op", "bogus", "--root", str(root))
    assert code == 2 and "unknown --op 'bogus'" in out
    code, out = _cli("traffic", "client", "--peer", "127.0.0.1", "--size", "1048576", "--qps", "4", "--root", str(root))
    assert code == 2 and "more than the 67108864-byte MR pool" in out
    code, out = _cli("traffic", "client", "--peer", "127.0.0.1", "--depth", "10", "--root", str(root))
    assert code == 2 and "depth 10 must be a multiple of post_list 16" in out
    code, out = _cli("traffic", "client", "--peer", "127.0.0.1", "--device", "mlx5_9", "--root", str(root))
    assert code == 2 and "RDMA device 'mlx5_9' does not exist" in out


@pytest.mark.integration  # binds a loopback port
def test_client_unreachable_peer_is_exit_3_through_the_real_entry_point(
    tmp_path: Path, reserve_port: Callable[[], int]
) -> None:
    root = fake_sysfs(tmp_path)
    port = reserve_port()  # nothing listens there
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "fabricd.cli.traffic",
            "client",
            "--peer",
            "127.0.0.1",
            "--port",
            str(port),
            "--connect-timeout",
            "0.5",
            "--root",
            str(root),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert r.returncode == 3, r.stderr
    assert f"cannot reach traffic server 127.0.0.1:{port}" in r.stderr and "Traceback" not in r.stderr


def test_selftest_and_lab_exec_need_a_running_lab(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FABRICD_STATE_DIR", str(tmp_path))
    code, out = _cli("traffic", "selftest")
    assert code == 2 and "no runner pool 'lab' is running" in out and "fabricd lab vm up" in out
    code, out = _cli("lab", "vm", "exec", "a", "--", "true")
    assert code == 2 and "not running" in out
    code, out = _cli("lab", "vm", "status", "--output", "json")
    assert code == 1 and '"state": "never started"' in out


def test_validate_fabric_without_a_lab_reports_pairs_not_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FABRICD_STATE_DIR", str(tmp_path))
    junit = tmp_path / "v.xml"
    softroce = str(REPO / "inventory" / "examples" / "softroce.yml")
    code, out = _cli("validate-fabric", softroce, "--junit", str(junit), "--output", "json")
    assert code == 3 and '"ran": false' in out and "no runner pool 'lab' is running" in out
    assert "<failure" in junit.read_text()
    (pair,) = json.loads(out[out.index("{") :])["pairs"]  # the one report shape, from the declarations
    assert (pair["kind"], pair["target"], pair["compliant"], pair["summary"]["fail"]) == (
        "fabric",
        "rxe-a->rxe-b",
        False,
        1,
    )
    (check,) = pair["checks"]
    assert (check["code"], check["title"], check["status"]) == (
        "FABRIC-TRAFFIC",
        TRAFFIC["FABRIC-TRAFFIC"].title,
        "fail",
    )
    assert "no runner pool 'lab' is running" in check["findings"][0]["message"]
    code, out = _cli("validate-fabric", "--pair", "gpu1:gpu1")
    assert code == 2 and "is not CLIENT:SERVER" in out
