"""Credential resolution (env, 0600 file with expanded paths, nothing read from a lab) and target selection."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fabricd.deploy.targets import plan_batches, select_targets
from fabricd.errors import DriverError, UsageError
from fabricd.inventory import load_inventory
from fabricd.model import Switch
from fabricd.platforms.access import resolve_access

LAB = Path(__file__).resolve().parents[2] / "inventory" / "lab"


def switch(**creds: object) -> Switch:
    return Switch.model_validate(
        {
            "name": "leaf2-eos",
            "platform": "arista_eos",
            "mgmt": {"host": "127.0.0.1", "port": 10224},
            "credentials": creds,
        }
    )


def test_env_then_file_and_nothing_of_the_lab(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sw = switch(password_env="LAB_PW")
    a = resolve_access(sw, environ={"LAB_PW": "s3cret"})
    assert a.password.reveal() == "s3cret" and "LAB_PW" in a.password_source and str(a.password) == "********"
    # a running lab's own state is never read: only what the inventory names counts
    monkeypatch.setenv("FABRICD_STATE_DIR", str(tmp_path))
    lab = tmp_path / "lab"
    lab.mkdir()
    pw = lab / "password"
    pw.write_text("from-lab\n")
    pw.chmod(0o600)
    (lab / "known_hosts").write_text("")
    (lab / "lab.json").write_text(
        json.dumps({"devices": [{"name": "leaf2-eos", "host": "127.0.0.1", "port": 10224, "password_file": str(pw)}]})
    )
    with pytest.raises(DriverError) as info:
        resolve_access(sw, environ={})
    assert "LAB_PW is not set" in info.value.message and "credentials.password_file" in (info.value.hint or "")
    # the lab inventory names the files: ${FABRICD_STATE_DIR} and ~ expand
    named = switch(password_file="${FABRICD_STATE_DIR}/lab/password", known_hosts="~/kh")
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "kh").write_text("")
    a = resolve_access(named, environ={})
    assert a.password.reveal() == "from-lab" and a.password_source == f"file {pw}"
    assert tmp_path / "kh" in a.known_hosts and lab / "known_hosts" not in a.known_hosts
    monkeypatch.delenv("FABRICD_STATE_DIR")
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg"))
    with pytest.raises(DriverError) as info:
        resolve_access(named, environ={})
    assert f"password file {tmp_path / 'xdg' / 'fabricd' / 'lab' / 'password'} cannot be read" in info.value.message
    with pytest.raises(DriverError) as info:
        resolve_access(switch(password_file="$NOT_SET_ANYWHERE/pw"), environ={})
    assert "credentials.password_file" in info.value.message and "${NOT_SET_ANYWHERE}" in info.value.message
    assert "export NOT_SET_ANYWHERE" in (info.value.hint or "")


def test_password_file_must_be_private(tmp_path: Path) -> None:
    f = tmp_path / "pw"
    f.write_text("filepw\n")
    f.chmod(0o644)
    with pytest.raises(DriverError) as info:
        resolve_access(switch(password_file=str(f)), environ={})
    assert "mode 0644, expected 0600" in info.value.message and "chmod 600" in (info.value.hint or "")
    f.chmod(0o600)
    assert resolve_access(switch(password_file=str(f)), environ={}).password.reveal() == "filepw"


def test_targets_and_batches() -> None:
    fabric = load_inventory(LAB).fabric
    assert [s.name for s in select_targets(fabric, groups=["spines"])] == ["spine1", "spine2"]
    assert [s.name for s in select_targets(fabric, ["leaf2-eos"], ["spines"])] == ["spine1", "spine2", "leaf2-eos"]
    with pytest.raises(UsageError) as info:
        select_targets(fabric, ["leaf2-eso"])
    assert "did you mean leaf2-eos" in (info.value.hint or "")
    with pytest.raises(UsageError):
        select_targets(fabric, groups=["nope"])
    batches = plan_batches(fabric.switches, "role")
    assert [(b, [s.name for s in m]) for b, m in batches] == [
        ("leaf", ["leaf1-sonic", "leaf2-eos", "leaf3-nxos", "leaf4-nvue"]),
        ("spine", ["spine1", "spine2"]),
    ]
    assert [b for b, _ in plan_batches(fabric.switches, "group")] == ["spines", "leaves"]
    assert plan_batches(fabric.switches, None)[0][0] == "all"
    with pytest.raises(UsageError):
        plan_batches(fabric.switches, "rack")
