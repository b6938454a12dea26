"""CPU and memory of the gNMI switch collector per switch streaming at 1 s, against the SSH collector polling the
same lab switches every second, in the same run.

``LAB_PROCS`` (2) child processes run N simulated SONiC switches between them (fabricd-lab, ``PORTS`` ports each),
each with its SSH simulator and its gNMI target (TLS, its lab's CA) on 127.0.0.1. This process then, one phase
after the other:

1. gNMI: a :class:`~fabricd.collectors.gnmi.GnmiPoller` streams all N switches with the SONiC pack's defaults (port
   and PFC counters SAMPLE every 1 s, queue/watchdog and PG-watermark tables every 10 s: SONiC's own refresh, sonic-swss
   portsorch.cpp; streaming them faster would resend unchanged values), and builds every switch's counters every
   ``SCRAPE_S`` (15 s: what a scrape does before rendering; a fleet this size is not scraped every second, its
   rendering alone takes seconds). Measured over ``WINDOW_S`` after every stream synced: this process's CPU time
   (all threads: grpc's and the asyncio loop's), split into streaming (ingest) and building the counters (per
   switch per scrape), and resident memory growth, per switch. A run is valid only if no stream went stale (2x its
   interval without an update) in the window and every switch streams at its end.
2. SSH: a :class:`~fabricd.collectors.switch.SwitchPoller` (kept-open netmiko sessions, 16 at once) polls the first
   ``SSH_SWITCHES`` of the same switches as fast as it can (target: every second), rendered likewise; CPU per
   switch-poll, and how many switches one core would poll once a second.

The gNMI phase ends with ``FAST_S`` more seconds with the counters built every second (a 1 s scrape: the
freshness SSH gets by polling every second), with its own stale count; the headline is switches per core in that
phase (target: >= 500) against the SSH figure; the JSON also gives the figure with a scrape every ``SCRAPE_S``. The
lab children's own CPU is not counted (they stand for the switches). Run from the repo root:
``python bench/gnmi.py [N]``; the last line is the JSON result.
"""

from __future__ import annotations

import json
import os
import resource
import secrets
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "lab"))

SWITCHES = 500
PORTS = 8
SSH_SWITCHES = 40
WINDOW_S = 30.0
LAB_PROCS = 2
FAST_S = 15.0
SCRAPE_S = 15.0
"""How often the counters of every switch are built (a scrape). Streaming is at 1 s whatever this is; a fleet of
hundreds of switches is scraped every 15-30 s (rendering alone is ~10 ms per switch, several seconds at 500)."""
SSH_WINDOW_S = 15.0


