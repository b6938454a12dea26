"""The demo's stages other than export and storm (:mod:`.demo_export`, :mod:`.demo_storm`): validate, render,
push (the switch lab), host (a namespace and a fake mlx5 tree) and vm (Soft-RoCE), each a :class:`Stage`.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from typing import TYPE_CHECKING, Any

from fabricd.audit.report import AuditReport, Status
from fabricd.deploy.diffstat import diff_counts, diff_signs
from fabricd.errors import FabricdError
from fabricd.model import Fabric, Host, split_endpoint
from fabricd.nos.validate import ALL_CHECKS, validate

from .demo_context import Stage
from .demo_parts import (
    DIFF_HEAD_LINES,
    FABRICD_ARGV,
    HOST_SKIP_PARTS,
    HOST_SKIP_REASON,
    HOST_SWITCH_CHECKS,
    LOOPBACK,
    NETNS_PREFIX,
    VM_NAME,
    VM_TRAFFIC_TIMEOUT_S,
    StageFailedError,
    StageResult,
    StageSkippedError,
    pick_hosts,
    rdma_nic,
    run_ip,
)
from .faults import Fault, FaultKind

if TYPE_CHECKING:
    from fabricd_lab.vm.image import ImageRecipe


class ValidateStage(Stage):
    """Every semantic check, the host-to-switch ones counted apart, and the PFC deadlock analysis."""

    name = "validate"

    def run(self) -> StageResult:
        v = validate(self.ctx.inventory)
        fabric = self.ctx.fabric
        ctx = v.context
        nics = [n for h in fabric.hosts for n in h.nics if n.peer]
        hs = [p for p in v.problems if p.code in HOST_SWITCH_CHECKS]
        hs_errors = [p for p in hs if p.severity == "error"]
        if ctx.deadlock_applies:
            cycles = len(ctx.deadlock.cycles)
            deadlock = {
                "applicable": True,
                "cycles": cycles,
                "dependencies": ctx.deadlock.dependencies,
                "endpoint_switches": ctx.deadlock.endpoints,
            }
            dl_text = (
                f"{cycles} PFC deadlock cycle(s)"
                if cycles
                else f"no PFC deadlock cycle ({ctx.deadlock.dependencies} dependencies between transit buffers)"
            )
        else:
            deadlock = {"applicable": False, "cycles": 0}
            dl_text = "PFC deadlock analysis not applicable (no lossless traffic)"
        data: dict[str, Any] = {
            "switches": len(fabric.switches),
            "hosts": len(fabric.hosts),
            "links": len(fabric.links),
            "checks": len(ALL_CHECKS),
            "errors": len(v.errors),
            "warnings": len(v.warnings),
            "problems": [{"severity": p.severity, "code": p.code, "text": p.render()} for p in v.problems],
            "host_switch": {
                "checks": list(HOST_SWITCH_CHECKS),
                "nics": len(nics),
                "errors": len(hs_errors),
                "warnings": len(hs) - len(hs_errors),
            },
            "deadlock": deadlock,
        }
        summary = (
            f"{fabric.name}: {len(fabric.switches)} switches, {len(fabric.hosts)} hosts, "
            f"{len(fabric.links)} links; {len(ALL_CHECKS)} checks: {len(v.errors)} errors, "
            f"{len(v.warnings)} warnings; host-to-switch checks on {len(nics)} NICs: "
            f"{len(hs_errors)} errors; {dl_text}"
        )
        if v.errors:
            raise StageFailedError(f"{len(v.errors)} validation error(s); `fabricd validate` lists them", data)
        return self.ok(summary, data)


class RenderStage(Stage):
    """Every switch config and every host's script and plan, written under the state dir."""

    name = "render"

    def run(self) -> StageResult:
        from fabricd.render.render import render_devices, write_render

        out = self.ctx.state / "render"
        shutil.rmtree(out, ignore_errors=True)
        rows: list[dict[str, Any]] = []
        for r in render_devices(self.ctx.fabric):
            write_render(r, out)
            rows.append(
                {
                    "device": r.device,
                    "kind": r.kind,
                    "platform": r.platform,
                    "files": [f.relpath for f in r.files],
                    "lines": sum(f.lines for f in r.files),
                    "bytes": sum(f.size_bytes for f in r.files),
                    "warnings": len(r.warnings),
                }
            )
        switches = [r for r in rows if r["kind"] == "switch"]
        hosts = [r for r in rows if r["kind"] == "host"]
        nos = sorted({r["platform"] for r in switches})
        data = {
            "out": str(out),
            "devices": len(rows),
            "switches": len(switches),
            "hosts": len(hosts),
            "nos": nos,
            "files": sum(len(r["files"]) for r in rows),
            "lines": sum(r["lines"] for r in rows),
            "warnings": sum(r["warnings"] for r in rows),
            "rows": rows,
        }
        noses = f"{len(nos)} NOS{'es' if len(nos) != 1 else ''}"
        summary = (
            f"{len(rows)} devices -> {out}: {len(switches)} switches on {noses} "
            f"({', '.join(nos)}), {len(hosts)} hosts; {data['files']} files, {data['lines']} lines; "
            f"{data['warnings']} values a platform cannot express exactly (listed by `fabricd render`)"
        )
        return self.ok(summary, data)


