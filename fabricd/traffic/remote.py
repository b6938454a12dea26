"""How fabricd runs a command on a traffic endpoint (a lab VM today, any host with an agent tomorrow).

``validate-fabric`` and ``traffic selftest`` start ``fabricd traffic server`` on one host and ``fabricd traffic
client`` on another, then read both hosts' counters. They only need the :class:`Runner` protocol below; the lab VM
(``fabricd.lab.vm``) implements it over qemu-guest-agent.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol


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
        self, argv: Sequence[str], *, timeout_s: float, stdin: bytes | None = None,
        env: Mapping[str, str] | None = None,
    ) -> CommandResult:
        """Run ``argv`` to completion; a non-zero exit is returned, not raised."""
        ...

    def start(self, argv: Sequence[str], *, env: Mapping[str, str] | None = None) -> Started:
        """Start ``argv`` in the background."""
        ...
