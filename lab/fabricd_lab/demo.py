"""``fabricd demo``: the whole loop on one inventory (the embedded lab fabric by default), bounded and honest.

Stages, in order (:data:`STAGES`); each returns a :class:`StageResult` with its key figures as JSON-able data:

1. ``validate``: every semantic check, the host-to-switch ones counted apart, and the PFC deadlock analysis;
2. ``render``: every switch config (four NOSes) and every host's script and plan, written under the state dir;
3. ``push``: the switch lab over SSH, a push with diffs, an idempotent re-push;
4. ``host``: one host's plan applied into a network namespace (netlink, pyroute2) and a fake mlx5 ``/sys`` tree
   built from real captures (sysfs/configfs), audited before and after;
5. ``export``: mlx5-like replay roots (two inventory hosts, live-updated), the host exporter serving them, the
   watchdog's metrics, and a real Prometheus scraping them every second with the shipped rule pack;
6. ``storm``: a PFC storm injected on the first host's NIC (a stalled receiver sending pause), detected by the
   watchdog (latency against its timing contract), alerted (``FabricPfcStormActive`` in Prometheus), its origin
   named by the root-cause walk, then stopped and restored;
7. ``vm``: verbs traffic through ``validate-fabric`` in the Soft-RoCE VM.

A stage whose prerequisites are missing (not root, no Prometheus, no VM image, a part not in this build) is
``skipped`` with the reason; a stage that ran and did not get the expected result is ``failed``. Nothing here
prints: progress goes to a :class:`DemoObserver`, results are returned.

Everything started is registered on an :class:`contextlib.ExitStack` and stopped by :meth:`Demo.close`, also on
errors and Ctrl-C. With ``keep_running`` the long-lived parts (Prometheus) are detached instead, and
:attr:`DemoReport.services` says where they are and how to stop them.

The stage results, options, host picks and child processes are in :mod:`.demo_parts`; the storm stage is
:mod:`.demo_storm`; Prometheus is :mod:`.demo_prom`.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from fabricd import settings
from fabricd.audit.report import AuditReport, Status
from fabricd.deploy.diffstat import diff_counts, diff_signs
from fabricd.errors import FabricdError
from fabricd.inventory import Inventory, load_inventory
from fabricd.model import Fabric, Host, split_endpoint
from fabricd.nos.validate import ALL_CHECKS, validate

from . import demo_storm
from .demo_parts import (
    DIFF_HEAD_LINES,
    FABRICD_ARGV,
    HOST_SKIP_PARTS,
    HOST_SKIP_REASON,
    HOST_SWITCH_CHECKS,
    LOOPBACK,
    NETNS_PREFIX,
    RUNNING_FILE,
    STAGES,
    VM_NAME,
    VM_TRAFFIC_TIMEOUT_S,
    WRITER_TICK_S,
    DemoObserver,
    DemoOptions,
    DemoReport,
    StageResult,
    StageStatus,
    _Child,
    _host_as_device,
    _ip,
    _LabTraffic,
    _rate_text,
    _rdma_nic,
    _Silent,
    _SkipError,
    _StageFailedError,
    _tail,
    _wait_http,
    pick_hosts,
)
from .demo_prom import PrometheusServer, ScrapeJob, free_port
from .faults import Fault, FaultKind

log = logging.getLogger(__name__)


class Demo:
    """Runs the stages; use as a context manager (or call :meth:`close`) so everything started is stopped."""

    def __init__(self, options: DemoOptions, observer: DemoObserver | None = None) -> None:
        self.options = options
        self.observer: DemoObserver = observer or _Silent()
        self.state = options.state or settings.state_dir() / "demo"
        self._stack = contextlib.ExitStack()
        self._owner_pid = os.getpid()
        self._inv: Inventory | None = None
        self.report: DemoReport | None = None
        # shared between stages
        self._prom: PrometheusServer | None = None
        self._prom_started_ts: float | None = None
        self._gens: dict[str, Any] = {}
        self._serve: _Child | None = None
        self._children: list[_Child] = []
        self._lab_up = False
        self._lab_reused = False
        self._traffic: _LabTraffic | None = None
        self._keep_workdir = False
        self._storm: Any = None  # the report's StormTimeline
        self._workdir: Path | None = None

    # -- lifecycle ----------------------------------------------------------------------------------------------

    def __enter__(self) -> Demo:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop everything this demo started (in reverse order). Safe to call more than once.

        Only the process that made the demo cleans up: pyroute2 forks helper children to open sockets inside a
        network namespace, and a child stopped by a signal unwinds the parent's frames it inherited, this
        ``close`` included; it must not delete the namespaces and files the parent still uses.
        """
        if os.getpid() != self._owner_pid:
            return
        self._stack.close()

    @property
    def inventory(self) -> Inventory:
        if self._inv is None:
            self._inv = load_inventory(self.options.inventory)
        return self._inv

    @property
    def fabric(self) -> Fabric:
        return self.inventory.fabric

    def _note(self, stage: str, text: str) -> None:
        log.info("demo %s: %s", stage, text)
        self.observer.note(stage, text)

    def workdir(self) -> Path:
        """A temporary directory for this run, removed on close (unless kept for --keep-running)."""
        if self._workdir is None:
            self._workdir = Path(tempfile.mkdtemp(prefix="fabricd-demo-"))
            wd = self._workdir
            self._stack.callback(lambda: None if self._keep_workdir else shutil.rmtree(wd, ignore_errors=True))
        return self._workdir

    # -- the run --------------------------------------------------------------------------------------------------

    def run(self) -> DemoReport:
        fabric = self.fabric  # bad input raises here, before anything starts
        report = DemoReport(fabric=fabric.name, inventory=str(self.options.inventory), started_ts=time.time())
        self.report = report
        self.state.mkdir(parents=True, exist_ok=True)
        funcs: dict[str, Callable[[], StageResult]] = {
            "validate": self.stage_validate,
            "render": self.stage_render,
            "push": self.stage_push,
            "host": self.stage_host,
            "export": self.stage_export,
            "storm": self.stage_storm,
            "vm": self.stage_vm,
        }
        for index, (name, title) in enumerate(STAGES, start=1):
            self.observer.stage_started(index, len(STAGES), name, title)
            t0 = time.monotonic()
            try:
                result = funcs[name]()
            except _SkipError as exc:
                result = StageResult(name, title, StageStatus.SKIPPED, f"skipped: {exc}", {"reason": str(exc)})
            except _StageFailedError as exc:
                result = StageResult(name, title, StageStatus.FAILED, f"failed: {exc}",
                                     {"error": str(exc), **exc.data})
            except FabricdError as exc:
                result = StageResult(name, title, StageStatus.FAILED, f"failed: {exc.render()}",
                                     {"error": exc.render()})
            except OSError as exc:
                result = StageResult(name, title, StageStatus.FAILED, f"failed: {exc}", {"error": str(exc)})
            result.seconds = time.monotonic() - t0
            report.stages.append(result)
            self.observer.stage_done(result)
            if name == "storm":
                self._save_record(report)
                self._quiet()
        if self.options.keep_running:
            report.services.update(self._keep_services())
        report.workdir = str(self._workdir) if self._workdir is not None else None
        report.ended_ts = time.time()
        return report

    def _quiet(self) -> None:
        """After the storm: stop the replay writers and the lab traffic (the VM stage wants the CPU)."""
        for gen in self._gens.values():
            gen.close()
        if self._traffic is not None:
            self._traffic.stop()

    def _result(self, name: str, status: StageStatus, summary: str, data: dict[str, Any]) -> StageResult:
        title = dict(STAGES)[name]
        return StageResult(name, title, status, summary, data)

    # -- 1. validate ------------------------------------------------------------------------------------------------

    def stage_validate(self) -> StageResult:
        v = validate(self.inventory)
        fabric = self.fabric
        ctx = v.context
        nics = [n for h in fabric.hosts for n in h.nics if n.peer]
        hs = [p for p in v.problems if p.code in HOST_SWITCH_CHECKS]
        hs_errors = [p for p in hs if p.severity == "error"]
        if ctx.deadlock_applies:
            cycles = len(ctx.deadlock.cycles)
            deadlock = {"applicable": True, "cycles": cycles,
                        "dependencies": ctx.deadlock.dependencies, "endpoint_switches": ctx.deadlock.endpoints}
            dl_text = (f"{cycles} PFC deadlock cycle(s)" if cycles else
                       f"no PFC deadlock cycle ({ctx.deadlock.dependencies} dependencies between transit buffers)")
        else:
            deadlock = {"applicable": False, "cycles": 0}
            dl_text = "PFC deadlock analysis not applicable (no lossless traffic)"
        data: dict[str, Any] = {
            "switches": len(fabric.switches), "hosts": len(fabric.hosts), "links": len(fabric.links),
            "checks": len(ALL_CHECKS), "errors": len(v.errors), "warnings": len(v.warnings),
            "problems": [{"severity": p.severity, "code": p.code, "text": p.render()} for p in v.problems],
            "host_switch": {"checks": list(HOST_SWITCH_CHECKS), "nics": len(nics), "errors": len(hs_errors),
                            "warnings": len(hs) - len(hs_errors)},
            "deadlock": deadlock,
        }
        summary = (f"{fabric.name}: {len(fabric.switches)} switches, {len(fabric.hosts)} hosts, "
                   f"{len(fabric.links)} links; {len(ALL_CHECKS)} checks: {len(v.errors)} errors, "
                   f"{len(v.warnings)} warnings; host-to-switch checks on {len(nics)} NICs: "
                   f"{len(hs_errors)} errors; {dl_text}")
        if v.errors:
            raise _StageFailedError(f"{len(v.errors)} validation error(s); `fabricd validate` lists them", data)
        return self._result("validate", StageStatus.OK, summary, data)

    # -- 2. render --------------------------------------------------------------------------------------------------

    def stage_render(self) -> StageResult:
        from fabricd.render.render import render_devices, write_render

        out = self.state / "render"
        shutil.rmtree(out, ignore_errors=True)
        rows: list[dict[str, Any]] = []
        for r in render_devices(self.fabric):
            write_render(r, out)
            rows.append({"device": r.device, "kind": r.kind, "platform": r.platform,
                         "files": [f.relpath for f in r.files], "lines": sum(f.lines for f in r.files),
                         "bytes": sum(f.size_bytes for f in r.files), "warnings": len(r.warnings)})
        switches = [r for r in rows if r["kind"] == "switch"]
        hosts = [r for r in rows if r["kind"] == "host"]
        nos = sorted({r["platform"] for r in switches})
        data = {"out": str(out), "devices": len(rows), "switches": len(switches), "hosts": len(hosts), "nos": nos,
                "files": sum(len(r["files"]) for r in rows), "lines": sum(r["lines"] for r in rows),
                "warnings": sum(r["warnings"] for r in rows), "rows": rows}
        noses = f"{len(nos)} NOS{'es' if len(nos) != 1 else ''}"
        summary = (f"{len(rows)} devices -> {out}: {len(switches)} switches on {noses} "
                   f"({', '.join(nos)}), {len(hosts)} hosts; {data['files']} files, {data['lines']} lines; "
                   f"{data['warnings']} values a platform cannot express exactly (listed by `fabricd render`)")
        return self._result("render", StageStatus.OK, summary, data)

    # -- 3. push ------------------------------------------------------------------------------------------------

    def stage_push(self) -> StageResult:
        from fabricd.deploy.pipeline import PushOptions, push
        from fabricd.deploy.result import TargetResult, TargetState
        from fabricd.deploy.targets import render_candidates, select_targets
        from fabricd_lab import daemon

        fabric = self.fabric
        if not fabric.switches:
            raise _SkipError("the inventory has no switches")
        remote = [f"{sw.name} ({sw.mgmt.host}:{sw.mgmt.port})" for sw in fabric.switches
                  if sw.mgmt.host not in LOOPBACK]
        if remote:
            raise _SkipError(f"the switches' management addresses are not on this machine ({', '.join(remote[:3])}"
                             f"{', ...' if len(remote) > 3 else ''}): the demo pushes only to the lab's simulators "
                             "on 127.0.0.1; `fabricd push` pushes to real switches")
        st = daemon.status()
        if st["running"]:
            if st.get("fabric") != fabric.name:
                raise _StageFailedError(
                    f"a lab for fabric {st.get('fabric')!r} is already running (pid {st['pid']})",
                    {"hint": "stop it with `fabricd lab down`, then run the demo again"})
            self._lab_reused = True
            self._note("push", f"using the switch lab that is already running (pid {st['pid']}); it stays up")
        else:
            swap = demo_swap(fabric)
            st = daemon.up(fabric, [swap] if swap is not None else [])
            self._stack.callback(self._lab_down)
            if swap is not None:
                self._note("push", f"the demo's lab has the cables in {swap.device} {swap.arg} swapped on purpose "
                                   f"(`--fault {swap}`): `fabricd audit cabling` must find them")
            self._note("push", f"fabricd lab up: {len(st['devices'])} SSH simulators on 127.0.0.1 "
                               f"(pid {st['pid']}); host keys in {st['known_hosts']}")
        self._lab_up = True
        targets = select_targets(fabric)
        candidates = render_candidates(fabric, targets)
        opts = PushOptions(concurrency=16)

        def done(r: TargetResult) -> None:
            self._note("push", f"{r.target} ({r.platform}): {r.state.value} in {r.duration_s:.2f} s"
                               + (f": {r.error}" if r.error else ""))

        first = push(targets, candidates, opts, on_result=done)
        self._note("push", "pushing the same intent again (it must change nothing)")
        second = push(targets, candidates, opts)

        def counts(report: Any) -> dict[str, int]:
            states = [r.state for r in report.results]
            return {"devices": len(states), "ok": sum(1 for r in report.results if not r.failed),
                    "changed": sum(1 for r in report.results if r.changed),
                    "unchanged": states.count(TargetState.UNCHANGED),
                    "failed": len(report.failed)}

        diffs = {}
        for r in first.results:
            signed = diff_signs(r.platform, r.diff)  # NVUE's diff is YAML: `- set:` adds what follows
            added, removed = diff_counts(r.platform, r.diff)
            diffs[r.target] = {"lines": len(signed), "added": added, "removed": removed,
                               "head": [line for _, line in signed[:DIFF_HEAD_LINES]],
                               "head_signs": [sign for sign, _ in signed[:DIFF_HEAD_LINES]]}
        data: dict[str, Any] = {
            "lab": {"pid": st["pid"], "reused": self._lab_reused,
                    "devices": [{"name": d["name"], "platform": d["platform"],
                                 "address": f"{d['host']}:{d['port']}"} for d in st["devices"]]},
            "devices": len(targets),
            "push": counts(first),
            "repush": counts(second),
            "rows": [{"target": r.target, "platform": r.platform, "state": r.state.value, "changed": r.changed,
                      "seconds": round(r.duration_s, 2), "error": r.error,
                      "repush_state": r2.state.value}
                     for r, r2 in zip(first.results, second.results, strict=True)],
            "diffs": diffs,
        }
        data["cabling"] = self._cabling(targets)
        p, r2 = data["push"], data["repush"]
        summary = (f"lab: {len(st['devices'])} switches over SSH; push: {p['changed']} changed, "
                   f"{p['unchanged']} already matched, {p['failed']} failed; re-push: {r2['changed']} changed, "
                   f"{r2['unchanged']} unchanged, {r2['failed']} failed")
        if p["failed"] or r2["failed"] or r2["changed"]:
            raise _StageFailedError("the push or the idempotent re-push did not go cleanly", data)
        return self._result("push", StageStatus.OK, summary, data)

    def _cabling(self, targets: list[Any]) -> dict[str, Any]:
        """``fabricd audit cabling`` over SSH on the lab: what LLDP says against the inventory's cables."""
        from fabricd.audit.cabling import evaluate, read_lldp
        from fabricd.audit.switch import AuditOptions, driver_factory

        factory = driver_factory(AuditOptions())
        report = evaluate(self.fabric, [read_lldp(sw, factory) for sw in targets])
        findings = [f for c in report.checks for f in c.findings]
        self._note("push", f"audit cabling: {len(findings)} finding(s)"
                           + "".join(f"\n  {f.code} {f.message}; {f.hint}" for f in findings[:4]))
        return {"compliant": report.compliant, "codes": sorted({f.code for f in findings}),
                "findings": [{"code": f.code, "object": f.object, "message": f.message, "hint": f.hint}
                             for f in findings]}

    def _lab_down(self) -> None:
        """Stop the lab this demo started (not one it found running), unless --keep-running keeps it."""
        if self._lab_reused or self._keep_workdir:
            return
        from fabricd_lab import daemon

        daemon.down()

    # -- 4. host ------------------------------------------------------------------------------------------------

    def stage_host(self) -> StageResult:
        if os.geteuid() != 0:
            raise _SkipError("needs root to create a network namespace (run `sudo fabricd demo`)")
        if shutil.which("ip") is None:
            raise _SkipError("needs iproute2 (`ip`) to create a network namespace (apt-get install iproute2)")
        from fabricd.audit.host import audit_host
        from fabricd.hosts.base import apply_all
        from fabricd.hosts.factory import close_backends, open_backends
        from fabricd.intent.host import HostPlan, host_intent
        from fabricd_lab.fake_host import build_fake_host, fake_nics_for

        host, _ = pick_hosts(self.fabric, self.options.host, self.options.victim)
        intent = host_intent(self.fabric, host.name)
        ns, peer_ns = self._make_netns(host)
        root = build_fake_host(self.workdir() / f"{host.name}-sys", fake_nics_for(intent, skip_vlan=True))
        self._note("host", f"network namespace {ns} (NIC side) and {peer_ns} (switch side, MTU of the peer port); "
                           f"fake mlx5 /sys tree from real captures at {root}")
        skip = HOST_SKIP_PARTS

        def audit() -> AuditReport:
            backends = open_backends(root, ns, skip)
            sources = {b.backend: (f"root {root}" if b.backend.value == "sysfs" else f"netns {ns}") for b in backends}
            try:
                return audit_host(intent, backends, gid_root=root, skip=skip, sources=sources)
            finally:
                close_backends(backends)

        def plan() -> tuple[HostPlan, list[Any]]:
            backends = open_backends(root, ns, skip)
            steps = []
            for b in backends:
                steps += b.plan(intent, b.read_state(intent, skip), skip).steps
            return HostPlan(host=intent.host, steps=steps), backends

        before = audit()
        self._note("host", f"audit before apply: {len(before.findings)} finding(s) (a fresh host)")
        the_plan, backends = plan()
        try:
            applied = apply_all(backends, the_plan)
        finally:
            close_backends(backends)
        self._note("host", f"applied {sum(len(r.applied) for r in applied.results)} of {len(the_plan.steps)} step(s)"
                           f" with {', '.join(r.backend.value for r in applied.results)}")
        after = audit()
        replan, backends = plan()
        close_backends(backends)
        by_backend: dict[str, int] = {}
        for s in the_plan.steps:
            by_backend[s.backend.value] = by_backend.get(s.backend.value, 0) + 1
        data: dict[str, Any] = {
            "host": host.name, "netns": ns, "root": str(root), "skipped_parts": sorted(skip),
            "skip_reason": HOST_SKIP_REASON,
            "before": {"compliant": before.compliant, "findings": len(before.findings),
                       "failed_checks": [c.code for c in before.checks if c.status is Status.FAIL]},
            "plan": {"steps": len(the_plan.steps), "by_backend": by_backend},
            "apply": {"ok": applied.ok, "applied": sum(len(r.applied) for r in applied.results),
                      "rolled_back": [b.value for b in applied.rolled_back]},
            "after": {"compliant": after.compliant, "findings": len(after.findings),
                      "summary": {st.value: sum(1 for c in after.checks if c.status is st) for st in Status},
                      "checks": [{"code": c.code, "title": c.title, "status": c.status.value, "note": c.note,
                                  "findings": [f.render() for f in c.findings]} for c in after.checks]},
            "replan_steps": len(replan.steps),
        }
        summary = (f"{host.name}: {len(before.findings)} findings before; applied {data['apply']['applied']} steps "
                   f"({', '.join(f'{k} {v}' for k, v in by_backend.items())}); after: "
                   f"{'compliant' if after.compliant else f'{len(after.findings)} findings'} "
                   f"({data['after']['summary']['pass']} pass, {data['after']['summary']['skip']} skipped); "
                   f"re-plan: {len(replan.steps)} steps")
        if not applied.ok or not after.compliant or replan.steps:
            raise _StageFailedError("the host does not match its intent after apply", data)
        return self._result("host", StageStatus.OK, summary, data)

    def _make_netns(self, host: Host) -> tuple[str, str]:
        """Two namespaces joined by a veth pair: the host's NIC netdev and a switch-side end with the peer port's MTU.

        Made with iproute2 (``ip netns add`` also sets up /var/run/netns as a shared mount); removed on close.
        """
        nic = _rdma_nic(host)
        assert nic is not None
        port_mtu = 9216
        sw, port = split_endpoint(nic.peer or "")
        switch = self.fabric.switch(sw)
        if switch is not None:
            port_mtu = next((p.mtu for p in switch.ports if p.name == port), port_mtu)
        ns = f"{NETNS_PREFIX}{os.getpid()}"
        peer_ns = f"{ns}-sw"
        for name in (ns, peer_ns):
            _ip("netns", "add", name)
            self._stack.callback(_ip, "netns", "del", name, check=False)
        peer_if = "swp1"  # the switch side only needs to exist and be up; switch port names may not be netdev names
        _ip("-n", ns, "link", "add", nic.netdev, "type", "veth", "peer", "name", peer_if, "netns", peer_ns)
        _ip("-n", peer_ns, "link", "set", peer_if, "mtu", str(port_mtu), "up")
        return ns, peer_ns

    # -- 5. export ------------------------------------------------------------------------------------------------

    def stage_export(self) -> StageResult:
        prom = PrometheusServer(self.workdir() / "prometheus", [], [self._rules_file()],
                                binary=self.options.prometheus_bin)
        if not Path(prom.binary).exists() and shutil.which(prom.binary) is None:
            raise _SkipError(f"{prom.binary} is not installed (as root: apt-get install prometheus)")
        from fabricd_lab.replay import ReplayHost, ReplayNic
        from fabricd_lab.stormgen import StormGen

        fabric = self.fabric
        origin, victim = pick_hosts(fabric, self.options.host, self.options.victim)
        hosts = [origin] + ([victim] if victim is not None else [])
        prios = tuple(fabric.policy.pfc.priorities)
        ecn_prios = tuple(fabric.policy.dcqcn.np_priorities or [fabric.policy.qos.roce.priority])
        roce = fabric.policy.qos.roce
        roots: dict[str, Path] = {}
        for h in hosts:
            nic = _rdma_nic(h)
            assert nic is not None and nic.rdma_device is not None
            rnic = ReplayNic(nic.netdev, nic.rdma_device, port=nic.rdma_port, channels=2, pfc_priorities=prios,
                             ecn_priorities=ecn_prios, roce_tos=roce.dscp << 2 | 2, mtu=nic.mtu,
                             rate=_rate_text(nic.speed.gbps) if nic.speed else "100 Gb/sec (2X HDR)")
            root = self.workdir() / "replay" / h.name
            replay = ReplayHost(root, [rnic])
            replay.build()
            gen = StormGen(replay, tick_s=WRITER_TICK_S, traffic_pps=self.options.traffic_pps)
            gen.start()
            self._stack.callback(gen.close)
            self._gens[h.name] = gen
            roots[h.name] = root
        self._note("export", f"replay roots (mlx5-like sysfs and ethtool text, rewritten every "
                             f"{WRITER_TICK_S * 1000:.0f} ms with RoCE traffic at {self.options.traffic_pps:.0f} "
                             f"packets/s on priority {roce.priority}) for {', '.join(roots)}")
        switches = self._lab_up
        serve_argv = ["serve", str(self.options.inventory),
                      *[a for name, root in roots.items() for a in ("--root", f"{name}={root}")],
                      "--switches" if switches else "--no-switches"]
        jobs = [("serve", serve_argv, "/healthz")]
        jobs += [(f"export-{name}", ["export", "host", "--root", str(root)], "/metrics")
                 for name, root in list(roots.items())[1:]]
        children = self._fabricd(jobs)
        serve = children[0]
        self._serve = serve
        exporters = {origin.name: serve}
        exporters.update(zip(list(roots)[1:], children[1:], strict=True))
        self._note("export", f"fabricd serve on {serve.url}: host exporter ({origin.name}), watchdog on "
                             f"{', '.join(roots)}" + (", switch poller on the lab" if switches else "")
                             + ", drift audit, /status and /events")
        for name, exp in list(exporters.items())[1:]:
            self._note("export", f"fabricd export host --root <replay root of {name}> on {exp.url}")
        if switches:
            ports = [(sw.name, p.name) for sw in fabric.switches for p in sw.ports]
            traffic = _LabTraffic(ports, roce.priority, self.options.traffic_pps)
            traffic.start()
            self._traffic = traffic
            self._stack.callback(traffic.stop)
            self._note("export", f"lab traffic: {self.options.traffic_pps:.0f} packets/s on priority "
                                 f"{roce.priority} out of each of the {len(ports)} switch ports, 1% ECN-marked "
                                 "(`fabricd lab drive` traffic/ecn)")
        prom.jobs = [
            ScrapeJob("fabricd-serve", [(serve.address, {"host": origin.name})]),
            ScrapeJob("fabricd-host", [(e.address, {"host": n}) for n, e in exporters.items() if e is not serve]),
        ]
        version = prom.version()
        self._prom_started_ts = time.time()
        url = prom.start()
        self._prom = prom
        self._stack.callback(prom.stop)
        self._note("export", f"{version} on {url} (1 s scrape and rule evaluation, rules "
                             f"{self._rules_file().name}, storage {prom.workdir / 'data'})")
        targets = self._wait_targets(prom, len(exporters), timeout_s=20.0)
        time.sleep(3.5)  # a few scrapes, so rates have two points
        counters = self._counter_table(prom)
        series = prom.query('count({job=~"fabricd.*"})')
        n_series = int(series[0].value) if series else 0
        data = {"prometheus": {"url": url, "version": version, "pid": prom.proc.pid if prom.proc else None},
                "serve": {"url": serve.url, "pid": serve.proc.pid},
                "exporters": {n: {"url": e.url, "pid": e.proc.pid} for n, e in exporters.items() if e is not serve},
                "targets": targets, "series": n_series, "counters": counters, "hosts": list(roots)}
        up = sum(1 for t in targets if t["health"] == "up")
        job_names = ", ".join(sorted({t["job"] for t in targets}))
        summary = (f"Prometheus {url}: {up}/{len(targets)} targets up ({job_names}), {n_series} fabricd series; "
                   f"{len(counters)} key counters read back through PromQL")
        if up < len(targets) or not counters:
            raise _StageFailedError("Prometheus did not scrape every exporter", data)
        return self._result("export", StageStatus.OK, summary, data)

    def _fabricd(self, jobs: list[tuple[str, list[str], str]], timeout_s: float = 30.0) -> list[_Child]:
        """Start ``fabricd ARGV --listen 127.0.0.1:<free port>`` for each (name, argv, ready path) at once, each in
        its own session, and wait until each answers on its ready path (a lost port race is retried)."""
        out: list[_Child] = []
        pending = [self._spawn(name, argv) for name, argv, _ in jobs]
        for (name, argv, ready), first in zip(jobs, pending, strict=True):
            child = first
            for attempt in range(3):
                if _wait_http(child.url + ready, timeout_s, child.proc):
                    break
                last = _tail(child.log)
                child.stop()
                if "cannot bind" not in last or attempt == 2:
                    raise _StageFailedError(f"fabricd {argv[0]} did not come up: {last or 'no output'}")
                child = self._spawn(name, argv)
            out.append(child)
        return out

    def _spawn(self, name: str, argv: list[str]) -> _Child:
        port = free_port()
        log_path = self.workdir() / f"{name}.log"
        with log_path.open("ab") as logf:
            proc = subprocess.Popen([*FABRICD_ARGV, *argv, "--listen", f"127.0.0.1:{port}"],
                                    stdin=subprocess.DEVNULL, stdout=logf, stderr=logf, start_new_session=True)
        child = _Child(name, proc, log_path, f"http://127.0.0.1:{port}")
        self._children.append(child)
        self._stack.callback(child.stop)
        return child

    def _rules_file(self) -> Path:
        return settings.data_dir("exporters") / "rules" / "fabricd.rules.yml"

    def _keep_services(self) -> dict[str, Any]:
        """--keep-running: detach Prometheus and the fabricd processes; record them for `fabricd demo --stop`."""
        out: dict[str, Any] = {}
        kept: list[dict[str, Any]] = []
        prom = self._prom
        if prom is not None and prom.proc is not None:
            pid = prom.detach()
            out["prometheus"] = {"url": prom.url, "pid": pid,
                                 "note": f"alerts {prom.url}/alerts, graphs {prom.url}/graph"}
            kept.append({"name": "prometheus", "pid": pid, "marker": str(prom.workdir)})
        for child in self._children:
            if child.proc.poll() is None:
                pid = child.detach()
                out[child.name] = {"url": child.url, "pid": pid}
                kept.append({"name": child.name, "pid": pid, "marker": f"--listen {child.address}"})
        lab_kept = self._lab_up and not self._lab_reused
        if lab_kept:
            from fabricd_lab import daemon

            st = daemon.status()
            if st["running"]:
                first, last = st["devices"][0], st["devices"][-1]
                out["lab"] = {"url": f"ssh://{first['host']}:{first['port']}-{last['port']}", "pid": st["pid"],
                              "note": "`fabricd lab status` lists each switch; `fabricd push`, `fabricd diff` and "
                                      "`fabricd lab drive` work on it"}
            else:
                lab_kept = False
        if kept or lab_kept:
            self._keep_workdir = True
            record = {"workdir": str(self._workdir), "processes": kept, "lab": lab_kept}
            (self.state / RUNNING_FILE).write_text(json.dumps(record, indent=1))
            out["stop"] = {"command": "fabricd demo --stop",
                           "note": "stops these processes" + (" and the switch lab (`fabricd lab down`)"
                                                              if lab_kept else "")
                                   + " and removes the replay roots"}
            out["note"] = ("the replay roots stay as the storm left them: their counters no longer move once the "
                           "demo has exited")
        return out

    def _wait_targets(self, prom: PrometheusServer, expected: int, timeout_s: float) -> list[dict[str, Any]]:
        deadline = time.monotonic() + timeout_s
        rows: list[dict[str, Any]] = []
        while time.monotonic() < deadline:
            rows = [{"job": t["labels"].get("job", ""), "instance": t["labels"].get("instance", ""),
                     "health": t.get("health", "unknown"), "labels": t["labels"]} for t in prom.targets()]
            if len(rows) >= expected and all(r["health"] == "up" for r in rows):
                break
            time.sleep(0.25)
        return rows

    def _counter_table(self, prom: PrometheusServer) -> list[dict[str, Any]]:
        pol = self.fabric.policy
        p = pol.qos.roce.priority
        queries = (
            (f"RoCE traffic on priority {p}", "bytes/s",
             f'sum by (host, direction) (rate(fabricd_nic_priority_bytes_total{{priority="{p}"}}[5s]))'),
            (f"PFC pause frames on priority {p}", "frames",
             f'sum by (host, direction) (fabricd_nic_pfc_pause_frames_total{{priority="{p}"}})'),
            ("RDMA port data", "bytes/s",
             "sum by (host, direction) (rate(fabricd_rdma_port_data_bytes_total[5s]))"),
            (f"ECN enabled on priority {p} (roce_np, roce_rp)", "0/1",
             f'min by (host) (fabricd_nic_ecn_enabled{{priority="{p}"}})'),
            ("RoCE ToS (RDMA-CM default)", "", "max by (host) (fabricd_nic_roce_tos)"),
            (f"switch PFC pause frames on priority {p}", "frames/s",
             f'sum by (switch, direction) (rate(fabricd_switch_pfc_pause_frames_total{{priority="{p}"}}[5s]))'),
            (f"switch ECN-marked packets, queue {p}", "packets/s",
             f'sum by (switch) (rate(fabricd_switch_queue_ecn_marked_packets_total{{queue="{p}"}}[5s]))'),
            ("switches up", "", "sum(fabricd_switch_up)"),
            ("watchdog detection time", "s", "max(fabricd_watchdog_detection_seconds)"),
        )
        rows = []
        for what, unit, q in queries:
            for s in prom.query(q):
                where = " ".join(f"{k}={s.labels[k]}" for k in ("host", "switch", "direction") if k in s.labels)
                rows.append({"what": what, "where": where, "value": s.value, "unit": unit, "query": q})
        return rows
    # -- 6. storm: demo_storm.py -----------------------------------------------------------------------------------

    def stage_storm(self) -> StageResult:
        return demo_storm.stage_storm(self)

    # -- 7. vm ----------------------------------------------------------------------------------------------------

    def stage_vm(self) -> StageResult:
        if not self.options.vm:
            raise _SkipError("--no-vm")
        from fabricd_lab.vm import image as vm_image
        from fabricd_lab.vm import instance as vm_instance
        from fabricd_lab.vm import qemu

        if shutil.which(qemu.QEMU) is None:
            raise _SkipError(f"{qemu.QEMU} is not installed (as root: apt-get install qemu-system-x86)")
        try:
            recipe = vm_image.default_recipe()
        except FabricdError as exc:
            raise _SkipError(f"no Debian mirror for the VM image: {exc.render()}") from None
        if vm_image.find_image(recipe) is None:
            raise _SkipError("no cached Soft-RoCE VM image: build it once with `sudo fabricd lab vm build` "
                             "(a few minutes; then every `fabricd demo` runs verbs traffic in it)")
        existing = vm_instance.load(VM_NAME)
        reused = existing is not None and not existing.stopped and all(existing.alive().values())
        t0 = time.monotonic()
        try:
            inst = vm_instance.up(self.inventory, recipe=recipe, name=VM_NAME,
                                  progress=lambda msg: self._note("vm", msg))
        except FabricdError as exc:
            raise _SkipError(f"the Soft-RoCE VMs did not boot here: {exc.render()}") from None
        if not reused:
            self._stack.callback(vm_instance.down, VM_NAME)
        boot_s = time.monotonic() - t0
        a, b = (e.host for e in inst.endpoints)
        self._note("vm", f"two Debian VMs ({inst.accel.upper()}: {inst.accel_reason}) play {a} and {b} with rxe on "
                         f"their NICs; fabricd validate-fabric --pair {a}:{b}")
        res = subprocess.run([*FABRICD_ARGV, "validate-fabric", str(self.options.inventory), "--pair", f"{a}:{b}",
                              "--name", VM_NAME, "--output", "json"], capture_output=True, text=True,
                             timeout=VM_TRAFFIC_TIMEOUT_S, check=False)
        try:
            report = json.loads(res.stdout)
        except ValueError:
            raise _StageFailedError(f"validate-fabric exited {res.returncode}: "
                                    f"{res.stderr.strip().splitlines()[-1:] or 'no output'}") from None
        pair = report["pairs"][0]
        checks = [{"code": c.get("code"), "status": c.get("status"), "detail": c.get("detail"),
                   "needs": c.get("needs")} for c in pair.get("checks", [])]
        counts = {st: sum(1 for c in checks if c["status"] == st) for st in ("pass", "fail", "not_checkable")}
        data = {"accel": inst.accel, "accel_reason": inst.accel_reason, "boot_s": round(boot_s, 1),
                "reused": reused, "pair": f"{a}:{b}", "ran": pair["ran"], "ok": pair["ok"], "tos": report.get("tos"),
                "error": pair.get("error"), "checks": checks, "counts": counts, "traffic": pair.get("traffic"),
                "exit_code": res.returncode}
        summary = (f"{a} -> {b} over Soft-RoCE ({inst.accel.upper()}): {counts['pass']} checks pass, "
                   f"{counts['fail']} fail, {counts['not_checkable']} not checkable on rxe (need real NICs)")
        if not pair["ran"] or not pair["ok"]:
            raise _StageFailedError(pair.get("error") or "validate-fabric found problems", data)
        return self._result("vm", StageStatus.OK, summary, data)

    # -- the run record -------------------------------------------------------------------------------------------

    def _save_record(self, report: DemoReport) -> None:
        from fabricd_lab.report.prometheus import fetch_panels, query_range
        from fabricd_lab.report.record import ReportError, RunRecord, Series, save_record

        prom = self._prom
        if prom is None or prom.proc is None or self._prom_started_ts is None:
            report.run_record_note = "no run record: Prometheus did not run (see the export stage)"
            return
        start, end = self._prom_started_ts, time.time()
        # irate: the last two 1 s scrapes, so the storm shows as the plateau it is (a 5 s rate would ramp)
        q = ("sum by (host, interface, priority, direction) "
             "(irate(fabricd_nic_pfc_pause_duration_seconds_total[3s]))")
        try:
            pause = [Series(name=s.name, labels=_host_as_device(s.labels), points=s.points)
                     for s in query_range(prom.url, q, start, end)]
            panels = fetch_panels(prom.url, start, end)
        except ReportError as exc:
            report.run_record_note = f"no run record: {exc.render()}"
            return
        record = RunRecord(fabric=self.fabric.name, inventory=str(self.options.inventory), started_ts=start,
                           ended_ts=end, pause=pause, storm=self._storm, panels=panels)
        path = self.state / "run.json"
        save_record(record, path)
        report.run_record = str(path)


@contextlib.contextmanager
def running(options: DemoOptions, observer: DemoObserver | None = None) -> Iterator[Demo]:
    """``with running(opts) as demo: demo.run()``: everything started is stopped on exit, errors included."""
    demo = Demo(options, observer)
    try:
        yield demo
    finally:
        demo.close()


def demo_swap(fabric: Fabric) -> Fault | None:
    """The miswire the demo's lab carries: the cables of the first switch with two host NICs cabled to it swapped
    (``swap-cables``), or None when no switch has two."""
    by_switch: dict[str, list[str]] = {}
    for host in fabric.hosts:
        for nic in host.nics:
            if nic.peer:
                name, port = split_endpoint(nic.peer)
                by_switch.setdefault(name, []).append(port)
    for sw in fabric.switches:
        ports = by_switch.get(sw.name, [])
        if len(ports) >= 2:
            return Fault(sw.name, FaultKind.SWAP_CABLES, f"{ports[0]},{ports[1]}")
    return None
