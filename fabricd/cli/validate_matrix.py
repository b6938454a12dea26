"""``validate-fabric --matrix pairs|all-pairs|ring|incast:K``: rounds of disjoint pairs, each judged against a bar,
a degraded host or path named within two extra rounds, and a baseline per fabric revision.

Each pair runs through :func:`fabricd.traffic.validate.validate_pair` (the same counter-delta checks as a single
pair); the pairs of one round run at the same time, one thread each. Hosts without a runner (today: hosts no lab VM
plays) make their pairs "not run".
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import typer
from rich.table import Table

from fabricd import settings
from fabricd.errors import UsageError
from fabricd.model import Fabric
from fabricd.model.checks import Report, Status, result_of
from fabricd.model.topology import split_endpoint
from fabricd.traffic.checks import TRAFFIC
from fabricd.traffic.matrix import (
    Matrix,
    MatrixKind,
    Pair,
    PairVerdict,
    Round,
    Verdict,
    baseline_of,
    compare_baseline,
    fabric_revision,
    key,
    localise,
    run_matrix,
)
from fabricd.traffic.validate import PairReport

from .common import ExitCode, OutputFormat, emit_json, stderr, stdout
from .report import command_hints, write_junit

ValidatePair = Callable[[str, str], PairReport]


def link_speeds(fabric: Fabric, hosts: list[str]) -> dict[str, float]:
    """Gbit/s of each host's RDMA NIC: its ``speed``, else its peer switch port's. UsageError when unknown."""
    out: dict[str, float] = {}
    for name in hosts:
        host = fabric.host(name)
        assert host is not None
        nic = next((n for n in host.nics if n.rdma_device and n.ip is not None), None)
        speed = nic.speed if nic is not None else None
        if speed is None and nic is not None and nic.peer:
            try:
                sw, port = split_endpoint(nic.peer)
            except ValueError:
                sw, port = "", ""
            switch = fabric.switch(sw)
            p = switch.port(port) if switch is not None else None
            speed = p.speed if p is not None else None
        if speed is None:
            raise UsageError(
                f"{name}: no link speed for the bar (no nics[].speed and no peer switch port)",
                hint="set the NIC's speed in the inventory, or give --bar-gbps",
            )
        out[name] = float(speed.gbps)
    return out


def gbit_s_of(report: PairReport) -> float | None:
    ops = report.traffic.get("ops") if report.ran else None
    if not ops:
        return None
    return float(sum(op.get("gbit_s", 0.0) for op in ops))


def baseline_path(fabric: Fabric, revision: str, matrix: Matrix) -> Path:
    return settings.state_dir() / "baselines" / fabric.name / f"{revision}-{str(matrix).replace(':', '_')}.json"


def run_matrix_cli(
    fabric: Fabric,
    hosts: list[str],
    matrix: Matrix,
    run_pair: ValidatePair,
    *,
    bar: float,
    bar_gbps: float | None,
    baseline: str,
    output: OutputFormat,
    junit: Path | None,
) -> None:
    if len(hosts) < 2:
        raise UsageError("--matrix needs at least two hosts with an RDMA NIC and an address")
    if matrix.kind == MatrixKind.INCAST and len(hosts) < matrix.k + 1:
        raise UsageError(f"--matrix {matrix}: needs at least {matrix.k + 1} hosts, the inventory has {len(hosts)}")
    links = {h: bar_gbps / bar for h in hosts} if bar_gbps is not None else link_speeds(fabric, hosts)
    reports: dict[Pair, PairReport] = {}
    err = stderr()

    def run_round(rnd: Round) -> Mapping[Pair, float | None]:
        err.print(f"round: {', '.join(f'{a}->{b}' for a, b in rnd)}", highlight=False)
        with ThreadPoolExecutor(max_workers=max(1, len(rnd))) as pool:
            done = dict(zip(rnd, pool.map(lambda p: run_pair(*p), rnd), strict=True))
        reports.update(done)
        return {p: gbit_s_of(r) for p, r in done.items()}

    verdicts = run_matrix(matrix, hosts, links, run_round, bar)
    loc = localise(verdicts, links, run_round, bar)
    revision = fabric_revision(fabric.model_dump_json())
    path = baseline_path(fabric, revision, matrix)
    drops: list[tuple[Pair, float, float]] = []
    base_note = "off"
    if baseline in ("compare", "auto") and path.is_file():
        try:
            saved = json.loads(path.read_text())["pairs"]
        except (OSError, ValueError, KeyError) as exc:
            raise UsageError(f"{path}: not a fabricd baseline ({exc})", hint="delete it, or --baseline save") from None
        drops = compare_baseline(verdicts, saved)
        base_note = f"compared with {path}"
    elif baseline == "compare":
        raise UsageError(
            f"no baseline for fabric {fabric.name} revision {revision} ({matrix}) at {path}",
            hint="run once with --baseline save",
        )
    if baseline == "save" or (
        baseline == "auto" and not path.is_file() and all(v.verdict == Verdict.PASS for v in verdicts)
    ):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(
            json.dumps(
                {"fabric": fabric.name, "revision": revision, "matrix": str(matrix), "pairs": baseline_of(verdicts)},
                indent=1,
                sort_keys=True,
            )
        )
        base_note = f"saved {path}"
    audits = _audits(verdicts, reports, drops)
    if junit is not None:
        write_junit(junit, [command_hints(a, keep_fixes=False) for a in audits])
    not_run = [v for v in verdicts if v.verdict == Verdict.NOT_RUN]
    if output == OutputFormat.JSON:
        emit_json(
            {
                "matrix": str(matrix),
                "bar": bar,
                "revision": revision,
                "baseline": base_note,
                "ok": all(a.compliant for a in audits) and not not_run,
                "verdicts": [v.to_dict() for v in verdicts],
                "localisation": loc.to_dict(),
                "baseline_drops": [{"pair": key(p), "baseline_gbit_s": old, "gbit_s": now} for p, old, now in drops],
                "pairs": [pair_json(r) for r in reports.values()],
            }
        )
    else:
        _print(verdicts, loc.to_dict(), drops, str(matrix), base_note)
    if not_run:
        raise typer.Exit(ExitCode.TARGETS_FAILED)
    if not all(a.compliant for a in audits):
        raise typer.Exit(ExitCode.FINDINGS)


def pair_json(r: PairReport) -> dict[str, Any]:
    """A pair as JSON (:meth:`PairReport.to_dict`) with each finding's fixes rendered into its hint, and kept as
    data."""
    return r.to_dict() | command_hints(r.report, keep_fixes=True).to_dict()


def _audits(
    verdicts: list[PairVerdict], reports: Mapping[Pair, PairReport], drops: list[tuple[Pair, float, float]]
) -> list[Report]:
    dropped = {p: (old, now) for p, old, now in drops}
    bar, base, counters = TRAFFIC["FABRIC-BAR"], TRAFFIC["FABRIC-BASELINE"], TRAFFIC["FABRIC-COUNTERS"]
    out = []
    for v in verdicts:
        name = key(v.pair)
        status = {Verdict.PASS: Status.PASS, Verdict.FAIL: Status.FAIL, Verdict.NOT_RUN: Status.FAIL}[v.verdict]
        checks = [
            result_of(
                bar,
                status,
                [
                    bar.finding(
                        obj=name, path="gbit_s", message=v.detail, expected=f">= {v.bar_gbit_s:.1f} Gb/s", got=v.gbit_s
                    )
                ]
                if status == Status.FAIL
                else [],
                note=v.detail,
            )
        ]
        if v.pair in dropped:
            old, now = dropped[v.pair]
            checks.append(
                result_of(
                    base,
                    Status.FAIL,
                    [
                        base.finding(
                            obj=name,
                            path="gbit_s",
                            message=f"{now:.1f} Gb/s, baseline {old:.1f} Gb/s",
                            expected=f">= {old * 0.95:.1f}",
                            got=round(now, 3),
                        )
                    ],
                )
            )
        r = reports.get(v.pair)
        if r is not None:
            bad = [f for c in r.checks if c.status == Status.FAIL for f in c.findings]
            checks.append(result_of(counters, Status.FAIL if bad else Status.PASS, bad))
        out.append(Report(kind="fabric", target=name, checks=checks))
    return out


def _print(
    verdicts: list[PairVerdict],
    loc: dict[str, Any],
    drops: list[tuple[Pair, float, float]],
    matrix: str,
    base_note: str,
) -> None:
    out = stdout()
    table = Table(title=f"validate-fabric --matrix {matrix}")
    for col in ("round", "pair", "Gb/s", "bar", "verdict"):
        table.add_column(col, justify="right" if col in ("round", "Gb/s", "bar") else "left")
    style = {Verdict.PASS: "green", Verdict.FAIL: "red", Verdict.NOT_RUN: "yellow"}
    for v in verdicts:
        table.add_row(
            str(v.round),
            key(v.pair),
            "-" if v.gbit_s is None else f"{v.gbit_s:.1f}",
            f"{v.bar_gbit_s:.1f}",
            f"[{style[v.verdict]}]{v.verdict.value}[/]",
        )
    out.print(table)
    counts = {s: sum(1 for v in verdicts if v.verdict == s) for s in Verdict}
    out.print(
        f"{len(verdicts)} pair(s): {counts[Verdict.PASS]} pass, {counts[Verdict.FAIL]} below the bar, "
        f"{counts[Verdict.NOT_RUN]} not run; baseline: {base_note}",
        highlight=False,
    )
    if loc["degraded_hosts"] or loc["degraded_paths"] or loc["unresolved"]:
        out.print(
            f"degraded hosts: {', '.join(loc['degraded_hosts']) or 'none'}; paths: "
            f"{', '.join('<->'.join(p) for p in loc['degraded_paths']) or 'none'}; unresolved: "
            f"{', '.join(loc['unresolved']) or 'none'} ({loc['extra_rounds']} extra round(s))",
            highlight=False,
        )
    for p, old, now in drops:
        out.print(f"[red]baseline drop[/] {key(p)}: {now:.1f} Gb/s, was {old:.1f}", highlight=False)
