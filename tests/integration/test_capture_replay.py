"""``fabricd capture`` of each lab simulator over real SSH (netmiko -> asyncssh, host keys verified), then the replay
folder read by the switch exporter and by ``fabricd audit switch`` gives the same metrics and the same findings as
the live run. Counters are driven into the simulators' model first (pause, traffic, ECN marks, drops, a storm
detected and restored) and the running config is hand-edited (PFC off on one port, MTU on another), so both sides
have something to agree on. The CLI reads the folder through ``--replay`` too."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from metrics_text import Metrics
from switchlab import LEAVES, SwitchLab, lab_fabric, switch_lab, write_lab_credentials
from typer.testing import CliRunner

from fabricd.audit.report import AuditReport
from fabricd.audit.switch import audit_switch, replay_factory
from fabricd.capture import capture_all, plan
from fabricd.collectors.core import Registry
from fabricd.collectors.switch import SwitchCollector, SwitchPoller, SwitchTarget, replay_targets
from fabricd.deploy.pipeline import push
from fabricd.errors import UsageError
from fabricd.readers.switch.replay import ReplayFolder

pytestmark = pytest.mark.integration
REPO = Path(__file__).resolve().parents[2]

TAMPER = {
    "leaf1-sonic": ["sudo config interface mtu Ethernet8 1500"],
    "leaf2-eos": ["configure", "interface Ethernet1", "priority-flow-control off", "end"],
    "leaf3-nxos": ["configure terminal", "interface Ethernet1/2", "mtu 1500", "end"],
    "leaf4-nvue": ["nv unset interface swp1 qos pfc", "nv config apply -y"],
}
VERSIONS = {
    "leaf1-sonic": "SONiC.202411.fabricd-lab",
    "leaf2-eos": "4.31.2F",
    "leaf3-nxos": "10.3(4a)",
    "leaf4-nvue": "Cumulus Linux 5.11.0",
}
"""What each simulator's version command reports (lab/fabricd_lab/<platform>.py), as the manifest must record it."""


def _series(text: str) -> dict[str, float]:
    """Samples by series, without the timing ones (they differ from run to run by nature)."""
    return {k: v for k, v in Metrics(text).items() if "_duration_seconds" not in k and "_timestamp_seconds" not in k}


def _findings(report: AuditReport) -> list[tuple[str, str, list[tuple[str, str, str, str]]]]:
    return [
        (c.code, c.status.value, [(f.object, f.message, str(f.expected), str(f.got)) for f in c.findings])
        for c in report.checks
    ]


def _prepare(lab: SwitchLab) -> None:
    report = push(lab.targets(), lab.candidates, lab.options, factory=lab.factory())
    assert not report.failed, [r.error for r in report.failed]
    for name in LEAVES:
        drv = lab.driver(name)
        drv.open()
        try:
            for out in drv.run(TAMPER[name]).values():
                assert not drv.error_pattern.search(out), out
        finally:
            drv.close()
        sim = lab.thread.switch(name)
        port = sim.port_names[0]

        def drive(c=sim.counters, p=port) -> None:  # type: ignore[no-untyped-def]
            c.pause(p, 3, 900, direction="rx")
            c.traffic(p, 3, 1000, 4096)
            c.ecn_mark(p, 3, 77, 4096)
            c.drop(p, 0, 5, 1500)

        lab.thread.call(drive)
    counters = {n: lab.thread.switch(n).counters for n in LEAVES}
    second = {n: lab.thread.switch(n).port_names[1] for n in LEAVES}
    for n in LEAVES:
        lab.thread.call(lambda c=counters[n], p=second[n]: c.storm_start(p, 3))
    time.sleep(0.35)  # > detection (200 ms on every platform in inventory/lab)
    for n in LEAVES:
        lab.thread.call(lambda c=counters[n], p=second[n]: c.storm_stop(p, 3))
    time.sleep(0.35)  # > restoration: the storm is over, the counters stand still


def _live_exposition(lab: SwitchLab) -> str:
    def factory(target: SwitchTarget):  # type: ignore[no-untyped-def]
        drv = lab.driver(target.name)
        drv.open()
        return drv

    targets = [
        SwitchTarget(n, lab.switches[n].platform.value, tuple(p.name for p in lab.switches[n].ports)) for n in LEAVES
    ]
    poller = SwitchPoller(targets, factory, concurrency=4, timeout_s=120)
    try:
        return Registry([SwitchCollector(poller)]).exposition()
    finally:
        poller.close()


