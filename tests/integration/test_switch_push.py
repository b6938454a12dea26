"""Safe push over real SSH to the four simulated NOSes: push, idempotent re-push, drift, rollback, dry run,
rejected lines, dropped sessions, failing commits and commit-confirm expiry."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from switchlab import LEAVES, PORT_MTU, SwitchLab, switch_lab

from fabricd.deploy.pipeline import drift, push, rollback_one
from fabricd.deploy.result import TargetState
from fabricd_lab.faults import parse_fault
from fabricd_lab.latency import Latency

pytestmark = pytest.mark.integration

DRIFT = {
    "leaf1-sonic": ["sudo config interface mtu Ethernet0 1500"],
    "leaf2-eos": ["configure", "interface Ethernet1", "mtu 1500", "end"],
    "leaf3-nxos": ["configure terminal", "interface Ethernet1/1", "mtu 1500", "end"],
    "leaf4-nvue": ["nv set interface swp1 link mtu 1500", "nv config apply -y"],
}
"""A manual change on each platform: port MTU back to 1500 on the first host port."""

REJECT = {
    "leaf1-sonic": "WRED_PROFILE",
    "leaf2-eos": "random-detect ecn",
    "leaf3-nxos": "random-detect",
    "leaf4-nvue": "congestion-control",
}
"""A regex matching one config unit of each platform's rendered QoS config (the ECN/WRED part)."""


def _fingerprint(lab: SwitchLab, name: str) -> str:
    text = lab.running(name)
    return "\n".join(ln for ln in text.splitlines() if not ln.startswith(("!Time", "!Running configuration")))


def test_push_verify_and_idempotent_repush_all_platforms(tmp_path: Path) -> None:
    with switch_lab(tmp_path) as lab:
        before = {n: _fingerprint(lab, n) for n in LEAVES}
        report = push(lab.targets(), lab.candidates, lab.options, factory=lab.factory())
        for r in report.results:
            assert (r.failed, r.state, r.changed) == (False, TargetState.CHANGED, True), r
            assert r.diff, f"{r.target}: a change must come with its diff"
        for n in LEAVES:
            assert _fingerprint(lab, n) != before[n]
        for d in drift(lab.targets(), lab.candidates, lab.options, factory=lab.factory()):
            assert (d.failed, d.drift, d.changes) == (False, False, []), d
        sent = {n: lab.thread.call(lambda n=n: lab.thread.switch(n).lines_received) for n in LEAVES}
        after = {n: _fingerprint(lab, n) for n in LEAVES}
        again = push(lab.targets(), lab.candidates, lab.options, factory=lab.factory())
        for r in again.results:
            assert (r.failed, r.changed, r.state, r.phase) == (False, False, TargetState.UNCHANGED, "done"), r
        for n in LEAVES:
            assert _fingerprint(lab, n) == after[n]
            grown = lab.thread.call(lambda n=n: lab.thread.switch(n).lines_received) - sent[n]
            assert grown < 12, f"{n}: an unchanged re-push only logs in and reads ({grown} lines)"


@pytest.mark.parametrize("name", LEAVES)
def test_drift_detected_repaired_and_rollback(tmp_path: Path, name: str) -> None:
    with switch_lab(tmp_path, [name]) as lab:
        initial = _fingerprint(lab, name)
        assert not push(lab.targets(), lab.candidates, lab.options, factory=lab.factory()).failed
        pushed = _fingerprint(lab, name)
        drv = lab.driver(name)
        drv.open()
        try:
            for out in drv.run(DRIFT[name]).values():
                assert not drv.error_pattern.search(out), out
        finally:
            drv.close()
        (found,) = drift(lab.targets(), lab.candidates, lab.options, factory=lab.factory())
        assert found.drift and not found.failed
        assert any("mtu" in c for c in found.changes), found.changes
        assert PORT_MTU[name] in found.diff
        (fixed,) = push(lab.targets(), lab.candidates, lab.options, factory=lab.factory()).results
        assert fixed.changed and fixed.state is TargetState.CHANGED
        (clean,) = drift(lab.targets(), lab.candidates, lab.options, factory=lab.factory())
        assert not clean.drift
        assert _fingerprint(lab, name) == pushed
        # fabricd rollback returns to the checkpoint taken before the last push (the drifted state)
        res = rollback_one(lab.switches[name], lab.factory())
        assert res.changed and res.state is TargetState.ROLLED_BACK, res
        (back,) = drift(lab.targets(), lab.candidates, lab.options, factory=lab.factory())
        assert back.drift and any("mtu" in c for c in back.changes)
        assert _fingerprint(lab, name) not in (initial, pushed)


