"""The host fan-out's SSH client (fabricd.deploy.hostfanout, paramiko) against real SSH servers on 127.0.0.1
(sshhosts.py): host keys follow the switch side's rule (fabricd.platforms.host_keys), so a host whose key is right in
one known_hosts file and wrong in another fails, naming the wrong file, whichever order the files come in; hashed
and ``@revoked`` entries count; an unknown host fails; the opt-out connects; a command that outlives its timeout
fails alone. No namespaces: the remote command is a shell line."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import asyncssh
import paramiko
import pytest
from sshhosts import SshHosts, client_identity

from fabricd.deploy.hostfanout import FanoutOptions, RunState, SshTarget, fanout
from fabricd.deploy.ssh_runner import SshRunner
from fabricd.traffic.oob import TrafficError

pytestmark = pytest.mark.integration

OTHER_KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl"
JSON_OK = "echo '{\"ok\": true}'"


@pytest.fixture()
def ssh_hosts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[SshHosts, Path, Path]]:
    """Servers ``good`` and ``split``; file A holds both right keys. HOME is empty (no ~/.ssh/known_hosts)."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    ident = tmp_path / "id"
    with SshHosts(client_identity(ident), tmp_path) as ssh:
        ssh.add("good", dict(os.environ))
        ssh.add("split", dict(os.environ))
        yield ssh, ident, ssh.known_hosts(tmp_path / "A")


def _targets(ssh: SshHosts) -> list[SshTarget]:
    return [SshTarget(name, "127.0.0.1", h.port) for name, h in ssh.hosts.items()]


def _opts(ident: Path, *known: Path, **kw: Any) -> FanoutOptions:
    return FanoutOptions(identity_files=(ident,), known_hosts=known, connect_timeout_s=5, **kw)


def _name(ssh: SshHosts, host: str) -> str:
    return f"[127.0.0.1]:{ssh.hosts[host].port}"


def test_a_wrong_key_in_any_file_fails_the_host_naming_that_file(
    ssh_hosts: tuple[SshHosts, Path, Path], tmp_path: Path
) -> None:
    ssh, ident, a = ssh_hosts
    b = tmp_path / "B"
    b.write_text(f"{_name(ssh, 'split')} {OTHER_KEY}\n")
    for files in ((a, b), (b, a)):  # A's right key does not outweigh B's wrong one, in either order
        report = fanout(_targets(ssh), lambda _h: JSON_OK, _opts(ident, *files))
        runs = {r.host: r for r in report.runs}
        assert runs["good"].state == RunState.OK and runs["good"].data == {"ok": True}
        split = runs["split"]
        assert split.state == RunState.FAILED and split.exit_code is None
        assert "host key refused (it does not match the one in " + str(b) in str(split.error)
        assert f"ssh-keygen -R '{_name(ssh, 'split')}' -f {b}" in str(split.error)
    assert [h for h, _ in ssh.commands] == ["good", "good"]  # nothing ran on the refused host

    runner = SshRunner(_targets(ssh)[1], _opts(ident, a, b))  # validate-fabric --via ssh: the same rule
    try:
        with pytest.raises(TrafficError, match=f"does not match the one in {b}"):
            runner.run(["true"], timeout_s=30)
    finally:
        runner.close()


def test_hashed_and_revoked_entries_count(ssh_hosts: tuple[SshHosts, Path, Path], tmp_path: Path) -> None:
    ssh, ident, a = ssh_hosts
    hashed = tmp_path / "hashed"  # ssh-keygen -H: the name is an HMAC, the key a wrong one
    hashed.write_text(f"{paramiko.HostKeys.hash_host(_name(ssh, 'split'))} {OTHER_KEY}\n")
    run = fanout(_targets(ssh)[1:], lambda _h: JSON_OK, _opts(ident, a, hashed)).runs[0]
    assert run.state == RunState.FAILED and f"does not match the one in {hashed}" in str(run.error)

    revoked = tmp_path / "revoked"  # the right key, marked @revoked: refused although A lists it
    pub = ssh.hosts["split"].host_key.export_public_key("openssh").decode().strip()
    revoked.write_text(f"@revoked * {pub}\n")
    run = fanout(_targets(ssh)[1:], lambda _h: JSON_OK, _opts(ident, a, revoked)).runs[0]
    assert run.state == RunState.FAILED and f"is marked @revoked in {revoked}" in str(run.error)


def test_unknown_host_fails_and_the_opt_out_connects(ssh_hosts: tuple[SshHosts, Path, Path], tmp_path: Path) -> None:
    ssh, ident, _a = ssh_hosts
    empty = tmp_path / "empty"
    empty.write_text("# nothing trusted\n")
    report = fanout(_targets(ssh), lambda _h: JSON_OK, _opts(ident, empty))
    assert report.count(RunState.FAILED) == 2
    assert all("host key refused (unknown" in str(r.error) and str(empty) in str(r.error) for r in report.runs)
    assert not ssh.commands

    report = fanout(_targets(ssh), lambda _h: JSON_OK, _opts(ident, empty, verify_host_key=False))
    assert report.count(RunState.OK) == 2
    assert empty.read_text() == "# nothing trusted\n" and not (tmp_path / "home").exists()  # nothing written


def test_a_command_past_its_timeout_fails_alone(ssh_hosts: tuple[SshHosts, Path, Path]) -> None:
    ssh, ident, a = ssh_hosts
    report = fanout(
        _targets(ssh), lambda h: "sleep 5" if h == "split" else JSON_OK, _opts(ident, a, command_timeout_s=1.0)
    )
    runs = {r.host: r for r in report.runs}
    assert runs["good"].state == RunState.OK
    assert runs["split"].state == RunState.FAILED and "still ran after 1 s" in str(runs["split"].error)
    assert 1.0 <= runs["split"].duration_s < 4.0


_MUTE_RUN = """
import socket, sys
from fabricd.deploy.hostfanout import FanoutOptions, SshTarget, fanout
mute = socket.socket()
mute.bind(("127.0.0.1", 0))
mute.listen()
target = SshTarget("mute", "127.0.0.1", mute.getsockname()[1])
(run,) = fanout([target], lambda _h: "true", FanoutOptions(known_hosts=(), connect_timeout_s=1)).runs
print(run.state.value, run.error)
"""


def test_a_port_that_speaks_no_ssh_and_a_wrong_key_fail_with_their_reason(
    ssh_hosts: tuple[SshHosts, Path, Path], tmp_path: Path
) -> None:
    ssh, _ident, a = ssh_hosts
    other = tmp_path / "other_id"  # a key the servers do not accept
    other.write_bytes(asyncssh.generate_private_key("ssh-ed25519").export_private_key())
    other.chmod(0o600)
    run = fanout(_targets(ssh)[:1], lambda _h: JSON_OK, _opts(other, a, username="ops")).runs[0]
    assert run.state == RunState.FAILED and "SSH authentication failed (publickey, as ops)" in str(run.error)
    # in a fresh interpreter with logging unconfigured: paramiko's transport thread logs a traceback at ERROR,
    # which Python's last-resort handler printed on stderr beside fabricd's own error
    res = subprocess.run(
        [sys.executable, "-c", _MUTE_RUN],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith("failed ") and "no SSH handshake within 1 s (the connect timeout)" in res.stdout
    assert res.stderr == ""