def test_capture_then_replay_gives_the_live_metrics_and_findings(tmp_path: Path) -> None:
    out = tmp_path / "cap"
    with switch_lab(tmp_path / "lab") as lab:
        _prepare(lab)
        live_text = _live_exposition(lab)
        live_reports = {n: audit_switch(lab_fabric(), lab.switches[n], lab.factory()) for n in LEAVES}
        seen: list[str] = []
        results = capture_all(
            lab.targets(), out, lambda sw: lab.driver(sw.name), concurrency=4, on_result=lambda r: seen.append(r.device)
        )
        sessions = {n: lab.thread.call(lambda n=n: lab.thread.switch(n).sessions) for n in LEAVES}
    assert sorted(seen) == sorted(LEAVES)
    assert all(r.ok for r in results), [r.error for r in results]

    # the folder: manifests with NOS version and time, one file per planned command
    index = json.loads((out / "manifest.json").read_text())
    assert index["format"] == "fabricd-capture/1" and [d["device"] for d in index["devices"]] == sorted(LEAVES)
    folder = ReplayFolder(out)
    for r in results:
        dev = folder.device(r.device)
        assert dev.manifest.nos_version == VERSIONS[r.device] == r.nos_version
        assert dev.manifest.captured_at.endswith("+00:00")
        planned = {s.command for s in plan(lab_fabric().switch(r.device))}  # type: ignore[arg-type]
        assert {c.command for c in dev.manifest.commands} == planned
        for c in dev.manifest.commands:
            if c.status == "ok":
                assert (dev.folder / str(c.file)).is_file()
        assert dev.get_config().strip(), r.device
    # the lab's NX-OS has no `show interface counters errors` (optional): kept as printed, with a note
    (errors,) = [c for c in folder.device("leaf3-nxos").manifest.commands if c.role == "errors"]
    assert errors.status == "ok" and errors.note and "refused" in errors.note
    assert all(v >= 1 for v in sessions.values())

    # the exporter on the replay: the same series and values as live
    targets, factory = replay_targets(out)
    poller = SwitchPoller(targets, factory)
    try:
        replay_text = Registry([SwitchCollector(poller)]).exposition()
    finally:
        poller.close()
    live, replay = _series(live_text), _series(replay_text)
    assert 'fabricd_scrape_collector_success{collector="switch"}' in live
    assert live['fabricd_scrape_collector_success{collector="switch"}'] == 1, live_text[:3000]
    assert replay == live
    assert sum(1 for s in live if s.startswith("fabricd_switch_pfcwd_detected_total")) >= 4

    # the audit on the replay: the same checks, statuses and findings as live
    fabric = lab_fabric()
    rfactory = replay_factory(out)
    for name in LEAVES:
        sw = fabric.switch(name)
        assert sw is not None
        replayed = audit_switch(fabric, sw, rfactory)
        assert _findings(replayed) == _findings(live_reports[name]), name
        assert not replayed.compliant, f"{name}: the hand edit is a finding in both"

    # the CLI: export --replay --once and audit switch --replay (inventory/lab: no switch is dialled)
    from fabricd.cli.main import build_app

    runner = CliRunner()
    res = runner.invoke(build_app(), ["export", "switches", "--replay", str(out), "--once"])
    assert res.exit_code == 0, res.output
    assert _series(res.stdout) == live
    res = runner.invoke(
        build_app(),
        [
            "audit",
            "switch",
            str(REPO / "inventory" / "lab"),
            "--device",
            "leaf3-nxos",
            "--replay",
            str(out),
            "--output",
            "json",
        ],
    )
    assert res.exit_code == 1, res.output  # findings
    data = json.loads(res.stdout)
    assert [(c["code"], c["status"]) for c in data["checks"]] == [
        (c.code, c.status.value) for c in live_reports["leaf3-nxos"].checks
    ]
    res = runner.invoke(build_app(), ["export", "switches", "--replay", str(out), "--once", "--device", "nope"])
    assert isinstance(res.exception, UsageError) and res.exception.exit_code == 2  # the entry point's exit 2


