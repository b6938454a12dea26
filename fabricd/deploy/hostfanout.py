"""One-shot fan-out to hosts over SSH: ``fabricd host apply --hosts SEL`` and ``fabricd audit host --hosts SEL``.

For hosts with no agent (a fleet being bootstrapped, an audit from CI). Each selected host runs fabricd itself
(``fabricd host apply|audit host <remote inventory> --host NAME --output json``) over SSH; this module only connects,
runs, parses and keeps score:

- **Host keys are verified** against known_hosts files (the caller's, then ``~/.ssh/known_hosts``); a host whose key
  is unknown or different fails alone. Opting out is an explicit flag.
- **Bounded concurrency**: at most ``concurrency`` hosts at a time (an asyncio semaphore, one event loop).
- **Failure budget**: once more than ``max_failures`` hosts have failed (unreachable, host key refused, the remote
  command failed), no further host is started; hosts in flight finish, the rest are reported ``skipped``. Audit
  findings are results, not failures.
- **Per-host results** (:class:`HostRun`): state, exit code, the remote JSON, stderr, duration.

Hosts are reached at ``mgmt.host:mgmt.port`` from the inventory, or by their name on port 22.
"""

from __future__ import annotations

import asyncio
import fnmatch
import json
import os
import shlex
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

import asyncssh

from fabricd.errors import UsageError
from fabricd.model import Fabric
from fabricd.model.topology import Host


class RunState(StrEnum):
    OK = "ok"
    FINDINGS = "findings"
    FAILED = "failed"
    SKIPPED = "skipped"


@dataclass(frozen=True)
class SshTarget:
    name: str
    address: str
    port: int = 22


@dataclass(frozen=True)
class FanoutOptions:
    username: str | None = None
    identity_files: tuple[Path, ...] = ()
    known_hosts: tuple[Path, ...] = ()
    verify_host_key: bool = True
    concurrency: int = 16
    max_failures: int | None = None
    """Failures tolerated before the rest is skipped; None = no budget (run every host)."""
    connect_timeout_s: float = 10.0
    command_timeout_s: float = 600.0
    remote_fabricd: str = "fabricd"
    remote_inventory: str = "/etc/fabricd/inventory"


@dataclass
class HostRun:
    host: str
    state: RunState
    exit_code: int | None = None
    data: Any = None
    stderr: str = ""
    error: str | None = None
    duration_s: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"host": self.host, "state": self.state.value, "exit_code": self.exit_code, "error": self.error,
                "duration_s": round(self.duration_s, 3), "result": self.data,
                "stderr": self.stderr[-2000:] if self.state == RunState.FAILED else ""}


@dataclass
class FanoutReport:
    runs: list[HostRun] = field(default_factory=list)
    budget_spent: bool = False

    def count(self, state: RunState) -> int:
        return sum(1 for r in self.runs if r.state == state)

    def summary(self) -> dict[str, int]:
        return {s.value: self.count(s) for s in RunState} | {"hosts": len(self.runs)}


def select_names(names: Sequence[str], selector: str, groups: Mapping[str, Sequence[str]] | None = None) -> list[str]:
    """Names matching ``selector``: a comma list of names, globs (``gpu*``), ``group:NAME`` (needs ``groups``, name ->
    its groups) or ``all``; a term prefixed with ``!`` removes. Input order. UsageError when a term matches nothing."""
    terms = [t.strip() for t in selector.split(",") if t.strip()]
    if not terms:
        raise UsageError("--hosts: empty selector", hint="e.g. --hosts 'gpu*', --hosts group:gpu, --hosts all")
    chosen: set[str] = set()
    for term in terms:
        negate = term.startswith("!")
        body = term[1:] if negate else term
        if body == "all":
            matched = set(names)
        elif body.startswith("group:"):
            if groups is None:
                raise UsageError(f"--hosts {body}: groups need the inventory", hint="give the INVENTORY argument")
            group = body.removeprefix("group:")
            matched = {n for n in names if group in groups.get(n, ())}
        else:
            matched = {n for n in names if fnmatch.fnmatchcase(n, body)}
        if not matched and not negate:
            known = sorted({g for gs in (groups or {}).values() for g in gs})
            raise UsageError(f"--hosts: {body!r} matches no inventory host",
                             hint=f"hosts: {', '.join(names[:8])}{' ...' if len(names) > 8 else ''}; "
                                  f"groups: {', '.join(known) or 'none'}")
        chosen = chosen - matched if negate else chosen | matched
    return [n for n in names if n in chosen]


def select_hosts(fabric: Fabric, selector: str) -> list[Host]:
    """Inventory hosts matching ``selector`` (:func:`select_names`), inventory order."""
    chosen = set(select_names([h.name for h in fabric.hosts], selector, {h.name: h.groups for h in fabric.hosts}))
    return [h for h in fabric.hosts if h.name in chosen]