def rss_kb() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def proc_cpu_s(pid: int) -> float:
    """CPU seconds (user + system) of process ``pid`` so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def lab_child(n: int, first: int = 0) -> None:
    """Run a lab of ``n`` switches (``sw<first>``...); print its endpoints as one JSON line; serve until stdin
    closes."""
    import asyncio

    from fabricd.model import Platform
    from fabricd_lab.device import DeviceSpec
    from fabricd_lab.gnmi import generate_tls
    from fabricd_lab.runtime import LabThread

    password = secrets.token_urlsafe(12)
    tls = generate_tls()
    specs = [
        DeviceSpec(
            name=f"sw{i:04d}",
            platform=Platform.SONIC,
            password=password,
            gnmi_port=0,
            ports=tuple((f"Ethernet{8 * p}", 400_000_000_000) for p in range(PORTS)),
        )
        for i in range(first, first + n)
    ]
    with LabThread(specs, gnmi_tls=tls) as lab:
        for i, spec in enumerate(specs):  # some traffic and pause so the values are not all 0
            sim = lab.switch(spec.name)
            lab.call(
                lambda sim=sim, i=i: (
                    sim.counters.pause("Ethernet0", 3, 100 + i),
                    sim.counters.traffic("Ethernet0", 3, 1000 + i),
                )
            )
        out = {
            "password": password,
            "ca": tls.ca_pem.decode(),
            "known_hosts": lab.known_hosts(),
            "endpoints": [[e.name, e.port, e.gnmi_port] for e in lab.lab.endpoints.values()],
        }
        print(json.dumps(out), flush=True)
        sys.stdin.read()
        del asyncio


def _start_labs(n: int) -> tuple[list[subprocess.Popen[str]], dict[str, Any]]:
    """``LAB_PROCS`` lab processes sharing the ``n`` switches (500 switches are 500 devices: one Python process
    playing all of them competes for one core's share on a loaded machine); per switch its ports, password and CA."""
    children, switches, known_hosts = [], {}, []
    per = -(-n // LAB_PROCS)
    for first in range(0, n, per):
        child = subprocess.Popen(
            [sys.executable, __file__, "--lab", str(min(per, n - first)), str(first)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONPATH": str(REPO / "lab")},
        )
        assert child.stdout is not None and child.stdin is not None
        children.append(child)
        info = json.loads(child.stdout.readline())
        known_hosts.append(info["known_hosts"])
        for name, ssh, gnmi in info["endpoints"]:
            switches[name] = {"ssh": ssh, "gnmi": gnmi, "password": info["password"], "ca": info["ca"]}
    return children, {"switches": switches, "known_hosts": "".join(known_hosts)}


def _gnmi_phase(n: int, targets: list[Any], info: dict[str, Any], lab_pids: list[int]) -> dict[str, Any]:
    """Stream every switch; measure over ``WINDOW_S`` with the counters built once a second."""
    from fabricd.collectors.core import Registry
    from fabricd.collectors.gnmi import GnmiEndpoint, GnmiPoller
    from fabricd.collectors.switch import SwitchCollector
    from fabricd.platforms.secrets import Secret

    sw = info["switches"]
    rss0 = rss_kb()
    poller = GnmiPoller(
        targets,
        lambda t: GnmiEndpoint(
            "127.0.0.1", sw[t.name]["gnmi"], "admin", Secret(sw[t.name]["password"]), sw[t.name]["ca"].encode()
        ),
        timeout_s=120,
    )
    t0 = time.monotonic()
    first = poller.poll(wait_s=120)
    up = sum(1 for r in first if r.counters is not None)
    connect_s = time.monotonic() - t0
    time.sleep(3)  # the first samples of every stream are in
    poller.poll(wait_s=1.0)  # every switch's tables converted once (a first build converts every table)
    rss1 = rss_kb()
    updates0 = sum(h.polls for h in poller.health())
    resub0 = sum(r for _, _, r, _ in poller.stream_state())
    cpu0, wall0, lab0 = time.process_time(), time.monotonic(), sum(map(proc_cpu_s, lab_pids))
    convert_cpu, rounds, results = 0.0, 0, []
    for i in range(int(WINDOW_S // SCRAPE_S)):  # streaming at 1 s; the counters of every switch every SCRAPE_S
        c0 = time.process_time()
        results = poller.poll(wait_s=1.0)
        convert_cpu += time.process_time() - c0
        rounds += 1
        time.sleep(max(0.0, wall0 + (i + 1) * SCRAPE_S - time.monotonic()))
    cpu, wall = time.process_time() - cpu0, time.monotonic() - wall0
    lab_core = (sum(map(proc_cpu_s, lab_pids)) - lab0) / wall
    updates = sum(h.polls for h in poller.health()) - updates0
    stale = sum(r for _, _, r, _ in poller.stream_state()) - resub0  # streams gone stale in the window
    results = poller.poll(wait_s=1.0)  # the state at the end of the window (not counted)
    rss2 = rss_kb()
    s0 = time.process_time()
    text = Registry([SwitchCollector(poller, wait_s=1.0)]).exposition()
    render_cpu = time.process_time() - s0
    fast = _every_second(poller, n)  # after the window's figures: its CPU and updates are its own
    poller.close()
    ingest_cpu = cpu - convert_cpu
    per_switch_s = cpu / wall / n  # CPU seconds per switch per second: streaming + counters every SCRAPE_S
    series = text.count("\nfabricd_switch_")
    streaming = sum(1 for r in results if r.counters is not None)
    return dict(
        gnmi_switches=n,
        gnmi_up=up,
        gnmi_connect_s=round(connect_s, 2),
        gnmi_ingest_core_fraction=round(ingest_cpu / wall, 3),
        gnmi_ingest_ms_per_switch_s=round(1000 * ingest_cpu / wall / n, 3),
        gnmi_counters_ms_per_switch=round(1000 * convert_cpu / rounds / n, 3),
        scrape_s=SCRAPE_S,
        gnmi_cpu_ms_per_switch_s=round(1000 * per_switch_s, 3),
        gnmi_switches_per_core=round(1 / per_switch_s if per_switch_s else float("inf"), 1),
        gnmi_rss_kb_per_switch=round((rss1 - rss0) / n, 1),
        gnmi_rss_mb=round(rss2 / 1024, 1),
        gnmi_updates_per_s=round(updates / wall, 1),
        gnmi_stale=stale,
        render_ms_per_switch=round(1000 * render_cpu / n, 3),
        series_per_switch=series // n,
        fresh_results=streaming,
        lab_core_fraction=round(lab_core, 3),
        load_avg_1m=round(os.getloadavg()[0], 2),
        up_at_end=streaming,
        valid=stale == 0 and streaming == n,
        **fast,
    )


def _every_second(poller: Any, n: int) -> dict[str, Any]:
    """Then ``FAST_S`` with the counters of every switch built every second: CPU per switch-second measured at a
    1 s scrape, and whether the streams still held (stale re-subscriptions in that phase)."""
    resub0 = sum(r for _, _, r, _ in poller.stream_state())
    cpu0, wall0 = time.process_time(), time.monotonic()
    while time.monotonic() - wall0 < FAST_S:
        s0 = time.monotonic()
        poller.poll(wait_s=1.0)
        time.sleep(max(0.0, 1.0 - (time.monotonic() - s0)))
    per_switch_s = (time.process_time() - cpu0) / (time.monotonic() - wall0) / n
    return dict(
        gnmi_1s_cpu_ms_per_switch_s=round(1000 * per_switch_s, 3),
        gnmi_1s_switches_per_core=round(1 / per_switch_s, 1) if per_switch_s else float("inf"),
        gnmi_1s_stale=sum(r for _, _, r, _ in poller.stream_state()) - resub0,
    )


def _report_gnmi(r: dict[str, Any]) -> None:
    n = r["gnmi_switches"]
    print(
        f"gNMI: {n} switches ({r['gnmi_up']} up, {r['gnmi_connect_s']:.1f} s to sync); streaming "
        f"{r['gnmi_updates_per_s']:.0f} updates/s costs {r['gnmi_ingest_core_fraction']:.3f} core "
        f"({r['gnmi_ingest_ms_per_switch_s']:.3f} ms per switch-second); building the counters "
        f"{r['gnmi_counters_ms_per_switch']:.3f} ms per switch; with a scrape every {r['scrape_s']:g} s "
        f"{r['gnmi_cpu_ms_per_switch_s']:.3f} "
        f"ms per switch-second = {r['gnmi_switches_per_core']:.0f} switches per core; RSS "
        f"{r['gnmi_rss_kb_per_switch']:.0f} KB/switch after sync; rendering {r['series_per_switch']} series "
        f"{r['render_ms_per_switch']:.2f} ms per switch (either transport); stale {r['gnmi_stale']}; the lab used "
        f"{r['lab_core_fraction']:.2f} core; load average {r['load_avg_1m']:.1f}; then {FAST_S:g} s with the "
        f"counters built every second: {r['gnmi_1s_cpu_ms_per_switch_s']:.3f} ms per switch-second = "
        f"{r['gnmi_1s_switches_per_core']:.0f} switches per core, stale {r['gnmi_1s_stale']}",
        flush=True,
    )
    if not r["valid"]:
        print(
            f"NOT VALID: {n - r['up_at_end']} switch(es) not streaming at the end and {r['gnmi_stale']} stream(s) "
            f"went stale during the window (of {n}; {r['gnmi_up']} had synced at the start) (the lab or this "
            "process could not keep a 1 s cadence on this machine): the per-switch figures are not a steady state",
            flush=True,
        )


def _ssh_phase(targets: list[Any], info: dict[str, Any]) -> dict[str, Any]:
    """Poll the first ``SSH_SWITCHES`` of the same switches back to back over kept-open sessions."""
    from fabricd.collectors.switch import SwitchPoller, SwitchTarget
    from fabricd.model import Management, Platform, Switch
    from fabricd.platforms.access import Access
    from fabricd.platforms.base import DriverOptions
    from fabricd.platforms.registry import make_driver
    from fabricd.platforms.secrets import Secret

    switches = info["switches"]
    kh = Path(tempfile.mkdtemp()) / "known_hosts"
    kh.write_text(info["known_hosts"])
    ssh_targets = targets[:SSH_SWITCHES]

    def factory(t: SwitchTarget):  # type: ignore[no-untyped-def]
        port = switches[t.name]["ssh"]
        sw = Switch(name=t.name, platform=Platform.SONIC, mgmt=Management(host="127.0.0.1", port=port))
        access = Access(t.name, "127.0.0.1", port, "admin", Secret(switches[t.name]["password"]), (kh,))
        driver = make_driver(sw, access, DriverOptions(read_timeout_s=30.0, conn_timeout_s=30.0))
        driver.open()
        return driver

    ssh = SwitchPoller(ssh_targets, factory, concurrency=16, timeout_s=120)
    ssh.poll()  # sessions opened (not timed: a kept-open session is the steady state)
    cpu0, wall0 = time.process_time(), time.monotonic()
    polls = 0
    while time.monotonic() - wall0 < SSH_WINDOW_S:
        polls += sum(1 for r in ssh.poll() if r.counters is not None)
    cpu, wall = time.process_time() - cpu0, time.monotonic() - wall0
    ssh.close()
    per_poll_ms = 1000 * cpu / polls
    print(
        f"SSH: {len(ssh_targets)} of the same switches, {polls} polls in {wall:.1f} s "
        f"({polls / wall / len(ssh_targets):.2f} polls/s per switch), {per_poll_ms:.2f} ms CPU per switch-poll "
        f"-> {1000 / per_poll_ms:.0f} switches per core at 1 s",
        flush=True,
    )
    return dict(
        ssh_switches=len(ssh_targets),
        ssh_polls=polls,
        ssh_cpu_ms_per_switch_poll=round(per_poll_ms, 2),
        ssh_switches_per_core=round(1000 / per_poll_ms, 1),
        ssh_poll_rate_per_switch_hz=round(polls / wall / len(ssh_targets), 2),
    )


def run(n: int, final: bool) -> dict[str, Any]:
    """One lab of ``n`` switches: the gNMI phase, then (when it held a steady state, or on the ``final`` attempt)
    the SSH phase on the same switches."""
    import logging

    from fabricd.collectors.switch import SwitchTarget

    logging.getLogger("fabricd.collectors.gnmi").setLevel(logging.ERROR)  # a stall cascade logs a line per switch
    children, info = _start_labs(n)
    ports = tuple(f"Ethernet{8 * p}" for p in range(PORTS))
    targets = [SwitchTarget(name, "sonic", ports) for name in info["switches"]]
    try:
        result = _gnmi_phase(n, targets, info, [c.pid for c in children])
        _report_gnmi(result)
        if result["valid"] or final:
            result.update(_ssh_phase(targets, info))
    finally:
        for child in children:
            assert child.stdin is not None
            child.stdin.close()
        for child in children:
            child.wait(timeout=60)
    return result


def main() -> None:
    """Start at ``SWITCHES`` (or argv[1]); when the streams cannot hold a 1 s cadence on this machine (a stream went
    stale or never synced), halve the count, down to 50: the result names the largest count that held."""
    n = int(sys.argv[1]) if len(sys.argv) > 1 else SWITCHES
    tried = []
    while True:
        final = n // 2 < 50
        proc = subprocess.run(
            [sys.executable, __file__, "--run", str(n), "final" if final else "more"],
            stdout=subprocess.PIPE,
            text=True,
            check=True,
            timeout=1200,
        )
        lines = proc.stdout.strip().splitlines()
        print("\n".join(lines[:-1]), flush=True)
        result = json.loads(lines[-1])  # each attempt in a fresh process: its memory figures are its own
        tried.append(
            {
                "switches": n,
                "valid": result["valid"],
                "stale": result["gnmi_stale"],
                "up": result["gnmi_up"],
                "load_avg_1m": result["load_avg_1m"],
            }
        )
        if result["valid"] or final:
            break
        n //= 2
    result["attempts"] = tried
    print(json.dumps(result), flush=True)
    value = result["gnmi_1s_switches_per_core"] if result["valid"] else 0.0  # no steady state: no claim
    anchor = result["ssh_switches_per_core"]
    print(
        json.dumps(
            {
                "bench": "gnmi",
                "value": value,
                "unit": f"switches per core streaming at a 1 s sample, counters built every second (from "
                f"{result['gnmi_switches']} switches streaming)",
                "anchor": "fabricd SSH collector, same lab switches, same run",
                "anchor_value": anchor,
                "ratio": round(value / anchor, 2) if anchor else None,
            }
        )
    )


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--lab":
        lab_child(int(sys.argv[2]), int(sys.argv[3]) if len(sys.argv) > 3 else 0)
    elif len(sys.argv) > 3 and sys.argv[1] == "--run":
        print(json.dumps(run(int(sys.argv[2]), sys.argv[3] == "final")), flush=True)
    else:
        main()
    del threading, resource
