"""The gNMI collector against the lab's gNMI targets over loopback TLS: for every mapped NOS (SONiC, EOS, NX-OS,
Cumulus), one lab state behind both transports gives the same series (names, labels and values), an injected storm
shows the same over SSH and gNMI, and a stalled stream (fault ``gnmi-stall``, SONiC's sonic-buildimage#22201) is
reported stale and recovers by re-subscribing."""

from __future__ import annotations

import dataclasses
import gc
import logging
import secrets
import threading
import time
from pathlib import Path

import pytest

from fabricd.collectors.core import Registry
from fabricd.collectors.gnmi import GnmiEndpoint, GnmiPoller, GnmiStreamCollector
from fabricd.collectors.switch import Backoff, SwitchCollector, SwitchPoller, SwitchTarget
from fabricd.inventory import load_inventory

runtime = pytest.importorskip("fabricd_lab.runtime", reason="the switch lab (lab/fabricd_lab) is not in this checkout")
from fabricd.nos.gnmi_registry import table_for  # noqa: E402
from fabricd.platforms.access import Access  # noqa: E402
from fabricd.platforms.base import DriverOptions  # noqa: E402
from fabricd.platforms.registry import make_driver  # noqa: E402
from fabricd.platforms.secrets import Secret  # noqa: E402
from fabricd_lab.counters import WatchdogSettings  # noqa: E402
from fabricd_lab.faults import Fault, FaultKind  # noqa: E402
from fabricd_lab.gnmi import generate_tls  # noqa: E402

pytestmark = pytest.mark.integration
REPO = Path(__file__).resolve().parents[2]
SWITCHES = ("spine1", "leaf1-sonic")
HEALTH = {
    "fabricd_switch_last_success_timestamp_seconds",
    "fabricd_switch_connection_attempts_total",
    "fabricd_switch_poll_duration_seconds",
}
"""Series whose *values* depend on the transport (when, how long, how many sessions); their names and labels don't."""


def _lab(tmp_path: Path, faults: tuple[Fault, ...] = (), names: tuple[str, ...] = SWITCHES):  # type: ignore[no-untyped-def]
    fabric = load_inventory(REPO / "inventory" / "lab").fabric
    password = secrets.token_urlsafe(12)
    switches = {n: fabric.switch(n) for n in names}
    specs = [
        dataclasses.replace(runtime.spec_for(sw, password=password, port=0, faults=faults), gnmi_port=0)
        for sw in switches.values()
        if sw is not None
    ]
    tls = generate_tls()
    return fabric, switches, password, tls, runtime.LabThread(specs, gnmi_tls=tls)


def _targets(lab, switches) -> list[SwitchTarget]:  # type: ignore[no-untyped-def]
    return [SwitchTarget(n, lab.switch(n).platform.value, tuple(lab.switch(n).port_names)) for n in switches]


def _gnmi(
    lab,
    password: str,
    tls,
    targets,
    interval_s: float | None = None,  # type: ignore[no-untyped-def]
    **kw,
) -> GnmiPoller:
    def endpoint(t: SwitchTarget) -> GnmiEndpoint:
        ep = lab.endpoint(t.name)
        return GnmiEndpoint("127.0.0.1", ep.gnmi_port, "admin", Secret(password), tls.ca_pem, interval_s=interval_s)

    return GnmiPoller(targets, endpoint, **kw)


def _series(reg: Registry) -> dict[tuple[str, tuple[str, ...]], float]:
    return {
        (f.spec.name, labels): float(v)
        for f in reg.scrape()
        for labels, v in f.samples
        if f.spec.name.startswith("fabricd_switch_")
    }


def _labels() -> dict[str, tuple[str, ...]]:
    return {s.name: s.labels for s in SwitchCollector.metrics}