def ssh_target(host: Host) -> SshTarget:
    if host.mgmt is not None:
        return SshTarget(host.name, host.mgmt.host, host.mgmt.port)
    return SshTarget(host.name, host.name, 22)


def known_hosts_of(opts: FanoutOptions) -> Any:
    if not opts.verify_host_key:
        return None
    files = [str(p) for p in opts.known_hosts if p.is_file()]
    user = Path.home() / ".ssh" / "known_hosts"
    if user.is_file():
        files.append(str(user))
    if not files:
        return ()  # nothing is trusted: every host fails with "host key is not trusted"
    return asyncssh.read_known_hosts(files)


def connect_kwargs(opts: FanoutOptions, known: Any) -> dict[str, Any]:
    """asyncssh.connect arguments: public-key auth only, host keys from ``known`` (None = not verified)."""
    kwargs: dict[str, Any] = {
        "username": opts.username or os.environ.get("USER") or "root", "known_hosts": known,
        "connect_timeout": opts.connect_timeout_s, "password": None, "kbdint_auth": False,
        "preferred_auth": "publickey",
    }
    if opts.identity_files:  # only these keys; otherwise ssh-agent and ~/.ssh/id_* as ssh(1) does
        kwargs.update(client_keys=[str(p) for p in opts.identity_files], agent_path=None)
    return kwargs


Command = Callable[[str], str]


def remote_command(opts: FanoutOptions, verb: Sequence[str], extra: Sequence[str] = ()) -> Command:
    """The shell command run on each host: ``fabricd <verb> <inventory> --host NAME --output json <extra>``."""

    def build(host: str) -> str:
        argv = [opts.remote_fabricd, *verb, opts.remote_inventory, "--host", host, "--output", "json", *extra]
        return shlex.join(argv)

    return build


async def _run_one(target: SshTarget, command: str, opts: FanoutOptions, known: Any) -> HostRun:
    t0 = time.monotonic()
    run = HostRun(target.name, RunState.FAILED)
    try:
        async with asyncssh.connect(target.address, target.port, **connect_kwargs(opts, known)) as conn:
            res = await asyncio.wait_for(conn.run(command, check=False), opts.command_timeout_s)
    except asyncssh.HostKeyNotVerifiable as exc:
        run.error = f"{target.address}:{target.port}: host key refused ({exc.reason}); add the host's key to a " \
                    "known_hosts file (--known-hosts) after checking its fingerprint"
    except asyncssh.PermissionDenied:
        run.error = f"{target.address}:{target.port}: SSH authentication failed (publickey); give --identity or " \
                    "load the key into ssh-agent"
    except (OSError, asyncssh.Error, TimeoutError) as exc:
        reason = getattr(exc, "reason", None) or getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
        run.error = f"{target.address}:{target.port}: {reason}"
    else:
        out = res.stdout if isinstance(res.stdout, str) else (res.stdout or b"").decode(errors="replace")
        err = res.stderr if isinstance(res.stderr, str) else (res.stderr or b"").decode(errors="replace")
        run.exit_code = res.exit_status
        run.stderr = err
        if out.strip():
            try:
                run.data = json.loads(out)
            except ValueError:
                run.error = f"remote fabricd printed no JSON (exit {res.exit_status}): {out.strip()[:200]}"
        if run.error is None:
            if res.exit_status == 0:
                run.state = RunState.OK
            elif res.exit_status == 1 and run.data is not None:
                run.state = RunState.FINDINGS
            else:
                last = err.strip().splitlines()[-1] if err.strip() else ""
                run.error = f"remote fabricd exit {res.exit_status}" + (f": {last}" if last else "")
    run.duration_s = time.monotonic() - t0
    return run


async def _fanout(targets: Sequence[SshTarget], command: Command, opts: FanoutOptions,
                  on_done: Callable[[HostRun], None] | None) -> FanoutReport:
    report = FanoutReport()
    known = known_hosts_of(opts)
    sem = asyncio.Semaphore(max(1, opts.concurrency))
    failures = 0
    results: dict[str, HostRun] = {}

    async def one(t: SshTarget) -> None:
        nonlocal failures
        async with sem:
            if opts.max_failures is not None and failures > opts.max_failures:
                run = HostRun(t.name, RunState.SKIPPED, error="not started: the failure budget "
                              f"(--max-failures {opts.max_failures}) was spent")
                report.budget_spent = True
            else:
                run = await _run_one(t, command(t.name), opts, known)
                if run.state == RunState.FAILED:
                    failures += 1
        results[t.name] = run
        if on_done is not None:
            on_done(run)

    await asyncio.gather(*(one(t) for t in targets))
    report.runs = [results[t.name] for t in targets]
    return report


def fanout(targets: Sequence[SshTarget], command: Command, opts: FanoutOptions,
           on_done: Callable[[HostRun], None] | None = None) -> FanoutReport:
    """Run ``command(host)`` on every target over SSH; see the module docstring."""
    return asyncio.run(_fanout(targets, command, opts, on_done))
