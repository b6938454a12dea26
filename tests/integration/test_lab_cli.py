"""``fabricd lab up/status/down`` as a user runs them (a detached daemon), with push/diff/rollback through the CLI.

The lab inventory is copied with its six management ports moved to free ephemeral ports, and FABRICD_STATE_DIR points
into the test's temp dir, so the test never touches a lab someone else runs.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import stat
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from labports import move_lab_ports

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
FABRICD = [sys.executable, "-c", "from fabricd.cli.main import main; main()"]


def _inventory(tmp: Path, reserve: Callable[[], int]) -> Path:
    """A copy of inventory/lab on ports ``reserve`` holds until the test ends (the ``reserve_port`` fixture), so no
    other process takes one before the daemon binds it."""
    inv = tmp / "inv"
    shutil.copytree(REPO / "inventory" / "lab", inv)
    move_lab_ports(inv, reserve)
    return inv


def _run(args: list[str], env: dict[str, str], ok: tuple[int, ...] = (0,)) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([*FABRICD, *args], env=env, capture_output=True, text=True, timeout=180, check=False)
    assert proc.returncode in ok, f"fabricd {' '.join(args)} -> {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    return proc


def test_lab_up_push_diff_rollback_down(tmp_path: Path, reserve_port: Callable[[], int]) -> None:
    inv = _inventory(tmp_path, reserve_port)
    env = {k: v for k, v in os.environ.items() if k != "FABRICD_LAB_PASSWORD"}
    env.update(FABRICD_STATE_DIR=str(tmp_path / "state"), COLUMNS="200", HOME=str(tmp_path))
    up = _run(["lab", "up", str(inv), "--latency", "rtt_ms=2", "--output", "json"], env)
    try:
        st = json.loads(up.stdout)
        assert st["running"] and len(st["devices"]) == 6
        spec = json.loads((tmp_path / "state" / "lab" / "spec.json").read_text())
        assert {d["latency"] for d in spec["devices"]} == {"rtt_ms=2,command_ms=0,show_ms=0,commit_ms=0"}
        pid = st["pid"]
        status = json.loads(_run(["lab", "status", "--output", "json"], env).stdout)
        by_name = {d["name"]: d for d in status["devices"]}
        assert by_name["leaf2-eos"]["platform"] == "arista_eos" and by_name["leaf2-eos"]["username"] == "admin"
        pw = Path(by_name["spine1"]["password_file"])
        assert pw == tmp_path / "state" / "lab" / "password"  # the file the lab inventory names, expanded
        assert stat.S_IMODE(pw.stat().st_mode) == 0o600
        assert stat.S_IMODE(pw.parent.stat().st_mode) == 0o700
        kh_file = Path(by_name["leaf4-nvue"]["known_hosts"])
        assert kh_file == tmp_path / "state" / "lab" / "known_hosts"
        kh = kh_file.read_text()
        assert f"[127.0.0.1]:{by_name['leaf4-nvue']['port']} ssh-ed25519 " in kh

        # fabricd reads nothing of the lab's: the inventory's credentials.password_file and known_hosts name the
        # files `lab up` wrote; host keys stay verified
        first = json.loads(_run(["push", str(inv), "--yes", "--output", "json"], env).stdout)
        assert [r["state"] for r in first["results"]] == ["changed"] * 6, first
        second = _run(["push", str(inv), "--yes"], env)
        assert "nothing to change: all 6 switches already match the intent" in second.stdout
        _run(["diff", str(inv)], env)

        back = json.loads(_run(["rollback", str(inv), "--device", "leaf3-nxos", "--output", "json"], env).stdout)
        assert back["results"][0]["state"] == "rolled_back"
        drift = _run(["diff", str(inv), "--device", "leaf3-nxos", "--output", "json"], env, ok=(1,))
        assert json.loads(drift.stdout)["drift"] == 1

        dry = json.loads(
            _run(["push", str(inv), "--dry-run", "--device", "leaf3-nxos", "--output", "json"], env).stdout
        )
        assert dry["dry_run"] and dry["results"][0]["diff"]
        _run(["diff", str(inv), "--device", "leaf3-nxos"], env, ok=(1,))

        _run(["lab", "drive", "leaf1-sonic", "traffic", "--port", "Ethernet0", "--packets", "42"], env)
        bad = _run(["lab", "drive", "leaf1-sonic", "traffic", "--port", "Ethernet99"], env, ok=(2,))
        assert "has no port 'Ethernet99'" in bad.stderr

        again = _run(["lab", "up", str(inv)], env, ok=(2,))
        assert "already running" in again.stderr
    finally:
        down = json.loads(_run(["lab", "down", "--output", "json"], env).stdout)
    assert down["stopped"] and down["pid"] == pid
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    assert not json.loads(_run(["lab", "status", "--output", "json"], env).stdout)["running"]
    assert not (tmp_path / "state" / "lab" / "password").exists()


def test_push_without_password_or_lab_is_a_clear_error(tmp_path: Path, reserve_port: Callable[[], int]) -> None:
    inv = _inventory(tmp_path, reserve_port)
    env = {k: v for k, v in os.environ.items() if k != "FABRICD_LAB_PASSWORD"}
    env.update(FABRICD_STATE_DIR=str(tmp_path / "state"), HOME=str(tmp_path))
    res = _run(["push", str(inv), "--yes", "--device", "leaf2-eos", "--output", "json"], env, ok=(3,))
    (r,) = json.loads(res.stdout)["results"]
    assert r["failed"] and r["state"] == "untouched"
    assert f"password file {tmp_path / 'state' / 'lab' / 'password'} cannot be read" in r["error"], r
    bad = _run(["lab", "up", str(inv), "--fault", "leaf9:auth-fail"], env, ok=(2,))
    assert "no switch named 'leaf9'" in bad.stderr
    bad = _run(["lab", "up", str(inv), "--fault", "leaf2-eos:slow-ms=fast"], env, ok=(2,))
    assert "expects a whole number" in bad.stderr
    bad = _run(["lab", "up", str(inv), "--latency", "commit=2s"], env, ok=(2,))
    assert "'commit=2s' is not NAME=MS" in bad.stderr and "commit_ms" in bad.stderr


def test_lab_up_writes_only_its_own_files_and_prints_the_export_line(
    tmp_path: Path, reserve_port: Callable[[], int]
) -> None:
    """An inventory that names a known_hosts file the lab did not write (here a stand-in for ~/.ssh/known_hosts)
    is refused before anything starts, and the file is left as it was; one that reads the password from an
    environment variable gets the export line."""
    inv = _inventory(tmp_path, reserve_port)
    env = {**os.environ, "FABRICD_STATE_DIR": str(tmp_path / "state"), "HOME": str(tmp_path)}
    theirs = tmp_path / "user_known_hosts"
    theirs.write_text(
        "switch.example ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl\n"
    )
    groups = inv / "groups.yml"
    original = groups.read_text()
    groups.write_text(original.replace("known_hosts: ${FABRICD_STATE_DIR}/lab/known_hosts", f"known_hosts: {theirs}"))
    bad = _run(["lab", "up", str(inv)], env, ok=(2,))
    assert f"names {theirs} for the lab's credentials, and it exists already" in bad.stderr, bad.stderr
    assert "Traceback" not in bad.stderr
    assert theirs.read_text().startswith("switch.example ssh-ed25519 ")
    assert not json.loads(_run(["lab", "status", "--output", "json"], env).stdout)["running"]

    groups.write_text(original.replace("password_file: ${FABRICD_STATE_DIR}/lab/password", "password_env: LAB_PW"))
    up = _run(["lab", "up", str(inv)], env)
    try:
        assert f'export LAB_PW="$(cat {tmp_path / "state" / "lab" / "password"})"' in up.stdout, up.stdout
    finally:
        _run(["lab", "down"], env)


def test_lab_up_names_a_gnmi_port_already_in_use(tmp_path: Path, reserve_port: Callable[[], int]) -> None:
    """A gNMI port someone else holds stops `lab up` with the switch and the port named, before the daemon starts."""
    inv = _inventory(tmp_path, reserve_port)
    first = re.search(r"telemetry: \{gnmi: \{port: (\d+)\}\}", (inv / "switches.yml").read_text())
    assert first is not None, "the lab inventory pins no gNMI port"
    env = {k: v for k, v in os.environ.items() if k != "FABRICD_LAB_PASSWORD"}
    env.update(FABRICD_STATE_DIR=str(tmp_path / "state"), COLUMNS="200", HOME=str(tmp_path))
    with socket.socket() as holder:  # binds beside this test's reservation (SO_REUSEADDR), then listens: in use
        holder.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        holder.bind(("127.0.0.1", int(first.group(1))))
        holder.listen()
        up = _run(["lab", "up", str(inv)], env, ok=(1, 2))
    out = up.stdout + up.stderr
    assert f"gNMI port 127.0.0.1:{first.group(1)} is already in use" in out, out
    assert "Traceback" not in out, out
    _run(["lab", "down"], env)


def test_a_gnmi_port_taken_after_the_check_is_a_located_os_error() -> None:
    """The race `lab up`'s check cannot close (another process binds the port between the check and the daemon's
    bind): grpcio raises RuntimeError on a failed bind, which the daemon did not catch, so it died with 'Event loop
    is closed' as the last line of its log. serve() now raises the OSError the daemon reports, naming the port."""
    import asyncio

    from fabricd.model import Platform
    from fabricd_lab.device import DeviceSpec
    from fabricd_lab.gnmi import generate_tls, serve
    from fabricd_lab.runtime import switch_class

    spec = DeviceSpec(
        name="leaf1",
        platform=Platform.SONIC,
        host="127.0.0.1",
        port=0,
        username="admin",
        password="pw",
        ports=(("Ethernet0", 100),),
    )
    switch = switch_class(spec.platform)(spec)
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        with pytest.raises(OSError, match=f"leaf1: cannot listen for gNMI on 127.0.0.1:{port}"):
            asyncio.run(serve(switch, generate_tls(), password="pw", port=port))
