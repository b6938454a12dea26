"""Run a traffic session between two endpoint hosts: ``fabricd traffic server --once`` on one, the client on the
other, both started through a :class:`~fabricd.traffic.remote.Runner`, results parsed from their JSON output.

Used by ``fabricd traffic selftest`` (the lab VMs) and ``fabricd validate-fabric`` (host pairs of an inventory).
"""

from __future__ import annotations

import json
import logging
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from fabricd.errors import FabricdError

from .remote import CommandResult, Runner, Started
from .spec import SessionResult, TrafficSpec

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PairRun:
    """One client/server session between two hosts: the client's result (None when it failed) and the server's
    session summary, or what went wrong."""

    server_host: str
    client_host: str
    server_ip: str
    port: int
    client: SessionResult | None
    server: dict[str, Any] | None
    error: str | None
    client_rc: int
    server_rc: int | None

    @property
    def ok(self) -> bool:
        return (
            self.error is None
            and self.client is not None
            and self.client.ok
            and bool(self.server and self.server.get("ok"))
        )


def server_argv(cmd: Sequence[str], bind: str, port: int, *, pool_mib: int, accept_timeout_s: float) -> list[str]:
    return [
        *cmd,
        "server",
        "--bind",
        bind,
        "--port",
        str(port),
        "--once",
        "--pool-mib",
        str(pool_mib),
        "--accept-timeout",
        str(int(accept_timeout_s)),
        "--output",
        "json",
    ]


def client_argv(
    cmd: Sequence[str], peer: str, port: int, spec: TrafficSpec, *, pool_mib: int, connect_timeout_s: float
) -> list[str]:
    return [
        *cmd,
        "client",
        "--peer",
        peer,
        "--port",
        str(port),
        "--spec-json",
        spec.model_dump_json(),
        "--pool-mib",
        str(pool_mib),
        "--connect-timeout",
        str(int(connect_timeout_s)),
        "--output",
        "json",
    ]


def _last_json(text: str) -> Any:
    """The last JSON document on stdout (the CLI prints one, indented)."""
    text = text.strip()
    start = text.rfind("\n{")
    for candidate in ([text] if text.startswith("{") else []) + ([text[start + 1 :]] if start >= 0 else []):
        try:
            return json.loads(candidate)
        except ValueError:
            continue
    raise ValueError("no JSON object on stdout")


def _why(label: str, r: CommandResult) -> str:
    lines = [ln.removeprefix("error: ") for ln in r.stderr.strip().splitlines() if ln.strip()]
    tail = " | ".join(lines[-3:]) if lines else (r.stdout.strip()[-300:] or "no output")
    return f"{label} exited {r.rc}: {tail}"


def run_pair(
    server: Runner,
    client: Runner,
    server_ip: str,
    spec: TrafficSpec,
    *,
    port: int | None = None,
    pool_mib: int = 64,
    startup_s: float = 90.0,
) -> PairRun:
    """Start the server on ``server`` bound to ``server_ip``, run the client on ``client`` against it, collect both.

    ``startup_s`` covers the server's start-up (seconds of Python imports under TCG). Never raises for a failed
    session: the failure is in ``PairRun.error``.
    """
    port = port or random.randint(20000, 60000)
    phases = len(spec.ops) * len(spec.sizes)
    run_s = phases * ((spec.duration_s or 0) + 30) + (spec.iterations or 0) * phases * 0.05 + 60
    started: Started = server.start(
        server_argv(server.traffic_command, server_ip, port, pool_mib=pool_mib, accept_timeout_s=startup_s + 30)
    )
    argv = client_argv(client.traffic_command, server_ip, port, spec, pool_mib=pool_mib, connect_timeout_s=startup_s)
    client_res = client.run(argv, timeout_s=startup_s + run_s)
    session: SessionResult | None = None
    error: str | None = None
    if client_res.ok or client_res.rc == 1:
        try:
            session = SessionResult.model_validate(_last_json(client_res.stdout))
        except (ValueError, ValidationError) as exc:
            error = f"client output unreadable ({exc}): {client_res.stdout[-300:]}"
    else:
        error = _why(f"client on {client.name}", client_res)
    server_res: CommandResult | None = None
    try:
        server_res = started.wait(timeout_s=60 if session is not None else 5)
    except FabricdError as exc:  # a server that outlives its client is killed
        log.debug("server on %s did not exit: %s", server.name, exc)
        started.kill()
    server_summary: dict[str, Any] | None = None
    if server_res is not None:
        try:
            server_summary = _last_json(server_res.stdout)
        except ValueError:
            if error is None:
                error = _why(f"server on {server.name}", server_res)
        if server_summary is not None and not server_summary.get("ok") and error is None and session is None:
            error = f"server on {server.name}: {server_summary.get('error')}"
    return PairRun(
        server_host=server.name,
        client_host=client.name,
        server_ip=server_ip,
        port=port,
        client=session,
        server=server_summary,
        error=error,
        client_rc=client_res.rc,
        server_rc=server_res.rc if server_res is not None else None,
    )
