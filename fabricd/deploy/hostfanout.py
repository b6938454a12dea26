"""One-shot fan-out to hosts over SSH: the same command on many hosts (the CLI's host apply and host audit over SSH).

For hosts with no agent (a fleet being bootstrapped, an audit from CI). Each selected host runs fabricd itself over
SSH, with the command line the caller builds (:data:`Command`; the CLI selects the hosts and spells the command);
this module only connects, runs, parses and keeps score:

- **Host keys are verified** against known_hosts files (the caller's, then ``~/.ssh/known_hosts``) by the switch
  side's rule (:mod:`fabricd.platforms.host_keys`): the key must match every entry for the host in every file, so a
  different key in any file fails the host, naming that file; an unknown or ``@revoked`` key fails too. A refused
  host fails alone. Opting out is an explicit flag.
- **Bounded concurrency**: at most ``concurrency`` hosts at a time (a thread pool; paramiko, one session per host).
- **Failure budget**: once more than ``max_failures`` hosts have failed (unreachable, host key refused, the remote
  command failed), no further host is started; hosts in flight finish, the rest are reported ``skipped``. Audit
  findings are results, not failures.
- **Per-host results** (:class:`HostRun`): state, exit code, the remote JSON, stderr, duration.

Hosts are reached at ``mgmt.host:mgmt.port`` from the inventory, or by their name on port 22.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

import paramiko

from fabricd.model.topology import Host
from fabricd.platforms.host_keys import HostKeyMismatch, HostKeyUnknown, VerifyingClient, known_name, refusal


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
        return {
            "host": self.host,
            "state": self.state.value,
            "exit_code": self.exit_code,
            "error": self.error,
            "duration_s": round(self.duration_s, 3),
            "result": self.data,
            "stderr": self.stderr[-2000:] if self.state == RunState.FAILED else "",
        }


@dataclass
class FanoutReport:
    runs: list[HostRun] = field(default_factory=list)
    budget_spent: bool = False

    def count(self, state: RunState) -> int:
        return sum(1 for r in self.runs if r.state == state)

    def summary(self) -> dict[str, int]:
        return {s.value: self.count(s) for s in RunState} | {"hosts": len(self.runs)}


def ssh_target(host: Host) -> SshTarget:
    if host.mgmt is not None:
        return SshTarget(host.name, host.mgmt.host, host.mgmt.port)
    return SshTarget(host.name, host.name, 22)


def known_hosts_of(opts: FanoutOptions) -> tuple[Path, ...]:
    """The known_hosts files consulted: the caller's (``--known-hosts``), then ``~/.ssh/known_hosts``; those that
    exist. Empty when verification is off, or when no file exists (then every host is refused as unknown)."""
    if not opts.verify_host_key:
        return ()
    files = [p for p in opts.known_hosts if p.is_file()]
    user = Path.home() / ".ssh" / "known_hosts"
    if user.is_file():
        files.append(user)
    return tuple(files)


def connect_kwargs(opts: FanoutOptions) -> dict[str, Any]:
    """paramiko ``SSHClient.connect`` arguments: public-key auth only (no password, no keyboard-interactive)."""
    kwargs: dict[str, Any] = {
        "username": opts.username or os.environ.get("USER") or "root",
        "password": None,
        "timeout": opts.connect_timeout_s,
        "banner_timeout": opts.connect_timeout_s,
        "auth_timeout": opts.connect_timeout_s,
        "channel_timeout": opts.connect_timeout_s,
    }
    if opts.identity_files:  # only these keys; otherwise ssh-agent and ~/.ssh/id_* as ssh(1) does
        kwargs.update(key_filename=[str(p) for p in opts.identity_files], allow_agent=False, look_for_keys=False)
    else:
        kwargs.update(allow_agent=True, look_for_keys=True)
    return kwargs


class SshError(Exception):
    """Connecting to a host failed; the message says why and how to fix it (no traceback)."""


def connect(target: SshTarget, opts: FanoutOptions) -> paramiko.SSHClient:
    """An authenticated SSH session to ``target``, its host key verified as for the switches
    (:class:`fabricd.platforms.host_keys.VerifyingClient`: every entry in every file, ``@revoked``, patterns,
    hashed names). Raises :class:`SshError`."""
    files = known_hosts_of(opts)
    where = f"{target.address}:{target.port}"
    client: paramiko.SSHClient | None = None
    try:
        client = VerifyingClient(files, verify=opts.verify_host_key)
        client.connect(target.address, target.port, **connect_kwargs(opts))
    except HostKeyMismatch as exc:
        _close(client)
        what, hint = refusal(exc, target.address, target.port)
        raise SshError(f"{where}: host key refused (it {what}); {hint}") from None
    except HostKeyUnknown:
        _close(client)
        read = ", ".join(str(p) for p in files) or "none"
        raise SshError(
            f"{where}: host key refused (unknown: no known_hosts file read lists "
            f"{known_name(target.address.lower(), target.port)}; files read: {read}); check its "
            f"fingerprint, then add it to a known_hosts file (the caller's or ~/.ssh/known_hosts), e.g. "
            f"from "
            f"`ssh-keyscan -p {target.port} {target.address}`"
        ) from None
    except paramiko.AuthenticationException:
        _close(client)
        raise SshError(
            f"{where}: SSH authentication failed (publickey, as {connect_kwargs(opts)['username']}); give "
            "its private key or load the key into ssh-agent, and check the SSH user"
        ) from None
    except paramiko.ssh_exception.NoValidConnectionsError as exc:
        _close(client)
        reasons = sorted({e.strerror or str(e) for e in exc.errors.values()}) or [str(exc)]
        raise SshError(f"{where}: cannot connect: {'; '.join(reasons)}") from None
    except TimeoutError:
        _close(client)
        raise SshError(f"{where}: no SSH answer within {opts.connect_timeout_s:g} s (the connect timeout)") from None
    except (OSError, EOFError, paramiko.SSHException) as exc:
        _close(client)
        text = str(exc) or type(exc).__name__
        if "No authentication methods available" in text:
            raise SshError(
                f"{where}: SSH authentication failed: no key to offer; give a private key or load the key "
                "into ssh-agent"
            ) from None
        if text in ("Error reading SSH protocol banner", "No existing session", "Negotiation failed."):
            # the transport thread gave up before authentication (which of the three paramiko says is a race)
            raise SshError(
                f"{where}: no SSH handshake within {opts.connect_timeout_s:g} s (the connect timeout), or "
                f"the server closed the connection ({text})"
            ) from None
        raise SshError(f"{where}: {getattr(exc, 'strerror', None) or text}") from None
    return client


def _close(client: paramiko.SSHClient | None) -> None:
    if client is not None:
        with contextlib.suppress(Exception):
            client.close()


_POLL_SLICE_S = 0.5


def collect(chan: paramiko.Channel, deadline: float | None) -> tuple[int | None, bytes, bytes]:
    """Read stdout and stderr of ``chan`` until the command exits: ``(exit status, stdout, stderr)``; the status is
    None when the session closed without one (e.g. killed by a signal). Both streams are drained as they come, so
    a command that writes much to one never stalls on the other. Waits on the channel's pipe with ``poll`` (no busy
    loop, no FD_SETSIZE limit), in slices of at most 0.5 s so that a channel closed by another thread ends it.
    Raises TimeoutError at ``deadline`` (``time.monotonic()``; None = no limit)."""
    out, err = bytearray(), bytearray()
    poller = select.poll()
    poller.register(chan.fileno(), select.POLLIN)
    while True:
        while chan.recv_ready():
            out += chan.recv(65536)
        while chan.recv_stderr_ready():
            err += chan.recv_stderr(65536)
        if chan.eof_received or chan.closed:
            break
        left = None if deadline is None else deadline - time.monotonic()
        if left is not None and left <= 0:
            raise TimeoutError
        # in slices: another thread may close the channel (SshRunner's kill), which does not wake a poll
        poller.poll(max(1, int(min(_POLL_SLICE_S, _POLL_SLICE_S if left is None else left) * 1000)))
    left = None if deadline is None else max(0.0, deadline - time.monotonic())
    if not chan.status_event.wait(left):  # the exit status follows EOF; a closed channel sets it too
        raise TimeoutError
    while chan.recv_ready():  # data that raced the EOF check
        out += chan.recv(65536)
    while chan.recv_stderr_ready():
        err += chan.recv_stderr(65536)
    status = chan.recv_exit_status()
    return (None if status < 0 else status), bytes(out), bytes(err)


Command = Callable[[str], str]
"""Host name -> the shell command run on it (the CLI builds it: the remote fabricd's command line)."""


def _run_one(target: SshTarget, command: str, opts: FanoutOptions) -> HostRun:
    t0 = time.monotonic()
    run = HostRun(target.name, RunState.FAILED)
    try:
        run.exit_code, out, err = _execute(target, command, opts)
    except SshError as exc:
        run.error = str(exc)
    else:
        run.stderr = err
        if out.strip():
            try:
                run.data = json.loads(out)
            except ValueError:
                run.error = f"remote fabricd printed no JSON (exit {run.exit_code}): {out.strip()[:200]}"
        if run.error is None:
            if run.exit_code == 0:
                run.state = RunState.OK
            elif run.exit_code == 1 and run.data is not None:
                run.state = RunState.FINDINGS
            else:
                last = err.strip().splitlines()[-1] if err.strip() else ""
                run.error = f"remote fabricd exit {run.exit_code}" + (f": {last}" if last else "")
    run.duration_s = time.monotonic() - t0
    return run


def _execute(target: SshTarget, command: str, opts: FanoutOptions) -> tuple[int | None, str, str]:
    """Connect, run ``command`` with stdin closed, return ``(exit status, stdout, stderr)``. Raises SshError."""
    client = connect(target, opts)
    where = f"{target.address}:{target.port}"
    chan: paramiko.Channel | None = None
    try:
        chan = client.get_transport().open_session(timeout=opts.connect_timeout_s)
        chan.exec_command(command)
        chan.shutdown_write()
        status, out, err = collect(chan, time.monotonic() + opts.command_timeout_s)
    except TimeoutError:
        raise SshError(
            f"{where}: the remote command still ran after {opts.command_timeout_s:g} s; closed the session"
        ) from None
    except (OSError, EOFError, paramiko.SSHException) as exc:
        raise SshError(f"{where}: the SSH session failed: {str(exc) or type(exc).__name__}") from None
    finally:
        if chan is not None:
            chan.close()  # also closes the pipe collect() polls (a closed transport leaves it open)
        _close(client)
    return status, out.decode(errors="replace"), err.decode(errors="replace")


def fanout(
    targets: Sequence[SshTarget],
    command: Command,
    opts: FanoutOptions,
    on_done: Callable[[HostRun], None] | None = None,
) -> FanoutReport:
    """Run ``command(host)`` on every target over SSH; see the module docstring. Hosts start in ``targets`` order;
    ``on_done`` is called from this thread as each host finishes."""
    report = FanoutReport()
    lock = threading.Lock()
    failures = 0

    def one(t: SshTarget) -> HostRun:
        nonlocal failures
        with lock:
            spent = opts.max_failures is not None and failures > opts.max_failures
        if spent:
            report.budget_spent = True
            return HostRun(
                t.name,
                RunState.SKIPPED,
                error=f"not started: the failure budget ({opts.max_failures} failed host(s) allowed) was spent",
            )
        run = _run_one(t, command(t.name), opts)
        if run.state == RunState.FAILED:
            with lock:
                failures += 1
        return run

    results: dict[str, HostRun] = {}
    if targets:
        workers = min(max(1, opts.concurrency), len(targets))
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="fanout") as pool:
            futures = [pool.submit(one, t) for t in targets]
            for fut in as_completed(futures):
                run = fut.result()
                results[run.host] = run
                if on_done is not None:
                    on_done(run)
    report.runs = [results[t.name] for t in targets]
    return report
