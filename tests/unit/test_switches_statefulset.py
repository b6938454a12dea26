"""The sharded switch exporter's Kubernetes StatefulSet (exporters/switches/statefulset.yaml), checked like the
agent's DaemonSet: the Kubernetes schema (offline, kubernetes-validate, strict), every FABRICD_* variable it sets is
one `fabricd export switches` (or fabricd.settings) reads, and its pods' hostnames give shards 0..N-1 of N."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from fabricd.cli.main import load_command
from fabricd.cli.shard_opts import resolve_shard
from fabricd.inventory.shard import Shard

REPO = Path(__file__).resolve().parents[2]
MANIFEST = REPO / "exporters" / "switches" / "statefulset.yaml"
KUBE_VERSION = "1.30.0"


def _docs() -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(MANIFEST.read_text()) if d]


def _statefulset() -> dict[str, Any]:
    (sts,) = [d for d in _docs() if d["kind"] == "StatefulSet"]
    return sts


def _export_switches_envvars() -> set[str]:
    export = load_command("export")
    cmd = export.commands["switches"]  # type: ignore[attr-defined]
    out = {p.envvar for p in cmd.params if isinstance(getattr(p, "envvar", None), str)}
    return out | {"FABRICD_STATE_DIR"}  # read by fabricd.settings


def test_manifest_passes_the_kubernetes_schema() -> None:
    kv = pytest.importorskip("kubernetes_validate", reason="kubernetes-validate (dev extra) not installed")
    docs = _docs()
    assert [d["kind"] for d in docs] == ["Service", "StatefulSet"]
    for doc in docs:
        kv.validate(doc, KUBE_VERSION, strict=True)


def test_schema_check_catches_mistakes() -> None:
    kv = pytest.importorskip("kubernetes_validate", reason="kubernetes-validate (dev extra) not installed")
    doc = _statefulset()
    doc["spec"]["replica"] = 2
    with pytest.raises(kv.ValidationError):
        kv.validate(doc, KUBE_VERSION, strict=True)


def test_every_variable_set_is_read_by_export_switches() -> None:
    (c,) = _statefulset()["spec"]["template"]["spec"]["containers"]
    assert c["command"] == ["fabricd"] and c["args"][:2] == ["export", "switches"]
    set_vars = {e["name"] for e in c["env"] if e["name"].startswith("FABRICD_")}
    assert "FABRICD_SHARD_FROM_HOSTNAME" in set_vars
    assert set_vars <= _export_switches_envvars(), set_vars - _export_switches_envvars()


def test_pod_hostnames_give_every_shard_once() -> None:
    sts = _statefulset()
    replicas = sts["spec"]["replicas"]
    (c,) = sts["spec"]["template"]["spec"]["containers"]
    n = int(next(e["value"] for e in c["env"] if e["name"] == "FABRICD_SHARD_FROM_HOSTNAME"))
    assert n == replicas, "FABRICD_SHARD_FROM_HOSTNAME must equal spec.replicas"
    name = sts["metadata"]["name"]
    shards = [resolve_shard(None, n, f"{name}-{k}") for k in range(replicas)]  # StatefulSet pod names
    assert shards == [Shard(k, n) for k in range(n)]


def test_least_privilege() -> None:
    pod = _statefulset()["spec"]["template"]["spec"]
    assert "hostNetwork" not in pod and pod["automountServiceAccountToken"] is False
    assert pod["securityContext"]["runAsNonRoot"] is True
    (c,) = pod["containers"]
    sc = c["securityContext"]
    assert sc["capabilities"] == {"drop": ["ALL"]} and sc["readOnlyRootFilesystem"] is True
    assert not [v for v in pod["volumes"] if "hostPath" in v]
