"""The use-case layer (fabricd.usecases.host): ``fabricd host apply`` and the agent's enforce reconcile apply a
host through the one function ``apply_host``; ``fabricd audit host``, the agent and serve's drift audit audit
through ``audit_host``.

Proved by patching each function once, in fabricd.usecases.host, with a spy that records the request and calls the
real function: both front ends run against the same fake /sys tree (fabricd_lab.fake_host, no mock of the
backends) and both calls go through the spy.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from fabricd import settings
from fabricd.cli.main import build_app
from fabricd.intent.host import HostPlan, host_intent
from fabricd.inventory import load_inventory
from fabricd.service.agent import Agent, AgentOptions
from fabricd.service.drift import DriftAuditor
from fabricd.usecases import host as host_use
from fabricd_lab.fake_host import build_fake_host, fake_nics_for


def _root(tmp_path: Path, name: str) -> Path:
    intent = host_intent(load_inventory(settings.default_inventory()).fabric, "gpu1")
    root: Path = build_fake_host(tmp_path / name, fake_nics_for(intent))
    return root


def _agent(root: Path, mode: str = "enforce") -> Agent:
    return Agent(
        AgentOptions(
            host="gpu1",
            source=str(settings.default_inventory()),
            mode=mode,  # type: ignore[arg-type]
            root=str(root),
            skip=frozenset({"netlink"}),
            watch_devices=False,
            lock_wait_s=5.0,
        )
    )


@pytest.fixture
def state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("FABRICD_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("FABRICD_APPLY_LOCK_DIR", str(tmp_path / "locks"))
    return tmp_path


def test_host_apply_and_the_agent_call_the_same_apply_host(state: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = host_use.apply_host
    calls: list[host_use.HostApplyRequest] = []

    def spy(request: host_use.HostApplyRequest) -> host_use.HostApplyResult:
        calls.append(request)
        return real(request)

    monkeypatch.setattr(host_use, "apply_host", spy)
    agent_root, cli_root = _root(state, "agent"), _root(state, "cli")

    rec = _agent(agent_root).reconcile("manual", "test")
    assert rec.result == "applied" and rec.applied_steps > 0, rec.as_dict()
    res = CliRunner().invoke(
        build_app(),
        [
            "host",
            "apply",
            str(settings.default_inventory()),
            "--host",
            "gpu1",
            "--root",
            str(cli_root),
            "--skip",
            "netlink",
            "--yes",
        ],
    )
    assert res.exit_code == 0, res.output

    assert [(c.holder, Path(c.target.root)) for c in calls] == [
        ("fabricd agent (enforce)", agent_root),
        ("fabricd host apply", cli_root),
    ]
    assert all(c.target.intent.host == "gpu1" and c.target.skip == {"netlink"} for c in calls)
    # both applied the same plan to identical trees: the second audit of each finds nothing left to do
    assert host_use.plan_host(calls[0].target).steps == host_use.plan_host(calls[1].target).steps == []


def test_audit_host_the_agent_and_serve_call_the_same_audit_host(state: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = host_use.audit_host
    roots: list[Path] = []

    def spy(target: host_use.HostTarget) -> object:
        roots.append(Path(target.root))
        return real(target)

    monkeypatch.setattr(host_use, "audit_host", spy)
    root = _root(state, "h")
    rec = _agent(root, mode="audit").reconcile("manual", "test")
    assert rec.result == "drift" and rec.report is not None
    res = CliRunner().invoke(
        build_app(),
        [
            "audit",
            "host",
            str(settings.default_inventory()),
            "--host",
            "gpu1",
            "--root",
            str(root),
            "--skip",
            "netlink",
            "--output",
            "json",
        ],
    )
    assert res.exit_code == 1, res.output  # findings: the fake tree starts at the driver's defaults
    fabric = load_inventory(settings.default_inventory()).fabric
    drift = DriftAuditor(fabric, [("gpu1", root)]).audit_host("gpu1", str(root))  # serve's drift audit
    assert drift.drift is True and drift.error is None
    assert roots == [root, root, root]


def test_apply_host_stops_when_not_confirmed_and_writes_nothing(state: Path) -> None:
    root = _root(state, "h")
    intent = host_intent(load_inventory(settings.default_inventory()).fabric, "gpu1")
    target = host_use.HostTarget(intent, root=root, skip=frozenset({"netlink"}))
    before = host_use.plan_host(target)
    seen: list[int] = []

    def refuse(plan: HostPlan) -> bool:
        seen.append(len(plan.steps))
        return False

    result = host_use.apply_host(host_use.HostApplyRequest(target, holder="test", confirm=refuse))
    assert not result.confirmed and result.report is None and seen == [len(before.steps)] and before.steps
    assert host_use.plan_host(target) == before
