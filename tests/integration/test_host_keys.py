"""SSH host keys against a real SSH server (the lab's EOS simulator on 127.0.0.1, netmiko/paramiko -> asyncssh).

- A key mismatch in *any* consulted known_hosts file fails, whichever order the files come in (paramiko's own
  loading lets the first file that names a host win).
- ``--insecure-no-host-key-check`` checks nothing and writes nothing: every known_hosts file is byte-identical
  afterwards, comments included, and no file appears.
- ``--accept-new-host-keys FILE`` appends the new key to FILE only, never rewrites a line of it, and a later
  changed key still fails.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import paramiko
import pytest
from switchlab import SwitchLab, switch_lab

from fabricd.errors import DriverError
from fabricd.platforms.access import Access
from fabricd.platforms.registry import make_driver
from fabricd.platforms.secrets import Secret

pytestmark = pytest.mark.integration
NAME = "leaf2-eos"
OTHER_KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl"


def access(lab: SwitchLab, files: tuple[Path, ...], *, verify: bool = True, accept_new: Path | None = None) -> Access:
    sw = lab.switches[NAME]
    return Access(
        NAME,
        sw.mgmt.host,
        sw.mgmt.port,
        sw.credentials.username,
        Secret(lab.password),
        files,
        verify_host_key=verify,
        accept_new_host_keys=accept_new,
    )


def connect(lab: SwitchLab, acc: Access) -> None:
    drv = make_driver(lab.switches[NAME], acc)
    drv.open()
    try:
        assert drv.run(["show version"])  # a real session
    finally:
        drv.close()


def host_name(lab: SwitchLab) -> str:
    return f"[127.0.0.1]:{lab.switches[NAME].mgmt.port}"


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_a_wrong_key_in_any_file_fails_whatever_the_order(tmp_path: Path) -> None:
    with switch_lab(tmp_path, [NAME]) as lab:
        wrong = tmp_path / "wrong_known_hosts"
        wrong.write_text(f"{host_name(lab)} {OTHER_KEY}\n")
        hashed = tmp_path / "hashed_known_hosts"  # `ssh-keygen -H` form: the name is only a salted hash
        hashed.write_text(f"{paramiko.HostKeys.hash_host(host_name(lab))} {OTHER_KEY}\n")
        connect(lab, access(lab, (lab.known_hosts,)))  # the lab's own file alone is right
        for files in ((lab.known_hosts, wrong), (wrong, lab.known_hosts), (lab.known_hosts, hashed)):
            with pytest.raises(DriverError) as info:
                connect(lab, access(lab, files))
            bad = files[1] if files[0] == lab.known_hosts else files[0]
            assert "does not match" in str(info.value) and str(bad) in str(info.value), str(info.value)
            assert "ssh-keygen -R" in (info.value.hint or "")


def test_unknown_host_is_refused_by_default(tmp_path: Path) -> None:
    with switch_lab(tmp_path, [NAME]) as lab:
        empty = tmp_path / "empty"
        empty.write_text("# nothing here\n")
        with pytest.raises(DriverError) as info:
            connect(lab, access(lab, (empty,)))
        assert "is unknown" in str(info.value) and "--accept-new-host-keys" in (info.value.hint or "")
        assert empty.read_text() == "# nothing here\n"


def test_opt_out_checks_nothing_and_writes_nothing(tmp_path: Path) -> None:
    with switch_lab(tmp_path, [NAME]) as lab:
        ssh = tmp_path / "home" / ".ssh"
        ssh.mkdir(parents=True)
        user = ssh / "known_hosts"
        user.write_text(f"# my hosts, kept by hand\n{host_name(lab)} {OTHER_KEY}\n")
        extra = tmp_path / "extra_known_hosts"
        extra.write_text("# extra\n")
        before = snapshot(tmp_path / "home") | {"extra": extra.read_bytes(), "lab": lab.known_hosts.read_bytes()}
        connect(lab, access(lab, (lab.known_hosts, extra, user), verify=False))
        connect(lab, access(lab, (), verify=False))
        after = snapshot(tmp_path / "home") | {"extra": extra.read_bytes(), "lab": lab.known_hosts.read_bytes()}
        assert after == before
        # and a later verified run still refuses the key that was never checked
        with pytest.raises(DriverError):
            connect(lab, access(lab, (user,)))


def test_accept_new_appends_only_and_a_changed_key_still_fails(tmp_path: Path) -> None:
    with switch_lab(tmp_path, [NAME]) as lab:
        tofu = tmp_path / "tofu_known_hosts"
        kept = f"# trusted on first use by fabricd\nother.example ssh-ed25519 {OTHER_KEY.split()[1]}\n"
        tofu.write_text(kept)
        connect(lab, access(lab, (), accept_new=tofu))
        text = tofu.read_text()
        assert text.startswith(kept) and text.count("\n") == kept.count("\n") + 1
        assert text.splitlines()[-1].startswith(host_name(lab) + " ")
        connect(lab, access(lab, (), accept_new=tofu))  # known now: nothing appended
        assert tofu.read_text() == text
        connect(lab, access(lab, (tofu,)))  # and it verifies without the option
        wrong = tmp_path / "wrong"
        wrong.write_text(f"{host_name(lab)} {OTHER_KEY}\n")
        with pytest.raises(DriverError) as info:
            connect(lab, access(lab, (wrong,), accept_new=tofu))
        assert "does not match" in str(info.value)
        assert tofu.read_text() == text


def test_the_opt_out_warns_on_every_run(tmp_path: Path) -> None:
    """The warning comes from the option itself, so every SSH command prints it, before any connection."""
    env = {**os.environ, "HOME": str(tmp_path), "FABRICD_STATE_DIR": str(tmp_path / "state")}
    for argv in (
        ["diff", "--device", NAME, "--insecure-no-host-key-check", "--output", "json"],
        ["audit", "switch", "--device", NAME, "--no-verify-host-key", "--output", "json"],
        ["audit", "host", "--hosts", "gpu1", "--insecure-no-host-key-check", "--output", "json"],
    ):
        res = subprocess.run(
            [sys.executable, "-m", "fabricd", *argv], capture_output=True, text=True, timeout=120, env=env, check=False
        )
        assert "host keys are NOT checked" in res.stderr, res.stderr
        assert "Traceback" not in res.stderr
    assert not (tmp_path / ".ssh").exists()