def _drive(sim) -> None:  # type: ignore[no-untyped-def]
    """One lab state: every queue of every port busy and ECN-marked (EOS's CLI prints only queues with counts), pause
    both ways, a drop, buffer peaks, and a storm on the first port's priority 3, the only queue the watchdog watches
    (EOS's CLI lists a watchdog queue only once it had an event)."""
    port = sim.port_names[0]
    sim.counters.set_watchdog(
        WatchdogSettings(priorities=frozenset({3}), detection_ms=100, restoration_ms=100, ports=frozenset({port}))
    )
    for p in sim.port_names:
        for q in range(8):
            sim.counters.traffic(p, q, 100 + q, 512)
            sim.counters.ecn_mark(p, q, 3 + q, 512)
    sim.counters.pause(port, 3, 900, direction="rx")
    sim.counters.pause(port, 4, 12, direction="tx")
    sim.counters.traffic(port, 3, 1000, 4096)
    sim.counters.ecn_mark(port, 3, 77, 4096)
    sim.counters.drop(port, 0, 5, 1500)
    sim.counters.buffer(port, 3, shared=2_092_800, headroom=75_000, queue=2_097_408)
    sim.counters.storm_start(port, 3)


NOS_CASES = [
    pytest.param(("spine1", "leaf1-sonic"), id="sonic"),
    pytest.param(("leaf2-eos",), id="arista_eos"),
    pytest.param(("leaf3-nxos",), id="cisco_nxos"),
    pytest.param(("leaf4-nvue", "spine2"), id="cumulus_nvue"),
]


@pytest.mark.parametrize("names", NOS_CASES)
def test_same_lab_state_same_series_over_ssh_and_gnmi(tmp_path: Path, names: tuple[str, ...]) -> None:
    """Every mapped NOS: the series over gNMI are the series over SSH, with the same values, except what the pack
    declares missing while streaming (absent over gNMI, never 0) or published over gNMI only. EOS, NX-OS and
    Cumulus reply shapes are the lab's, after their packs' sources: **unverified** against a device."""
    _, switches, password, tls, thread = _lab(tmp_path, names=names)
    with thread as lab:
        known_hosts = tmp_path / "known_hosts"
        known_hosts.write_text(lab.known_hosts())
        for name in names:
            sim = lab.switch(name)
            lab.call(lambda sim=sim: _drive(sim))
        time.sleep(0.4)  # the storm outlasts the 100 ms detection
        for name in names:
            sim = lab.switch(name)
            lab.call(lambda sim=sim: sim.counters.storm_stop(sim.port_names[0], 3))
        time.sleep(0.4)  # ... and is restored; from here on the counters stand still

        def factory(target: SwitchTarget):  # type: ignore[no-untyped-def]
            sw = switches[target.name]
            assert sw is not None
            ep = lab.endpoint(target.name)
            access = Access(target.name, ep.host, ep.port, sw.credentials.username, Secret(password), (known_hosts,))
            driver = make_driver(
                sw.model_copy(update={"mgmt": sw.mgmt.model_copy(update={"port": ep.port})}),
                access,
                DriverOptions(read_timeout_s=20.0, conn_timeout_s=10.0),
            )
            driver.open()
            return driver

        targets = _targets(lab, names)
        first = {n: lab.switch(n).port_names[0] for n in names}
        ssh = SwitchPoller(targets, factory, concurrency=2, timeout_s=120)
        gnmi = _gnmi(lab, password, tls, targets, timeout_s=30)
        try:
            over_ssh = _series(Registry([SwitchCollector(ssh)]))
            over_gnmi = _series(Registry([SwitchCollector(gnmi)]))
            transport = {
                (f.spec.name, labels)
                for f in Registry([GnmiStreamCollector(gnmi, [])]).scrape()
                for labels, _ in f.samples
            }
        finally:
            ssh.close()
            gnmi.close()
    table = table_for(targets[0].platform)
    labels = _labels()

    def declared(entries: tuple[str, ...], key: tuple[str, tuple[str, ...]]) -> bool:
        return table.declared(entries, key[0], dict(zip(labels[key[0]], key[1], strict=True)))

    assert not [k for k in over_gnmi if declared(table.missing_when_streaming, k)]
    over_ssh = {k: v for k, v in over_ssh.items() if not declared(table.missing_when_streaming, k)}
    only = {k for k in over_gnmi if declared(table.only_when_streaming, k)}
    assert set(over_ssh) == set(over_gnmi) - only, sorted(set(over_ssh) ^ (set(over_gnmi) - only))[:20]
    differ = {k: (over_ssh[k], over_gnmi[k]) for k in over_ssh if k[0] not in HEALTH and over_ssh[k] != over_gnmi[k]}
    assert not differ, sorted(differ.items())[:20]
    for sw in names:
        port = first[sw]
        assert over_gnmi[("fabricd_switch_up", (sw,))] == 1
        assert over_gnmi[("fabricd_switch_pfc_pause_frames_total", (sw, port, "3", "rx"))] > 900  # the storm's too
        assert ("fabricd_switch_telemetry_transport_info", (sw, "gnmi")) in transport
        if table.platform.value in ("sonic", "arista_eos"):  # the watchdog streams on these two
            assert over_gnmi[("fabricd_switch_pfcwd_detected_total", (sw, port, "3"))] == 1
            assert over_gnmi[("fabricd_switch_pfcwd_restored_total", (sw, port, "3"))] == 1
        if table.platform.value == "sonic":
            assert over_gnmi[("fabricd_switch_queue_ecn_marked_packets_total", (sw, port, "3", "unicast"))] == 6 + 77
            assert over_gnmi[("fabricd_switch_pg_watermark_bytes", (sw, port, "3", "headroom"))] == 75_000
    assert len(over_gnmi) > 100 * len(names)  # every port x priority x queue, not a handful