@pytest.mark.parametrize("name", LEAVES)
def test_dry_run_shows_diff_and_changes_nothing(tmp_path: Path, name: str) -> None:
    with switch_lab(tmp_path, [name]) as lab:
        before = _fingerprint(lab, name)
        (r,) = push(lab.targets(), lab.candidates, lab.push_options(dry_run=True), factory=lab.factory()).results
        assert r.dry_run and not r.changed and not r.failed and r.state is TargetState.UNCHANGED
        assert r.diff.strip()
        assert _fingerprint(lab, name) == before


@pytest.mark.parametrize("name", LEAVES)
def test_rejected_line_leaves_device_unchanged(tmp_path: Path, name: str) -> None:
    fault = parse_fault(f"{name}:reject-line={REJECT[name]}")
    with switch_lab(tmp_path, [name], [fault]) as lab:
        before = _fingerprint(lab, name)
        (r,) = push(lab.targets(), lab.candidates, lab.options, factory=lab.factory()).results
        assert r.failed and not r.changed
        assert r.state in (TargetState.UNTOUCHED, TargetState.ROLLED_BACK), r
        assert "rejected" in (r.error or "") or "Error" in (r.error or ""), r.error
        assert _fingerprint(lab, name) == before


@pytest.mark.parametrize("name", LEAVES)
def test_commit_failure_is_rolled_back(tmp_path: Path, name: str) -> None:
    with switch_lab(tmp_path, [name], [parse_fault(f"{name}:commit-fails")]) as lab:
        before = _fingerprint(lab, name)
        (r,) = push(lab.targets(), lab.candidates, lab.options, factory=lab.factory()).results
        assert r.failed and r.state in (TargetState.ROLLED_BACK, TargetState.UNTOUCHED), r
        assert _fingerprint(lab, name) == before


def _lines_of_clean_push(tmp_path: Path, name: str) -> int:
    with switch_lab(tmp_path / "probe", [name]) as lab:
        start = lab.thread.call(lambda: lab.thread.switch(name).lines_received)
        assert not push(lab.targets(), lab.candidates, lab.options, factory=lab.factory()).failed
        return lab.thread.call(lambda: lab.thread.switch(name).lines_received) - start


