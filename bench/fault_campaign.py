"""Fault campaign: push inventory/lab to its six simulated switches with a random fault on every switch.

For each seed, every switch gets one fault drawn from ``disconnect-after-lines=N`` (N anywhere in that switch's
push), ``reject-line=REGEX`` (a random line or table of its rendered config), ``commit-fails``, ``slow-ms=N``
(5-40 ms) and ``auth-fail``. After the push each switch's running config (read from the simulator itself, not
through fabricd) must be **exactly as before** or **exactly as intended** (what a fault-free push produces). Any
other end state is a violation and is named with its seed, switch, fault and the push result.

The same faults are then thrown at the measured anchor: a plain netmiko push as nornir-netmiko does it
(``send_config_set`` of the rendered lines with an ``error_pattern``, no checkpoint, no verify, no rollback), judged
the same way against its own fault-free result.

Run from the repo root with no arguments (50 seeds): ``python bench/fault_campaign.py``; ``--seeds N`` for fewer.
The last line is the benchmark JSON: value = % of switch pushes ending before-or-intended with fabricd, anchor the
same for the plain netmiko push, ratio = fabricd / anchor.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import random
import re
import secrets
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from netmiko import ConnectHandler

from fabricd.deploy.pipeline import PushOptions, push
from fabricd.deploy.targets import render_candidates
from fabricd.inventory import load_inventory
from fabricd.model import Fabric, Platform, Switch
from fabricd.nos.registry import SwitchIntentBuilder
from fabricd.platforms.access import Access
from fabricd.platforms.base import DriverOptions
from fabricd.platforms.registry import make_driver
from fabricd.platforms.secrets import Secret
from fabricd.render.env import environment
from fabricd.render.render import render_switch_intent
from fabricd_lab.faults import Fault, FaultKind
from fabricd_lab.runtime import LabThread, spec_for

REPO = Path(__file__).resolve().parent.parent
VOLATILE = re.compile(r"^!(?:Time|Running configuration last done at):.*$", re.M)
KINDS = (
    FaultKind.DISCONNECT_AFTER_LINES,
    FaultKind.REJECT_LINE,
    FaultKind.COMMIT_FAILS,
    FaultKind.SLOW_MS,
    FaultKind.AUTH_FAIL,
)


def fingerprint(text: str) -> str:
    return VOLATILE.sub("", text)


@dataclass
class Lab:
    thread: LabThread
    switches: dict[str, Switch]
    password: str
    known_hosts: Path


def start_lab(fabric: Fabric, faults: list[Fault], tmp: Path) -> Lab:
    password = secrets.token_urlsafe(12)
    specs = [spec_for(s, password=password, faults=faults, port=0) for s in fabric.switches]
    thread = LabThread(specs).__enter__()
    switches = {
        s.name: s.model_copy(update={"mgmt": s.mgmt.model_copy(update={"port": thread.endpoint(s.name).port})})
        for s in fabric.switches
    }
    kh = tmp / f"known_hosts-{time.monotonic_ns()}"
    kh.write_text(thread.known_hosts())
    return Lab(thread, switches, password, kh)


def snapshot(lab: Lab) -> dict[str, str]:
    return {name: fingerprint(lab.thread.running_config(name)) for name in lab.switches}


def lines_received(lab: Lab) -> dict[str, int]:
    return {n: lab.thread.call(lambda n=n: lab.thread.switch(n).lines_received) for n in lab.switches}


# -- the two push methods ---------------------------------------------------------------------------------------


def fabricd_push(lab: Lab, candidates: dict[str, str], tmp: Path) -> dict[str, str]:
    """fabricd's pipeline; returns each switch's outcome text (for the report)."""

    def factory(sw: Switch) -> Any:
        access = Access(
            sw.name, sw.mgmt.host, sw.mgmt.port, sw.credentials.username, Secret(lab.password), (lab.known_hosts,)
        )
        return make_driver(sw, access, DriverOptions(read_timeout_s=15.0, conn_timeout_s=10.0))

    opts = PushOptions(concurrency=6, confirm_timeout_s=60)
    report = push(list(lab.switches.values()), candidates, opts, factory=factory)
    return {r.target: f"{r.state.value}" + (f" ({r.error})" if r.error else "") for r in report.results}


def naive_lines(platform: Platform, candidate: str, cli: str | None) -> list[str]:
    if platform is Platform.SONIC:
        assert cli is not None
        text = cli
    else:
        text = candidate
    lines = [ln.strip() if platform is not Platform.SONIC else ln for ln in text.splitlines()]
    return [ln for ln in lines if ln and not ln.startswith(("!", "#")) and ln != "end"]


NAIVE_TYPES = {
    Platform.ARISTA_EOS: "arista_eos",
    Platform.CISCO_NXOS: "cisco_nxos",
    Platform.SONIC: "linux",
    Platform.CUMULUS_NVUE: "linux",
}
NAIVE_ERRORS = r"% Invalid|% Incomplete|Error:|Failed to|command not found|Root privileges"


def naive_push(lab: Lab, lines: dict[str, list[str]]) -> dict[str, str]:
    """nornir-netmiko style: connect, send_config_set(lines, error_pattern), save; no checkpoint, no rollback."""

    def one(sw: Switch) -> tuple[str, str]:
        try:
            conn = ConnectHandler(
                device_type=NAIVE_TYPES[sw.platform],
                host=sw.mgmt.host,
                port=sw.mgmt.port,
                username=sw.credentials.username,
                password=lab.password,
                fast_cli=True,
                read_timeout_override=15,
                conn_timeout=10,
            )
        except Exception as exc:  # the anchor, like nornir, only records the failure
            return sw.name, f"connect failed: {type(exc).__name__}"
        try:
            if sw.platform in (Platform.SONIC, Platform.CUMULUS_NVUE):
                body = lines[sw.name] + (["nv config apply -y"] if sw.platform is Platform.CUMULUS_NVUE else [])
                conn.send_config_set(body, error_pattern=NAIVE_ERRORS, enter_config_mode=False, exit_config_mode=False)
            else:
                conn.send_config_set(lines[sw.name], error_pattern=NAIVE_ERRORS)
                conn.save_config()
            return sw.name, "ok"
        except Exception as exc:
            return sw.name, f"failed: {type(exc).__name__}"
        finally:
            with contextlib.suppress(Exception):
                conn.disconnect()

    with ThreadPoolExecutor(max_workers=6) as pool:
        return dict(pool.map(one, lab.switches.values()))


# -- faults -----------------------------------------------------------------------------------------------------


def reject_regexes(sw: Switch, candidate: str) -> list[str]:
    """Config units of this switch's candidate that a reject-line fault can hit."""
    if sw.platform is Platform.SONIC:
        return [re.escape(t) for t in json.loads(candidate)]
    units = []
    for line in candidate.splitlines():
        s = line.strip()
        if not s or s.startswith(("!", "#")) or s == "end":
            continue
        units.append(
            "^" + re.escape(s[len("nv set ") :] if s.startswith("nv set ") else s) + "$"
            if sw.platform is not Platform.CUMULUS_NVUE
            else re.escape(s[len("nv set ") :]) + "$"
        )
    return units