def test_stalled_stream_is_reported_stale_and_recovers(tmp_path: Path) -> None:
    _, _, password, tls, thread = _lab(tmp_path, (Fault("spine1", FaultKind.GNMI_STALL),))
    with thread as lab:
        targets = _targets(lab, SWITCHES)
        # every path at 2 s: stale after 4 s without an update, so a loaded machine's 1-2 s hiccup is not a stall
        gnmi = _gnmi(
            lab, password, tls, targets, interval_s=2.0, timeout_s=30, backoff=Backoff(base_s=0.2, ceiling_s=1.0)
        )
        try:
            first = {r.target.name: r for r in gnmi.poll()}
            assert first["spine1"].counters is not None  # the stalled stream sent its first sample and sync
            deadline = time.monotonic() + 30
            stale_seen = None
            while time.monotonic() < deadline:
                state = {name: (stale, resub) for name, stale, resub, _ in gnmi.stream_state()}
                polls = {r.target.name: r for r in gnmi.poll()}
                if state["spine1"][1] >= 1 and stale_seen is None:
                    stale_seen = polls["spine1"]
                if stale_seen is not None and polls["spine1"].counters is not None and not state["spine1"][0]:
                    break
                time.sleep(0.1)
            else:
                pytest.fail(f"spine1 never went stale and back: {gnmi.stream_state()}")
            assert stale_seen is not None and stale_seen.error is not None and "stale" in stale_seen.error
            health = {h.name: h for h in gnmi.health()}
            assert health["spine1"].up is True and health["spine1"].attempts == 1  # re-subscribed on the same channel
            assert health["leaf1-sonic"].attempts == 1 and health["leaf1-sonic"].failures == 0  # only spine1 stalled
            reg = {
                (f.spec.name, labels): v
                for f in Registry([GnmiStreamCollector(gnmi, [])]).scrape()
                for labels, v in f.samples
            }
            assert reg[("fabricd_switch_gnmi_stale_resubscriptions_total", ("spine1",))] == 1
            assert reg[("fabricd_switch_gnmi_stream_stale", ("spine1",))] == 0
        finally:
            gnmi.close()


