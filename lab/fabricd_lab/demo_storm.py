"""The demo's storm stage (:meth:`fabricd_lab.demo.Demo.stage_storm`): a PFC storm injected on a host's NIC
(and, with the switch lab, along its path), detected by ``fabricd serve`` against the timing contract, alerted in
Prometheus, its origin named by the root-cause walk, then stopped and restored.

Split from :mod:`fabricd_lab.demo`, whose :class:`~fabricd_lab.demo.Demo` holds the running parts this
stage uses (Prometheus, ``fabricd serve``, the replay writers).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .demo_parts import (
    ALERT_NAME,
    WRITER_TICK_S,
    StageResult,
    StageStatus,
    _Child,
    _http_json,
    _rdma_nic,
    _SkipError,
    _StageFailedError,
    _tail,
    pick_hosts,
    storm_path,
)
from .demo_prom import PrometheusServer

if TYPE_CHECKING:
    from .demo import Demo


def stage_storm(demo: Demo) -> StageResult:
    from fabricd_lab.report.record import StormTimeline

    prom, serve = demo._prom, demo._serve
    if prom is None or serve is None:
        raise _SkipError("needs the export stage (Prometheus and fabricd serve)")
    origin, victim = pick_hosts(demo.fabric, demo.options.host, demo.options.victim)
    nic = _rdma_nic(origin)
    assert nic is not None
    prio = demo.fabric.policy.pfc.priorities[0]
    status = _http_json(serve.url + "/status")
    wd = status["watchdog"]
    det_ms, rest_ms, poll_ms = float(wd["detection_ms"]), float(wd["restoration_ms"]), float(wd["poll_ms"])
    path = storm_path(demo.fabric, origin, victim) if demo._lab_up else []
    v_nic = _rdma_nic(victim) if victim is not None and path else None
    # every channel the storm pauses: (scope, device, interface, direction)
    channels = [("nic", origin.name, nic.netdev, "tx")]
    channels += [("switch", sw, port, d) for sw, port, d in path]
    if victim is not None and v_nic is not None:
        channels.append(("nic", victim.name, v_nic.netdev, "rx"))
    demo._note("storm", f"{origin.name} {nic.netdev} stops draining priority {prio}: it sends PFC pause "
                        f"continuously (tx_prio{prio}_pause_duration grows 1 s per s): a stalled receiver")
    episodes = [(demo._gens[origin.name], demo._gens[origin.name].pause(nic.netdev, priority=prio,
                                                                         direction="tx"))]
    injected = episodes[0][1].start
    if path:
        from fabricd_lab import daemon

        for sw, port, d in path:
            daemon.control({"op": "drive", "device": sw, "action": "storm-start", "port": port,
                            "priority": prio, "direction": d})
        if victim is not None and v_nic is not None:
            gen = demo._gens[victim.name]
            episodes.append((gen, gen.pause(v_nic.netdev, priority=prio, direction="rx")))
        demo._note("storm", "the pause spreads against the traffic: " + ", ".join(
            f"{sw}:{port} {d}" for sw, port, d in path) + (f", {victim.name} {v_nic.netdev} rx" if v_nic
                                                           and victim else "")
                   + " (lab counter model and replay root)")

    def is_event(kind: str, ch: tuple[str, str, str, str]) -> Callable[[dict[str, Any]], bool]:
        return lambda e: bool(e.get("event") == kind and e.get("scope") == ch[0] and e.get("device") == ch[1]
                              and e.get("interface") == ch[2] and e.get("direction") == ch[3]
                              and e.get("priority") == prio)

    detected = _wait_event(serve, injected - 1.0, is_event("storm_detected", channels[0]),
                                det_ms / 1000 + 10.0)
    tol = WRITER_TICK_S * 1000 + 20.0
    data: dict[str, Any] = {
        "injected": {"device": origin.name, "interface": nic.netdev, "priority": prio, "direction": "tx",
                     "ts": injected},
        "channels": [{"scope": c[0], "device": c[1], "interface": c[2], "direction": c[3]} for c in channels],
        "contract_ms": {"min": det_ms, "max": det_ms + poll_ms, "tolerance_ms": tol,
                        "source": "sonic-mgmt test_pfcwd_timer_accuracy: detection <= observed <= "
                                  "detection + poll"},
    }
    if detected is None:
        for gen, ep in episodes:
            gen.stop(ep)
        _lab_storm_stop(path, prio)
        raise _StageFailedError(f"fabricd serve did not report the storm (see {serve.log})", data)
    latency_ms = (float(detected["ts"]) - injected) * 1000.0
    data.update({
        "detected_ts": detected["ts"], "detection_latency_ms": round(latency_ms, 1),
        "within_contract": det_ms <= latency_ms <= det_ms + poll_ms + tol,
        # a timing is judged with the load it ran under: on a busy machine a late detection is reported,
        # not failed (the stage fails only when something did not work)
        "load_average": [round(x, 2) for x in os.getloadavg()], "cpus": os.cpu_count(),
        "origin": {"port": detected.get("origin"), "kind": detected.get("origin_kind"),
                   "path": detected.get("origin_path")},
    })
    demo._note("storm", f"fabricd serve: storm_detected on {origin.name} {nic.netdev} priority {prio} after "
                        f"{latency_ms:.0f} ms (contract {det_ms:g}-{det_ms + poll_ms:g} ms); origin "
                        f"{detected.get('origin')} ({detected.get('origin_kind')})")
    alert = _wait_alert(prom, origin.name, firing=True, timeout_s=20.0)
    if alert is not None:
        data["alert"] = {"name": ALERT_NAME, "state": alert["state"], "labels": alert["labels"],
                         "active_at": alert.get("activeAt"), "seen_ts": alert["_seen"],
                         "latency_s": round(alert["_seen"] - injected, 2),
                         "summary": alert.get("annotations", {}).get("summary", "")}
        demo._note("storm", f"Prometheus: {ALERT_NAME} firing {alert['_seen'] - injected:.1f} s after the "
                            f"injection: {data['alert']['summary']}")
    # the other paused ports: the switches are polled every second, so they are seen a little later
    spread: list[dict[str, Any]] = []
    for ch in channels[1:]:
        ev = _wait_event(serve, injected - 1.0, is_event("storm_detected", ch), 8.0)
        spread.append({"port": f"{ch[1]}:{ch[2]}", "scope": ch[0], "direction": ch[3],
                       "detected": ev is not None,
                       "latency_ms": round((float(ev["ts"]) - injected) * 1000.0, 1) if ev else None,
                       "origin": ev.get("origin") if ev else None,
                       "origin_kind": ev.get("origin_kind") if ev else None})
    data["spread"] = spread
    status = _http_json(serve.url + "/status")
    data["paused_ports"] = sorted({f"{c['device']}:{c['interface']}" for c in status["active_storms"]})
    data["origins"] = status["origins"]
    data["origin_metric"] = [s.labels for s in prom.query("fabricd_pfc_storm_origin_info == 1")]
    roots = [f"{o['device']}:{o['interface']}" for o in status["origins"]]
    storms = 1 + sum(1 for s in spread if s["detected"])
    if spread:
        demo._note("storm", f"{storms - 1} of {len(spread)} other paused ports detected; root cause over all "
                            f"active storms: " + ", ".join(f"{o['device']}:{o['interface']} ({o['kind']}, "
                                                           f"{o['affected']} storms lead to it)"
                                                           for o in status["origins"]))
    hold = injected + demo.options.storm_hold_s - time.time()
    if hold > 0:
        time.sleep(hold)
    stopped = time.time()
    for gen, ep in episodes:
        gen.stop(ep, at=stopped)
    _lab_storm_stop(path, prio)
    demo._note("storm", f"{origin.name} {nic.netdev} drains again: pause stops everywhere")
    restored = _wait_event(serve, stopped - 1.0, is_event("storm_restored", channels[0]),
                                rest_ms / 1000 + 10.0)
    data["stopped_ts"] = stopped
    if restored is not None:
        data["restored_ts"] = restored["ts"]
        data["restoration_latency_ms"] = round((float(restored["ts"]) - stopped) * 1000.0, 1)
        demo._note("storm", f"fabricd serve: storm_restored {data['restoration_latency_ms']:.0f} ms after the "
                            f"pause stopped")
    seen = [ch for ch, s in zip(channels[1:], spread, strict=True) if s["detected"]]
    others = [_wait_event(serve, stopped - 1.0, is_event("storm_restored", ch), 8.0) for ch in seen]
    data["all_restored"] = all(e is not None for e in others)
    cleared = _wait_alert(prom, origin.name, firing=False, timeout_s=10.0)
    data["alert_resolved"] = cleared is not None
    data["events"] = _http_json(f"{serve.url}/events?since={injected - 1.0:.3f}")
    origin_port = str(detected.get("origin") or "")
    o_dev, _, o_if = origin_port.partition(":")
    demo._storm = StormTimeline(
        device=origin.name, interface=nic.netdev, priority=prio, direction="tx", injected_ts=injected,
        detected_ts=float(detected["ts"]), stopped_ts=stopped,
        restored_ts=float(restored["ts"]) if restored else None,
        origin_device=o_dev or None, origin_interface=o_if or None,
        paused_ports=sorted({f"{origin.name}:{nic.netdev}"} | {s["port"] for s in spread if s["detected"]}))
    tail = stopped + demo.options.tail_s - time.time()
    if tail > 0:
        demo._note("storm", f"recording {tail:.0f} s more for the pictures")
        time.sleep(tail)
    fired = f"fired after {data['alert']['latency_s']:.1f} s" if alert else "did NOT fire"
    back = f"restored after {data['restoration_latency_ms']:.0f} ms" if restored else "NOT restored"
    traced_text = ""
    if spread:
        traced_text = f"; all {storms} paused ports lead to it" if roots == [origin_port] else \
            f"; roots found: {', '.join(roots)}"
    load = "/".join(f"{x:.1f}" for x in data["load_average"])
    contract = f"{det_ms:g}-{det_ms + poll_ms:g} ms"
    timing = f"within {contract}" if data["within_contract"] else \
        f"BEYOND the timing contract of {contract}, at load average {load} on {data['cpus']} CPUs: " \
        "a late timing is reported, not failed"
    summary = (f"injected on {origin.name}:{nic.netdev} prio {prio}; detected in {latency_ms:.0f} ms "
               f"({timing}); "
               f"{ALERT_NAME} {fired}; origin {origin_port} ({detected.get('origin_kind')}){traced_text}; "
               f"{back}")
    problems = []
    if latency_ms < det_ms:  # early is wrong whatever the load: the detector fired on less pause than asked
        problems.append(f"detected after {latency_ms:.0f} ms, before the {det_ms:g} ms detection time")
    if alert is None:
        problems.append(f"{ALERT_NAME} did not fire")
    if origin_port != f"{origin.name}:{nic.netdev}":
        problems.append(f"origin named {origin_port}, injected at {origin.name}:{nic.netdev}")
    if spread and roots != [f"{origin.name}:{nic.netdev}"]:
        problems.append(f"root cause over all active storms named {', '.join(roots) or 'nothing'}")
    if restored is None or not data["all_restored"]:
        problems.append("not restored everywhere")
    if problems:
        raise _StageFailedError("; ".join(problems), data)
    return demo._result("storm", StageStatus.OK, summary, data)

def _lab_storm_stop(path: list[tuple[str, str, str]], prio: int) -> None:
    if not path:
        return
    from fabricd_lab import daemon

    for sw, port, _d in path:
        daemon.control({"op": "drive", "device": sw, "action": "storm-stop", "port": port, "priority": prio})

def _wait_event(serve: _Child, since: float, pred: Callable[[dict[str, Any]], bool],
                timeout_s: float) -> dict[str, Any] | None:
    """Poll ``/events?since=`` of fabricd serve every 50 ms until an event matches; None on timeout."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        for ev in _http_json(f"{serve.url}/events?since={since:.3f}"):
            if pred(ev):
                return dict(ev)
        if serve.proc.poll() is not None:
            raise _StageFailedError(f"fabricd serve exited: {_tail(serve.log)}")
        time.sleep(0.05)
    return None

def _wait_alert(prom: PrometheusServer, device: str, *, firing: bool,
                timeout_s: float) -> dict[str, Any] | None:
    """Poll ``/api/v1/alerts``: with ``firing`` until the storm alert fires for ``device``, else until it is
    gone. Returns the alert (or ``{}`` when gone) with ``_seen`` (epoch s), None on timeout."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        mine = [a for a in prom.alerts() if a.get("labels", {}).get("alertname") == ALERT_NAME
                and a.get("labels", {}).get("device") == device]
        hit = next((a for a in mine if a.get("state") == "firing"), None)
        if firing and hit is not None:
            return {**hit, "_seen": time.time()}
        if not firing and not mine:
            return {"_seen": time.time()}
        time.sleep(0.2)
    return None