@pytest.mark.parametrize("name", LEAVES)
def test_disconnect_mid_push_ends_unchanged_or_rolled_back(tmp_path: Path, name: str) -> None:
    total = _lines_of_clean_push(tmp_path, name)
    assert total > 8
    for cut in sorted({3, total // 3, (2 * total) // 3, total - 2}):
        with switch_lab(tmp_path / f"cut{cut}", [name], [parse_fault(f"{name}:disconnect-after-lines={cut}")]) as lab:
            before = _fingerprint(lab, name)
            (r,) = push(lab.targets(), lab.candidates, lab.options, factory=lab.factory()).results
            now = _fingerprint(lab, name)
            (d,) = drift(lab.targets(), lab.candidates, lab.options, factory=lab.factory())
            if r.failed:
                assert r.state in (TargetState.UNTOUCHED, TargetState.ROLLED_BACK), (cut, r)
                assert now == before, f"{name}: cut at line {cut} left a changed device: {r}"
            else:
                assert r.state is TargetState.CHANGED and not d.drift, (cut, r)


@pytest.mark.parametrize("name", ["leaf2-eos", "leaf4-nvue"])
def test_commit_confirm_expiry_reverts(tmp_path: Path, name: str) -> None:
    with switch_lab(tmp_path, [name]) as lab:
        before = _fingerprint(lab, name)
        drv = lab.driver(name)
        assert drv.capabilities.commit_confirm
        drv.open()
        drv.checkpoint()
        drv.load_candidate(lab.candidates[name])
        drv.commit(confirm_in_s=1)
        assert drv.compare(drv.get_config(), lab.candidates[name]).empty, "applied while the timer runs"
        drv.close()  # the confirming session is lost: nobody confirms
        deadline = time.monotonic() + 5
        while _fingerprint(lab, name) != before and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _fingerprint(lab, name) == before


def test_auth_failure_and_slow_device(tmp_path: Path) -> None:
    faults = [parse_fault("leaf2-eos:auth-fail"), parse_fault("leaf3-nxos:slow-ms=30")]
    with switch_lab(tmp_path, ["leaf2-eos", "leaf3-nxos"], faults) as lab:
        report = push(lab.targets(), lab.candidates, lab.options, factory=lab.factory())
        eos, nxos = report.results
        assert eos.failed and eos.state is TargetState.UNTOUCHED and "authentication failed" in (eos.error or "")
        assert nxos.changed and not nxos.failed


def test_unknown_host_key_is_a_clear_error(tmp_path: Path) -> None:
    with switch_lab(tmp_path, ["leaf2-eos"]) as lab:
        sw = lab.switches["leaf2-eos"]
        empty = tmp_path / "empty_known_hosts"
        empty.write_text("")
        from fabricd.platforms.registry import make_driver

        drv = make_driver(sw, lab.access("leaf2-eos", known_hosts=(empty,)))
        with pytest.raises(Exception) as info:
            drv.open()
        text = str(info.value)
        assert f"host key of [127.0.0.1]:{sw.mgmt.port} is unknown" in text
        assert "known_hosts" in text and "ssh-keyscan" in getattr(info.value, "hint", "")
        wrong = tmp_path / "wrong_known_hosts"
        wrong.write_text(
            f"[127.0.0.1]:{sw.mgmt.port} ssh-ed25519 "
            "AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl\n"
        )
        drv = make_driver(sw, lab.access("leaf2-eos", known_hosts=(wrong,)))
        with pytest.raises(Exception) as info2:
            drv.open()
        assert "does not match the one in" in str(info2.value) and str(wrong) in str(info2.value)


def test_batches_stop_the_rollout_after_a_failing_batch(tmp_path: Path) -> None:
    names = ["leaf2-eos", "spine1"]
    with switch_lab(tmp_path, names, [parse_fault("leaf2-eos:commit-fails")]) as lab:
        report = push(lab.targets(), lab.candidates, lab.options, batch_key="role", factory=lab.factory())
        assert report.batches == ["leaf", "spine"] and report.stopped_after == "leaf"
        leaf, spine = report.results
        assert leaf.failed and leaf.batch == "leaf"
        assert spine.state is TargetState.SKIPPED and not spine.changed and "not attempted" in (spine.error or "")


@pytest.mark.parametrize("name", ["leaf2-eos", "leaf3-nxos"])
def test_session_leaves_config_mode_after_a_rejected_line(tmp_path: Path, name: str) -> None:
    with switch_lab(tmp_path, [name], [parse_fault(f"{name}:reject-line={REJECT[name]}")]) as lab:
        drv = lab.driver(name)
        drv.open()
        try:
            drv.checkpoint()
            with pytest.raises(Exception, match="rejected"):
                drv.load_candidate(lab.candidates[name])
                drv.commit()
            prompt = drv.conn.find_prompt()
            assert prompt.endswith("#") and ")" not in prompt, prompt
        finally:
            drv.close()


def test_latency_option_makes_commits_take_their_time(tmp_path: Path) -> None:
    """The simulators' optional latency (fabricd_lab.latency) is felt by a real push: EOS's two commits (``commit
    timer`` and the confirming ``configure session ... commit``) take commit_ms each, every line a round trip."""
    latency = Latency(rtt_s=0.02, commit_s=0.4)
    with switch_lab(tmp_path, ["leaf2-eos"], latency=latency) as lab:
        t0 = time.monotonic()
        report = push(lab.targets(), lab.candidates, lab.options, factory=lab.factory())
        took = time.monotonic() - t0
        (res,) = report.results
        assert res.changed and not res.failed, res.error
        assert took >= 2 * latency.commit_s + latency.rtt_s  # a lower bound only: sleeps, never CPU-dependent