def test_capture_gnmi_writes_a_scrubbed_replayable_capture(tmp_path: Path) -> None:
    from fabricd.capture.gnmi import capture_gnmi, replay_counters

    fabric = load_inventory(REPO / "inventory" / "lab").fabric
    password = secrets.token_urlsafe(12)
    names = ("leaf1-sonic", "spine2")  # SONiC (whole COUNTERS_DB values) and Cumulus (one update per leaf)
    specs = [
        dataclasses.replace(runtime.spec_for(fabric.switch(n), password=password, port=0), gnmi_port=0) for n in names
    ]
    tls = generate_tls()
    with runtime.LabThread(specs, gnmi_tls=tls) as lab:
        sim = lab.switch("leaf1-sonic")
        lab.call(
            lambda: (
                sim.counters.set_watchdog(WatchdogSettings(priorities=frozenset({3}))),
                sim.counters.pause("Ethernet0", 3, 4321),
                sim.counters.ecn_mark("Ethernet0", 3, 12),
            )
        )
        targets = [
            SwitchTarget(n, fabric.switch(n).platform.value, tuple(lab.switch(n).port_names))  # type: ignore[union-attr]
            for n in names
        ]
        out = tmp_path / "cap"
        results = {
            r.device: r
            for r in capture_gnmi(
                targets,
                out,
                lambda t: GnmiEndpoint(
                    "127.0.0.1", lab.endpoint(t.name).gnmi_port, "admin", Secret(password), tls.ca_pem
                ),
            )
        }
        live = _gnmi(lab, password, tls, targets[:1], timeout_s=30)
        try:
            live_counters = live.poll()[0].counters
        finally:
            live.close()
    assert results["leaf1-sonic"].ok and results["leaf1-sonic"].notifications == 5, results
    assert results["spine2"].ok and results["spine2"].notifications > 4 * 8, results  # a container per port x prio
    spine2 = replay_counters(out / "spine2", "cumulus_nvue")
    assert spine2 is not None and len(spine2.pfc) == 4 * 8 * 2  # 4 ports x 8 priorities x rx/tx
    folder = out / "leaf1-sonic"
    assert {p.name for p in (folder / "gnmi").iterdir()} == {
        "capabilities.json",
        "counters.json",
        "values.json",
        "manifest.json",
    }
    for f in (out / "leaf1-sonic" / "gnmi").iterdir():
        assert password not in f.read_text()
        assert f.stat().st_mode & 0o077 == 0
    replayed = replay_counters(folder, "sonic")
    assert replayed is not None and live_counters is not None
    assert replayed.as_dict() == live_counters.as_dict()
    assert any(p.frames == 4321 for p in replayed.pfc)


def _teardown_noise(caplog: pytest.LogCaptureFixture) -> list[str]:
    """What asyncio and gRPC logged at WARNING or above (a pending task destroyed, a completion handed to a closed
    loop, an RPC's coroutine closed unfinished), after a collection so a dropped pending task is reported now."""
    gc.collect()
    return [f"{r.name}: {r.getMessage()}" for r in caplog.records if not r.name.startswith("fabricd")]


def _gnmi_threads() -> set[threading.Thread]:
    return {t for t in threading.enumerate() if t.name == "fabricd-gnmi"}


def test_closing_the_poller_mid_stream_ends_it_cleanly(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """close() while updates stream in (EOS's several streams and SONiC's, every second) ends every stream: the
    poller's thread is gone when close() returns, and nothing logs teardown noise, neither on fabricd's loop nor on
    the lab's (which, still running, would hand a late gRPC completion to the closed loop). Several rounds: each
    close lands at another point of a stream."""
    caplog.set_level(logging.WARNING)
    names = ("leaf2-eos", "leaf1-sonic")
    _, _, password, tls, thread = _lab(tmp_path, names=names)
    with thread as lab:
        targets = _targets(lab, names)
        for _ in range(5):
            before = _gnmi_threads()
            gnmi = _gnmi(lab, password, tls, targets, interval_s=1.0, timeout_s=30)
            assert all(r.counters is not None for r in gnmi.poll())
            time.sleep(1.0)
            gnmi.close()
            assert not _gnmi_threads() - before, "the poller's thread still runs after close()"
            time.sleep(0.2)  # the lab's loop runs on: a late completion for the closed loop would be logged now
            assert not _teardown_noise(caplog)
    assert not _teardown_noise(caplog)


def test_stopping_the_lab_mid_stream_leaves_no_rpc_running(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """The lab stopped while a poller streams from it: its gNMI servers' RPCs end before its loop closes (no
    "Task was destroyed but it is pending!" for them), and the poller, closed after, ends cleanly too."""
    caplog.set_level(logging.WARNING)
    names = ("leaf2-eos", "leaf1-sonic")
    for _ in range(3):
        _, _, password, tls, thread = _lab(tmp_path, names=names)
        with thread as lab:
            gnmi = _gnmi(lab, password, tls, _targets(lab, names), interval_s=1.0, timeout_s=30)
            assert all(r.counters is not None for r in gnmi.poll())
            time.sleep(1.0)
        gnmi.close()
        assert not _teardown_noise(caplog)