def test_unknown_host_key_fails_that_device_only(tmp_path: Path) -> None:
    """Host keys are verified as on every SSH command: a switch whose key is not in known_hosts is not captured
    (its error names the key), the other one is."""
    from fabricd.platforms.base import DriverOptions
    from fabricd.platforms.registry import make_driver

    empty = tmp_path / "empty_known_hosts"
    empty.write_text("")
    with switch_lab(tmp_path / "lab", ["leaf1-sonic", "leaf3-nxos"]) as lab:

        def factory(sw):  # type: ignore[no-untyped-def]
            if sw.name == "leaf3-nxos":
                return make_driver(
                    lab.switches[sw.name],
                    lab.access(sw.name, known_hosts=(empty,)),
                    DriverOptions(read_timeout_s=20.0, conn_timeout_s=10.0),
                )
            return lab.driver(sw.name)

        results = capture_all(lab.targets(), tmp_path / "cap", factory)
    by = {r.device: r for r in results}
    assert by["leaf1-sonic"].ok and by["leaf1-sonic"].folder is not None
    assert not by["leaf3-nxos"].ok and by["leaf3-nxos"].folder is None
    assert "host key" in str(by["leaf3-nxos"].error)
    index = json.loads((tmp_path / "cap" / "manifest.json").read_text())
    assert [d["device"] for d in index["devices"]] == ["leaf1-sonic"]


def test_cli_exit_3_when_a_switch_cannot_be_reached(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reserve_port: Callable[[], int]
) -> None:
    """`fabricd capture` on an inventory whose switch listens nowhere: per-device result, exit 3 (CLI contract)."""
    import shutil

    from fabricd.cli.main import build_app

    inv = tmp_path / "inv"
    shutil.copytree(REPO / "inventory" / "lab", inv)
    port = reserve_port()  # nothing listens there
    text = (inv / "switches.yml").read_text()
    (inv / "switches.yml").write_text(text.replace("port: 10221}", f"port: {port}}}"))
    monkeypatch.setenv("FABRICD_STATE_DIR", str(tmp_path / "state"))
    res = CliRunner().invoke(
        build_app(),
        ["capture", str(inv), "--device", "leaf1-sonic", "--out", str(tmp_path / "cap"), "--output", "json"],
    )
    assert res.exit_code == 3, res.output
    data = json.loads(res.stdout)
    assert data["failed"] == 1 and data["results"][0]["device"] == "leaf1-sonic" and data["results"][0]["error"]


def test_cli_captures_every_switch_of_an_inventory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`fabricd capture INVENTORY --out DIR` as a user runs it: every switch, in parallel, host keys checked against
    the given known_hosts, exit 0, a JSON result per device; the folder replays through `export switches`."""
    import re
    import shutil

    from fabricd.cli.main import build_app

    with switch_lab(tmp_path / "lab") as lab:
        inv = tmp_path / "inv"
        shutil.copytree(REPO / "inventory" / "lab", inv)
        ports = {n: lab.switches[n].mgmt.port for n in LEAVES}
        text = (inv / "switches.yml").read_text()
        for name, port in ports.items():  # point each leaf at its simulator; the spines are not captured
            text = re.sub(
                rf"(name: {name}\n(?:.*\n)*?\s+mgmt: {{host: 127.0.0.1, port: )\d+", rf"\g<1>{port}", text, count=1
            )
        (inv / "switches.yml").write_text(text)
        write_lab_credentials(tmp_path / "state", lab.password)  # the files inventory/lab names
        monkeypatch.setenv("FABRICD_STATE_DIR", str(tmp_path / "state"))
        args = [
            "capture",
            str(inv),
            "--out",
            str(tmp_path / "cap"),
            "--known-hosts",
            str(lab.known_hosts),
            "--concurrency",
            "4",
            "--output",
            "json",
        ]
        for name in LEAVES:
            args += ["--device", name]
        res = CliRunner().invoke(build_app(), args)
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert [r["device"] for r in data["results"]] == list(LEAVES) and data["failed"] == 0
    assert {r["device"]: r["nos_version"] for r in data["results"]} == VERSIONS
    res = CliRunner().invoke(build_app(), ["export", "switches", "--replay", str(tmp_path / "cap"), "--once"])
    assert res.exit_code == 0, res.output
    assert _series(res.stdout)['fabricd_scrape_collector_success{collector="switch"}'] == 1