class PushStage(Stage):
    """The switch lab over SSH (started, or the one already running), a push with diffs, an idempotent
    re-push, and ``fabricd audit cabling`` on it."""

    name = "push"

    def run(self) -> StageResult:
        from fabricd.deploy.pipeline import PushOptions, push
        from fabricd.deploy.result import TargetResult
        from fabricd.deploy.targets import render_candidates, select_targets

        fabric = self.ctx.fabric
        self._check_local(fabric)
        st = self._lab(fabric)
        targets = select_targets(fabric)
        candidates = render_candidates(fabric, targets)
        opts = PushOptions(concurrency=16)

        def done(r: TargetResult) -> None:
            self.note(
                f"{r.target} ({r.platform}): {r.state.value} in {r.duration_s:.2f} s"
                + (f": {r.error}" if r.error else "")
            )

        first = push(targets, candidates, opts, on_result=done)
        self.note("pushing the same intent again (it must change nothing)")
        second = push(targets, candidates, opts)
        data: dict[str, Any] = {
            "lab": {
                "pid": st["pid"],
                "reused": self.ctx.lab_reused,
                "devices": [
                    {"name": d["name"], "platform": d["platform"], "address": f"{d['host']}:{d['port']}"}
                    for d in st["devices"]
                ],
            },
            "devices": len(targets),
            "push": _push_counts(first),
            "repush": _push_counts(second),
            "rows": [
                {
                    "target": r.target,
                    "platform": r.platform,
                    "state": r.state.value,
                    "changed": r.changed,
                    "seconds": round(r.duration_s, 2),
                    "error": r.error,
                    "repush_state": r2.state.value,
                }
                for r, r2 in zip(first.results, second.results, strict=True)
            ],
            "diffs": _push_diffs(first),
        }
        data["cabling"] = self._cabling(targets)
        p, r2 = data["push"], data["repush"]
        summary = (
            f"lab: {len(st['devices'])} switches over SSH; push: {p['changed']} changed, "
            f"{p['unchanged']} already matched, {p['failed']} failed; re-push: {r2['changed']} changed, "
            f"{r2['unchanged']} unchanged, {r2['failed']} failed"
        )
        if p["failed"] or r2["failed"] or r2["changed"]:
            raise StageFailedError("the push or the idempotent re-push did not go cleanly", data)
        return self.ok(summary, data)

    @staticmethod
    def _check_local(fabric: Fabric) -> None:
        """Skip unless every switch's management address is one the lab can serve on this machine."""
        if not fabric.switches:
            raise StageSkippedError("the inventory has no switches")
        remote = [
            f"{sw.name} ({sw.mgmt.host}:{sw.mgmt.port})" for sw in fabric.switches if sw.mgmt.host not in LOOPBACK
        ]
        if remote:
            raise StageSkippedError(
                f"the switches' management addresses are not on this machine ({', '.join(remote[:3])}"
                f"{', ...' if len(remote) > 3 else ''}): the demo pushes only to the lab's simulators "
                "on 127.0.0.1; `fabricd push` pushes to real switches"
            )

    def _lab(self, fabric: Fabric) -> dict[str, Any]:
        """The switch lab of this fabric: the one already running (left up), else one started with the demo's
        miswire (stopped on close). Returns ``daemon.status()``."""
        from fabricd_lab import daemon

        st = daemon.status()
        if st["running"]:
            if st.get("fabric") != fabric.name:
                raise StageFailedError(
                    f"a lab for fabric {st.get('fabric')!r} is already running (pid {st['pid']})",
                    {"hint": "stop it with `fabricd lab down`, then run the demo again"},
                )
            self.ctx.lab_reused = True
            self.note(f"using the switch lab that is already running (pid {st['pid']}); it stays up")
        else:
            swap = demo_swap(fabric)
            st = daemon.up(fabric, [swap] if swap is not None else [])
            self.ctx.defer(self._lab_down)
            if swap is not None:
                self.note(
                    f"the demo's lab has the cables in {swap.device} {swap.arg} swapped on purpose "
                    f"(`--fault {swap}`): `fabricd audit cabling` must find them"
                )
            self.note(
                f"fabricd lab up: {len(st['devices'])} SSH simulators on 127.0.0.1 "
                f"(pid {st['pid']}); host keys in {st['known_hosts']}"
            )
        self.ctx.lab_up = True
        return dict(st)

    def _cabling(self, targets: list[Any]) -> dict[str, Any]:
        """``fabricd audit cabling`` over SSH on the lab: what LLDP says against the inventory's cables."""
        from fabricd.audit.cabling import evaluate, read_lldp
        from fabricd.audit.switch import AuditOptions, driver_factory

        factory = driver_factory(AuditOptions())
        report = evaluate(self.ctx.fabric, [read_lldp(sw, factory) for sw in targets])
        findings = [f for c in report.checks for f in c.findings]
        self.note(
            f"audit cabling: {len(findings)} finding(s)"
            + "".join(f"\n  {f.code} {f.message}; {f.hint}" for f in findings[:4])
        )
        return {
            "compliant": report.compliant,
            "codes": sorted({f.code for f in findings}),
            "findings": [{"code": f.code, "object": f.object, "message": f.message, "hint": f.hint} for f in findings],
        }

    def _lab_down(self) -> None:
        """Stop the lab this demo started (not one it found running), unless --keep-running keeps it."""
        if self.ctx.lab_reused or self.ctx.keep_workdir:
            return
        from fabricd_lab import daemon

        daemon.down()


