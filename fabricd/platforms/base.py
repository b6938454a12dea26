"""The switch driver contract: napalm's and scrapli_cfg's verbs, plus declared capabilities.

A driver manages one SSH session to one switch. The push pipeline (:mod:`fabricd.deploy`) calls:

``open`` -> ``get_config`` -> ``checkpoint`` -> ``load_candidate(replace=)`` -> ``diff`` -> ``commit(confirm_in_s=)``
-> ``get_config`` (verify with :meth:`SwitchDriver.compare`) -> ``confirm`` or ``rollback`` -> ``close``.

``discard`` drops a loaded candidate (dry-run); ``run`` executes show commands for exporters and audits. Every
failure raises :class:`fabricd.errors.DriverError` naming the target and the operation.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable

from fabricd.errors import DriverError
from fabricd.model import Model, Platform


class Capabilities(Model):
    """What a platform's change mechanism offers. The pipeline adapts to these, never to the platform id."""

    config_session: bool = False
    """Candidate edits live in a named session until commit (EOS ``configure session``)."""
    checkpoint: bool = True
    """The device can save its running config under a name and restore it later."""
    commit_confirm: bool = False
    """Commit with a timer that reverts unless confirmed (EOS ``commit timer``, NVUE ``apply --confirm``)."""
    native_diff: bool = False
    """The device computes the diff of the loaded candidate itself, before anything is applied."""
    atomic_commit: bool = False
    """A commit applies all of the candidate or none of it."""


@dataclass(frozen=True)
class ConfigDelta:
    """The difference between a running config and the intended one, on what fabricd owns.

    ``changes`` are human-readable one-liners (``missing under interface Ethernet1: mtu 9214``); ``diff`` is a
    readable diff. Empty ``changes`` means the device already matches the intent.
    """

    changes: tuple[str, ...] = ()
    diff: str = ""

    @property
    def empty(self) -> bool:
        return not self.changes


@dataclass(frozen=True)
class DriverOptions:
    """Connection and pacing settings shared by all drivers.

    ``read_timeout_s``: longest wait for one command's prompt (s); ``conn_timeout_s``: TCP+SSH setup limit (s);
    ``chunk_lines``: config lines written per burst before waiting for the device to catch up;
    ``session_log_dir``: when set, netmiko writes a session log per device there (0600; secrets are masked);
    ``accept_new_host_keys``: trust on first use, appending a new host's key to this file (never rewriting it).
    """

    read_timeout_s: float = 60.0
    conn_timeout_s: float = 15.0
    chunk_lines: int = 50
    session_log_dir: Path | None = None
    accept_new_host_keys: Path | None = None


class ConnectionLostError(DriverError):
    """The SSH session dropped mid-operation; the device state is uncertain until re-read."""


@runtime_checkable
class SwitchDriver(Protocol):
    """The verbs every platform driver implements. deploy, audit, drift and capture use drivers only through this
    Protocol, so a driver that is not netmiko's (NETCONF, REST) plugs in by naming its class in its platform pack
    (``PlatformSpec.driver``)."""

    platform: Platform
    capabilities: Capabilities
    name: str
    rollback_token: str | None
    """Platform state a fresh connection needs to roll back what this one started (NVUE: the revision applied
    before the push). The pipeline copies it to the new driver when it reconnects to recover."""

    @property
    def connected(self) -> bool:
        """A session is open."""

    def fingerprint(self, config: str) -> str:
        """What of ``config`` identifies the device state fabricd cares about (rollback compares two of them)."""

    def open(self) -> None:
        """Connect and log in (host key verified)."""

    def close(self) -> None:
        """Log out; never raises."""

    def get_config(self) -> str:
        """The running config as the device prints it (text or JSON)."""

    def compare(self, running: str, candidate: str) -> ConfigDelta:
        """Pure: what would change to make ``running`` match ``candidate`` on the sections fabricd owns."""

    def checkpoint(self) -> None:
        """Save the running config as fabricd's rollback point (``fabricd-last``)."""

    def load_candidate(self, candidate: str, *, replace: bool = True) -> None:
        """Stage ``candidate``. With ``replace``, owned sections absent from it are removed; else merged."""

    def diff(self) -> str:
        """The staged change, from the device where it can compute it."""

    def commit(self, *, confirm_in_s: int | None = None) -> None:
        """Apply the staged change; with ``confirm_in_s`` it reverts unless :meth:`confirm` follows in time."""

    def confirm(self) -> None:
        """Make a timed commit permanent (no-op without a pending timer)."""

    def discard(self) -> None:
        """Drop the staged change (dry-run or failure before commit)."""

    def rollback(self) -> None:
        """Return to the rollback point: abort a pending timed commit, else restore the checkpoint."""

    def run(self, commands: list[str]) -> dict[str, str]:
        """Run exec/show commands; returns each command's output."""
