"""Arista EOS driver: the candidate is staged in a configuration session, EOS computes the diff, ``commit timer``
gives commit-confirm, and ``configure checkpoint save`` keeps the rollback point.

Push on EOS (napalm's eos driver does the same): ``configure checkpoint save fabricd-last``;
``configure session fabricd-<time>`` + the change lines; ``show session-config diffs``; ``commit timer hh:mm:ss``;
re-read and verify; ``configure session NAME commit`` to confirm, or ``configure session NAME abort`` to revert.
"""

from __future__ import annotations

import time

from fabricd.model import Platform
from fabricd.platforms import textcfg
from fabricd.platforms.base import Capabilities, ConfigDelta
from fabricd.platforms.netmiko_base import NetmikoDriver

from . import patterns


class EosDriver(NetmikoDriver, patterns=patterns):
    platform = Platform.ARISTA_EOS
    capabilities = Capabilities(
        config_session=True, checkpoint=True, commit_confirm=True, native_diff=True, atomic_commit=True
    )

    session: str | None = None
    in_session = False
    timer_pending = False

    def prepare(self) -> None:
        if not self.conn.check_enable_mode():
            self.conn.enable()
        super().prepare()
        self.cfg_prompt = patterns.config_prompt(self.conn.base_prompt)

    def get_config(self) -> str:
        return self.plausible_config(self.exec("show running-config", op="get_config"))

    def compare(self, running: str, candidate: str) -> ConfigDelta:
        return textcfg.delta(textcfg.changes_between(running, candidate, patterns.OWNERSHIP))

    def checkpoint(self) -> None:
        self.exec_checked(f"configure checkpoint save {self.checkpoint_name}", "checkpoint")

    def load_candidate(self, candidate: str, *, replace: bool = True) -> None:
        changes = textcfg.changes_between(self.get_config(), candidate, patterns.OWNERSHIP)
        if not replace:
            changes = [c for c in changes if c.kind == "add"]
        self.session = f"{patterns.SESSION_NAME}-{time.time_ns() // 1_000_000}"
        lines = [f"configure session {self.session}", *textcfg.commands(changes)]
        self.in_session = True
        self.send_candidate(lines, self.cfg_prompt)

    def diff(self) -> str:
        self.require_candidate(self.in_session, "diff")
        return self.exec("show session-config diffs", op="diff")

    def commit(self, *, confirm_in_s: int | None = None) -> None:
        self.require_candidate(self.in_session, "commit")
        if confirm_in_s is not None:
            h, rem = divmod(max(1, confirm_in_s), 3600)
            m, s = divmod(rem, 60)
            command = f"commit timer {h:02d}:{m:02d}:{s:02d}"
        else:
            command = "commit"
        out = self.exec(command, op="commit")
        if self.error_pattern.search(out):
            self.discard()
            self.check("commit", [(command, out)])
        self.in_session = False
        self.timer_pending = confirm_in_s is not None

    def confirm(self) -> None:
        if self.timer_pending and self.session:
            self.exec_checked(f"configure session {self.session} commit", "confirm")
        self.timer_pending = False

    def discard(self) -> None:
        if self.in_session:
            self.exec("abort", op="discard")
        elif self.session:
            self.exec(f"configure session {self.session} abort", op="discard")
        self.in_session = False

    def pending_sessions(self) -> dict[str, str]:
        """fabricd's configuration sessions that are still open on the device: name -> state."""
        out = self.exec("show configuration sessions", op="rollback")
        found = {}
        for m in patterns.SESSION_ROW.finditer(out):
            if m.group("state") in ("pending", "pendingCommitTimer"):
                found[m.group("name")] = m.group("state")
        return found

    def rollback(self) -> None:
        """Abort fabricd's sessions with a pending commit timer (EOS reverts them at once); else restore the
        checkpoint. Works from a fresh connection too (after a dropped session, or from ``fabricd rollback``)."""
        if self.in_session:
            self.discard()
            return
        reverted = False
        for name, state in self.pending_sessions().items():
            self.exec_checked(f"configure session {name} abort", "rollback")
            reverted = reverted or state == "pendingCommitTimer"
        self.timer_pending = False
        if not reverted:
            self.exec_checked(f"configure replace checkpoint:{self.checkpoint_name}", "rollback")
