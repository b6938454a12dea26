"""What ships to run `fabricd agent`: the systemd unit (systemd-analyze verify), the Kubernetes DaemonSet (the
Kubernetes schema, offline, via kubernetes-validate), the container recipe, and that every FABRICD_* variable they
set is one the agent command reads."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from fabricd.cli.main import load_command

REPO = Path(__file__).resolve().parents[2]
AGENT_DIR = REPO / "exporters" / "agent"
UNIT = AGENT_DIR / "fabricd-agent.service"
DAEMONSET = AGENT_DIR / "daemonset.yaml"
CONTAINERFILE = AGENT_DIR / "Containerfile"
KUBE_VERSION = "1.30.0"


def _agent_envvars() -> set[str]:
    agent = load_command("agent")  # commands load on first use: the root group's .commands starts empty
    out: set[str] = set()
    for p in agent.params:
        env = getattr(p, "envvar", None)
        if isinstance(env, str):
            out.add(env)
    return out | {"FABRICD_STATE_DIR", "FABRICD_APPLY_LOCK_DIR"}  # read by fabricd.settings and fabricd.hosts.lock


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze not installed (Debian systemd)")
@pytest.mark.integration  # runs systemd-analyze verify
def test_systemd_unit_verifies(tmp_path: Path) -> None:
    unit = UNIT.read_text()
    assert "ExecStart=/usr/local/bin/fabricd agent" in unit
    local = tmp_path / "fabricd-agent.service"
    local.write_text(unit.replace("/usr/local/bin/fabricd", str(Path(sys.executable).parent / "fabricd")))
    out = subprocess.run(
        ["systemd-analyze", "verify", str(local)], check=False, capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "fabricd-agent.service" not in out.stderr, out.stderr  # no warning about the unit itself


def test_daemonset_passes_the_kubernetes_schema() -> None:
    kv = pytest.importorskip("kubernetes_validate", reason="kubernetes-validate (dev extra) not installed")
    docs = [d for d in yaml.safe_load_all(DAEMONSET.read_text()) if d]
    assert [d["kind"] for d in docs] == ["DaemonSet"]
    for doc in docs:
        kv.validate(doc, KUBE_VERSION, strict=True)  # raises on any schema error or unknown field


def test_daemonset_schema_check_catches_mistakes() -> None:
    kv = pytest.importorskip("kubernetes_validate", reason="kubernetes-validate (dev extra) not installed")
    doc = yaml.safe_load(DAEMONSET.read_text())
    doc["spec"]["template"]["spec"]["containers"][0]["securityContext"]["capabilitiez"] = {}
    with pytest.raises(kv.ValidationError):
        kv.validate(doc, KUBE_VERSION, strict=True)


def test_daemonset_least_privilege_is_what_the_comment_says() -> None:
    doc = yaml.safe_load(DAEMONSET.read_text())
    pod = doc["spec"]["template"]["spec"]
    assert pod["hostNetwork"] is True and pod["automountServiceAccountToken"] is False
    (c,) = pod["containers"]
    sc = c["securityContext"]
    assert sc["privileged"] is False and sc["allowPrivilegeEscalation"] is False and sc["readOnlyRootFilesystem"]
    assert sc["capabilities"] == {"drop": ["ALL"], "add": ["NET_ADMIN"]}
    mounts = {m["mountPath"] for m in c["volumeMounts"]}
    assert {"/sys", "/sys/kernel/config", "/run/lock", "/var/lib/fabricd"} <= mounts
    host_paths = {v["hostPath"]["path"] for v in pod["volumes"] if "hostPath" in v}
    assert host_paths == {"/sys", "/sys/kernel/config", "/run/lock", "/var/lib/fabricd"}
    comment = DAEMONSET.read_text().split("apiVersion:")[0]
    for path in host_paths:
        assert f"hostPath {path}" in comment, f"the header comment does not say why {path} is mounted"


def test_every_variable_set_is_read_by_the_agent() -> None:
    known = _agent_envvars()
    doc = yaml.safe_load(DAEMONSET.read_text())
    set_in_ds = {e["name"] for e in doc["spec"]["template"]["spec"]["containers"][0]["env"]}
    set_in_unit = set(re.findall(r"^Environment=(FABRICD_\w+)=", UNIT.read_text(), re.M))
    set_in_image = set(re.findall(r"(FABRICD_\w+)=", CONTAINERFILE.read_text()))
    assert set_in_ds and set_in_unit and set_in_image
    assert (set_in_ds | set_in_unit | set_in_image) <= known, (set_in_ds | set_in_unit | set_in_image) - known
    assert 'ENTRYPOINT ["fabricd", "agent"]' in CONTAINERFILE.read_text()