def draw_faults(seed: int, fabric: Fabric, candidates: dict[str, str], lines: dict[str, int]) -> list[Fault]:
    rng = random.Random(seed)
    faults = []
    for sw in fabric.switches:
        kind = rng.choice(KINDS)
        arg: str | None = None
        if kind is FaultKind.DISCONNECT_AFTER_LINES:
            arg = str(rng.randint(1, max(1, lines[sw.name])))
        elif kind is FaultKind.REJECT_LINE:
            arg = rng.choice(reject_regexes(sw, candidates[sw.name]))
        elif kind is FaultKind.SLOW_MS:
            arg = str(rng.randint(5, 40))
        faults.append(Fault(sw.name, kind, arg))
    return faults


# -- the campaign -----------------------------------------------------------------------------------------------


def run(seeds: int, *, anchor: bool = True, verbose: bool = True) -> dict[str, Any]:
    fabric = load_inventory(REPO / "inventory" / "lab").fabric
    candidates = render_candidates(fabric, fabric.switches)
    env = environment(None)
    builder = SwitchIntentBuilder(fabric)
    clis = {
        s.name: (render_switch_intent(builder.build(s), env).files[1].text if s.platform is Platform.SONIC else None)
        for s in fabric.switches
    }
    naive = {s.name: naive_lines(s.platform, candidates[s.name], clis[s.name]) for s in fabric.switches}
    tmp = Path(tempfile.mkdtemp(prefix="fabricd-campaign-"))

    # fault-free references: the state before, after fabricd's push, after the anchor's push; lines per push
    lab = start_lab(fabric, [], tmp)
    before = snapshot(lab)
    start = lines_received(lab)
    fabricd_push(lab, candidates, tmp)
    intended = snapshot(lab)
    used = {n: c - start[n] for n, c in lines_received(lab).items()}
    lab.thread.close()
    naive_intended = {}
    if anchor:
        lab = start_lab(fabric, [], tmp)
        naive_push(lab, naive)
        naive_intended = snapshot(lab)
        lab.thread.close()

    results: dict[str, dict[str, Any]] = {
        "fabricd": {"ok": 0, "n": 0, "violations": []},
        "anchor": {"ok": 0, "n": 0, "violations": []},
    }
    t0 = time.monotonic()
    for seed in range(seeds):
        faults = draw_faults(seed, fabric, candidates, used)
        by_dev = {f.device: str(f) for f in faults}
        methods = [("fabricd", intended)] + ([("anchor", naive_intended)] if anchor else [])
        for method, target_state in methods:
            lab = start_lab(fabric, faults, tmp)
            try:
                outcome = fabricd_push(lab, candidates, tmp) if method == "fabricd" else naive_push(lab, naive)
                end = snapshot(lab)
            finally:
                lab.thread.close()
            agg = results[method]
            for name in lab.switches:
                agg["n"] += 1
                state = (
                    "before"
                    if end[name] == before[name]
                    else "intended"
                    if end[name] == target_state[name]
                    else "other"
                )
                if state == "other":
                    agg["violations"].append(
                        {"seed": seed, "switch": name, "fault": by_dev[name], "result": outcome.get(name, "")}
                    )
                else:
                    agg["ok"] += 1
        if verbose:
            f = results["fabricd"]
            a = results["anchor"]
            print(
                f"seed {seed:2d}: fabricd {f['ok']}/{f['n']} consistent"
                + (f", anchor {a['ok']}/{a['n']}" if anchor else "")
                + f"  ({time.monotonic() - t0:.0f} s)",
                flush=True,
            )
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=50)
    parser.add_argument("--no-anchor", action="store_true", help="skip the plain-netmiko anchor")
    args = parser.parse_args()
    t0 = time.monotonic()
    res = run(args.seeds, anchor=not args.no_anchor)
    f, a = res["fabricd"], res["anchor"]
    for method, agg in (("fabricd", f), ("anchor (plain netmiko)", a)):
        if not agg["n"]:
            continue
        print(
            f"{method}: {agg['ok']}/{agg['n']} switch pushes ended exactly as before or as intended; "
            f"{len(agg['violations'])} violations"
        )
        for v in agg["violations"][:40]:
            print(
                f"  seed {v['seed']} {v['switch']} fault {v['fault']}: ended neither as before nor as intended; "
                f"push said: {v['result']}"
            )
    value = 100.0 * f["ok"] / f["n"]
    anchor_value = 100.0 * a["ok"] / a["n"] if a["n"] else 0.0
    print(f"{args.seeds} seeds in {time.monotonic() - t0:.0f} s")
    print(
        json.dumps(
            {
                "bench": "fault_campaign",
                "value": round(value, 2),
                "unit": "% switches ending as before or as intended",
                "anchor": "plain netmiko send_config_set (nornir-netmiko style, error_pattern, no checkpoint/rollback)",
                "anchor_value": round(anchor_value, 2),
                "ratio": round(value / anchor_value, 3) if anchor_value else None,
            }
        )
    )
    sys.exit(0 if not f["violations"] else 1)


if __name__ == "__main__":
    main()