def _push_counts(report: Any) -> dict[str, int]:
    from fabricd.deploy.result import TargetState

    states = [r.state for r in report.results]
    return {
        "devices": len(states),
        "ok": sum(1 for r in report.results if not r.failed),
        "changed": sum(1 for r in report.results if r.changed),
        "unchanged": states.count(TargetState.UNCHANGED),
        "failed": len(report.failed),
    }


def _push_diffs(report: Any) -> dict[str, dict[str, Any]]:
    """Each target's diff: line counts and its first :data:`DIFF_HEAD_LINES` lines with their signs."""
    diffs = {}
    for r in report.results:
        signed = diff_signs(r.platform, r.diff)  # NVUE's diff is YAML: `- set:` adds what follows
        added, removed = diff_counts(r.platform, r.diff)
        diffs[r.target] = {
            "lines": len(signed),
            "added": added,
            "removed": removed,
            "head": [line for _, line in signed[:DIFF_HEAD_LINES]],
            "head_signs": [sign for sign, _ in signed[:DIFF_HEAD_LINES]],
        }
    return diffs


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


class HostStage(Stage):
    """One host's plan applied into a network namespace and a fake mlx5 ``/sys`` tree, audited before
    and after."""

    name = "host"

    def run(self) -> StageResult:
        if os.geteuid() != 0:
            raise StageSkippedError("needs root to create a network namespace (run `sudo fabricd demo`)")
        if shutil.which("ip") is None:
            raise StageSkippedError("needs iproute2 (`ip`) to create a network namespace (apt-get install iproute2)")
        from fabricd.audit.host import audit_host
        from fabricd.hosts.base import apply_all
        from fabricd.hosts.factory import close_backends, open_backends
        from fabricd.intent.host import HostPlan, host_intent
        from fabricd_lab.fake_host import build_fake_host, fake_nics_for

        host, _ = pick_hosts(self.ctx.fabric, self.ctx.options.host, self.ctx.options.victim)
        intent = host_intent(self.ctx.fabric, host.name)
        ns, peer_ns = self._make_netns(host)
        root = build_fake_host(self.ctx.workdir() / f"{host.name}-sys", fake_nics_for(intent, skip_vlan=True))
        self.note(
            f"network namespace {ns} (NIC side) and {peer_ns} (switch side, MTU of the peer port); "
            f"fake mlx5 /sys tree from real captures at {root}"
        )
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
        self.note(f"audit before apply: {len(before.findings)} finding(s) (a fresh host)")
        the_plan, backends = plan()
        try:
            applied = apply_all(backends, the_plan)
        finally:
            close_backends(backends)
        self.note(
            f"applied {sum(len(r.applied) for r in applied.results)} of {len(the_plan.steps)} step(s)"
            f" with {', '.join(r.backend.value for r in applied.results)}"
        )
        after = audit()
        replan, backends = plan()
        close_backends(backends)
        by_backend: dict[str, int] = {}
        for s in the_plan.steps:
            by_backend[s.backend.value] = by_backend.get(s.backend.value, 0) + 1
        data: dict[str, Any] = {
            "host": host.name,
            "netns": ns,
            "root": str(root),
            "skipped_parts": sorted(skip),
            "skip_reason": HOST_SKIP_REASON,
            "before": {
                "compliant": before.compliant,
                "findings": len(before.findings),
                "failed_checks": [c.code for c in before.checks if c.status is Status.FAIL],
            },
            "plan": {"steps": len(the_plan.steps), "by_backend": by_backend},
            "apply": {
                "ok": applied.ok,
                "applied": sum(len(r.applied) for r in applied.results),
                "rolled_back": [b.value for b in applied.rolled_back],
            },
            "after": {
                "compliant": after.compliant,
                "findings": len(after.findings),
                "summary": {st.value: sum(1 for c in after.checks if c.status is st) for st in Status},
                "checks": [
                    {
                        "code": c.code,
                        "title": c.title,
                        "status": c.status.value,
                        "note": c.note,
                        "findings": [f.render() for f in c.findings],
                    }
                    for c in after.checks
                ],
            },
            "replan_steps": len(replan.steps),
        }
        summary = (
            f"{host.name}: {len(before.findings)} findings before; applied {data['apply']['applied']} steps "
            f"({', '.join(f'{k} {v}' for k, v in by_backend.items())}); after: "
            f"{'compliant' if after.compliant else f'{len(after.findings)} findings'} "
            f"({data['after']['summary']['pass']} pass, {data['after']['summary']['skip']} skipped); "
            f"re-plan: {len(replan.steps)} steps"
        )
        if not applied.ok or not after.compliant or replan.steps:
            raise StageFailedError("the host does not match its intent after apply", data)
        return self.ok(summary, data)

    def _make_netns(self, host: Host) -> tuple[str, str]:
        """Two namespaces joined by a veth pair: the host's NIC netdev and a switch-side end with the peer port's MTU.

        Made with iproute2 (``ip netns add`` also sets up /var/run/netns as a shared mount); removed on close.
        """
        nic = rdma_nic(host)
        assert nic is not None
        port_mtu = 9216
        sw, port = split_endpoint(nic.peer or "")
        switch = self.ctx.fabric.switch(sw)
        if switch is not None:
            port_mtu = next((p.mtu for p in switch.ports if p.name == port), port_mtu)
        ns = f"{NETNS_PREFIX}{os.getpid()}"
        peer_ns = f"{ns}-sw"
        for name in (ns, peer_ns):
            run_ip("netns", "add", name)
            self.ctx.defer(run_ip, "netns", "del", name, check=False)
        peer_if = "swp1"  # the switch side only needs to exist and be up; switch port names may not be netdev names
        run_ip("-n", ns, "link", "add", nic.netdev, "type", "veth", "peer", "name", peer_if, "netns", peer_ns)
        run_ip("-n", peer_ns, "link", "set", peer_if, "mtu", str(port_mtu), "up")
        return ns, peer_ns


