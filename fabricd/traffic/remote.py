"""How fabricd runs a command on a traffic endpoint (a lab VM today, any host with an agent tomorrow).

``validate-fabric`` and ``traffic selftest`` start ``fabricd traffic server`` on one host and ``fabricd traffic
client`` on another, then read both hosts' counters. They only need the :class:`Runner` protocol below. Runners come
from SSH (``validate-fabric --via ssh``, :mod:`fabricd.deploy.ssh_runner`) or from a :class:`RunnerSource` that
another distribution plugs in through the ``fabricd.traffic_runners`` entry point group
(:mod:`fabricd.traffic.plugins`): fabricd-lab's Soft-RoCE VMs implement it over qemu-guest-agent.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from .oob import TrafficError


@dataclass(frozen=True)
class CommandResult:
    """A finished remote command: exit code (128+signal when killed), captured text, wall time in seconds."""

    argv: tuple[str, ...]
    rc: int
    stdout: str
    stderr: str
    seconds: float
    truncated: bool = False

    @property
    def ok(self) -> bool:
        return self.rc == 0

    def json_stdout(self, what: str) -> Any:
        """The JSON the remote program printed; TrafficError naming ``what`` when it failed or printed no JSON."""
        if not self.ok:
            raise TrafficError(f"{what} failed (exit {self.rc}): {self.stderr.strip()[-300:]}")
        try:
            return json.loads(self.stdout)
        except ValueError as exc:
            raise TrafficError(f"{what} printed no JSON: {self.stdout[-200:]}") from exc


class Started(Protocol):
    """A command started in the background on an endpoint."""

    def wait(self, timeout_s: float) -> CommandResult:
        """Block until it exits (kill it and raise on timeout)."""
        ...

    def kill(self) -> None:
        """Stop it now (best effort)."""
        ...


class Runner(Protocol):
    """Runs commands on one endpoint host. ``name`` is the inventory host name."""

    name: str
    traffic_command: tuple[str, ...]
    """How to invoke ``fabricd traffic`` on this endpoint (``("fabricd", "traffic")`` on a normal host)."""

    def run(
        self,
        argv: Sequence[str],
        *,
        timeout_s: float,
        stdin: bytes | None = None,
        env: Mapping[str, str] | None = None,
    ) -> CommandResult:
        """Run ``argv`` to completion; a non-zero exit is returned, not raised."""
        ...

    def start(self, argv: Sequence[str], *, env: Mapping[str, str] | None = None) -> Started:
        """Start ``argv`` in the background."""
        ...


class PoolEndpoint(Protocol):
    """One host a :class:`RunnerPool` can run commands on, as the inventory describes it."""

    @property
    def role(self) -> str:
        """The pool's own name for it (``a``/``b`` for the lab VMs)."""
        ...

    @property
    def host(self) -> str:
        """The inventory host name it plays."""
        ...

    @property
    def ip(self) -> str:
        """Its RDMA address as ``ip/prefix``."""
        ...

    @property
    def address(self) -> str:
        """The bare RDMA address."""
        ...

    @property
    def rdma_device(self) -> str: ...


class RunnerPool(Protocol):
    """Running endpoints a :class:`RunnerSource` offers (for example a pair of lab VMs)."""

    @property
    def endpoints(self) -> Sequence[PoolEndpoint]: ...

    @property
    def inventory(self) -> str:
        """The inventory the endpoints were set up from."""
        ...

    @property
    def accel(self) -> str:
        """How the endpoints run: ``kvm``, ``tcg`` (slow: traffic timeouts are raised) or ``host``."""
        ...

    def runner(self, which: str) -> Runner:
        """A runner for the endpoint with this role or host name."""
        ...


class RunnerSource(Protocol):
    """Where runners come from when fabricd cannot reach a host itself: an entry point of the group
    ``fabricd.traffic_runners`` names an object with this shape."""

    def running(self, name: str) -> RunnerPool | None:
        """The running pool called ``name``, or None when none is up."""
        ...

    def how_to_start(self, name: str) -> str:
        """The command that starts pool ``name`` (for hints)."""
        ...