class VmStage(Stage):
    """Verbs traffic through ``fabricd validate-fabric`` in the demo's Soft-RoCE VMs."""

    name = "vm"

    def _recipe(self) -> ImageRecipe:
        """The VM image recipe, once qemu and a cached image are there (else the stage is skipped)."""
        if not self.ctx.options.vm:
            raise StageSkippedError("--no-vm")
        from fabricd_lab.vm import image as vm_image
        from fabricd_lab.vm import qemu

        if shutil.which(qemu.QEMU) is None:
            raise StageSkippedError(f"{qemu.QEMU} is not installed (as root: apt-get install qemu-system-x86)")
        try:
            recipe = vm_image.default_recipe()
        except FabricdError as exc:
            raise StageSkippedError(f"no Debian mirror for the VM image: {exc.render()}") from None
        if vm_image.find_image(recipe) is None:
            raise StageSkippedError(
                "no cached Soft-RoCE VM image: build it once with `sudo fabricd lab vm build` "
                "(a few minutes; then every `fabricd demo` runs verbs traffic in it)"
            )
        return recipe

    def run(self) -> StageResult:
        from fabricd_lab.vm import instance as vm_instance

        recipe = self._recipe()
        existing = vm_instance.load(VM_NAME)
        reused = existing is not None and not existing.stopped and all(existing.alive().values())
        t0 = time.monotonic()
        try:
            inst = vm_instance.up(self.ctx.inventory, recipe=recipe, name=VM_NAME, progress=self.note)
        except FabricdError as exc:
            raise StageSkippedError(f"the Soft-RoCE VMs did not boot here: {exc.render()}") from None
        if not reused:
            self.ctx.defer(vm_instance.down, VM_NAME)
        boot_s = time.monotonic() - t0
        a, b = (e.host for e in inst.endpoints)
        self.note(
            f"two Debian VMs ({inst.accel.upper()}: {inst.accel_reason}) play {a} and {b} with rxe on "
            f"their NICs; fabricd validate-fabric --pair {a}:{b}"
        )
        res = subprocess.run(
            [
                *FABRICD_ARGV,
                "validate-fabric",
                str(self.ctx.options.inventory),
                "--pair",
                f"{a}:{b}",
                "--name",
                VM_NAME,
                "--output",
                "json",
            ],
            capture_output=True,
            text=True,
            timeout=VM_TRAFFIC_TIMEOUT_S,
            check=False,
        )
        try:
            report = json.loads(res.stdout)
        except ValueError:
            raise StageFailedError(
                f"validate-fabric exited {res.returncode}: {res.stderr.strip().splitlines()[-1:] or 'no output'}"
            ) from None
        pair = report["pairs"][0]
        checks = [
            {
                "code": c.get("code"),
                "status": c.get("status"),
                "detail": c.get("note") or "; ".join(f.get("message", "") for f in c.get("findings", [])),
            }
            for c in pair.get("checks", [])
        ]
        counts = {st: sum(1 for c in checks if c["status"] == st) for st in ("pass", "fail", "skip")}
        data = {
            "accel": inst.accel,
            "accel_reason": inst.accel_reason,
            "boot_s": round(boot_s, 1),
            "reused": reused,
            "pair": f"{a}:{b}",
            "ran": pair["ran"],
            "ok": pair["ok"],
            "tos": report.get("tos"),
            "error": pair.get("error"),
            "checks": checks,
            "counts": counts,
            "traffic": pair.get("traffic"),
            "exit_code": res.returncode,
        }
        summary = (
            f"{a} -> {b} over Soft-RoCE ({inst.accel.upper()}): {counts['pass']} checks pass, "
            f"{counts['fail']} fail, {counts['skip']} not checkable on rxe (need real NICs)"
        )
        if not pair["ran"] or not pair["ok"]:
            raise StageFailedError(pair.get("error") or "validate-fabric found problems", data)
        return self.ok(summary, data)
