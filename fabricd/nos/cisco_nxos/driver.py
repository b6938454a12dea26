"""Cisco NX-OS driver: NX-OS has no candidate config, so fabricd stages the change client-side.

Push on NX-OS (napalm's nxos_ssh merge works the same way): ``checkpoint fabricd-last``; the diff is computed by
fabricd from the running config and the intent (nothing is sent for a dry run); commit sends the change lines in
config mode and saves with ``copy running-config startup-config``; verify re-reads; any failure after the first
line runs ``rollback running-config checkpoint fabricd-last``.
"""

from __future__ import annotations

from fabricd.errors import DriverError
from fabricd.model import Platform
from fabricd.platforms import textcfg
from fabricd.platforms.base import Capabilities, ConfigDelta
from fabricd.platforms.netmiko_base import NetmikoDriver

from . import patterns


class NxosDriver(NetmikoDriver, patterns=patterns):
    platform = Platform.CISCO_NXOS
    capabilities = Capabilities(
        config_session=False, checkpoint=True, commit_confirm=False, native_diff=False, atomic_commit=False
    )

    staged: list[str] | None = None
    staged_diff = ""

    def prepare(self) -> None:
        super().prepare()
        self.cfg_prompt = patterns.config_prompt(self.conn.base_prompt)
        self.prompt_re = self.cfg_prompt

    def _is_prompt_line(self, line: str) -> bool:
        """Only a line that is the (exec or config) prompt and nothing else: ``exec`` reads up to ``cfg_prompt``."""
        return bool(self.cfg_prompt.match(line)) and self.cfg_prompt.sub("", line).strip() == ""

    def fingerprint(self, config: str) -> str:
        return patterns.VOLATILE.sub("", config)

    def get_config(self) -> str:
        return self.plausible_config(self.exec("show running-config", op="get_config"))

    def compare(self, running: str, candidate: str) -> ConfigDelta:
        return textcfg.delta(textcfg.changes_between(running, candidate, patterns.OWNERSHIP), "  ")

    def checkpoint(self) -> None:
        self.exec(f"no checkpoint {self.checkpoint_name}", op="checkpoint")  # absent is fine
        self.exec_checked(f"checkpoint {self.checkpoint_name}", "checkpoint")

    def load_candidate(self, candidate: str, *, replace: bool = True) -> None:
        changes = textcfg.changes_between(self.get_config(), candidate, patterns.OWNERSHIP)
        if not replace:
            changes = [c for c in changes if c.kind == "add"]
        self.staged = textcfg.commands(changes)
        self.staged_diff = textcfg.diff_text(changes, "  ")

    def diff(self) -> str:
        self.require_candidate(self.staged, "diff")
        return self.staged_diff

    def commit(self, *, confirm_in_s: int | None = None) -> None:
        lines = ["configure terminal", *self.require_candidate(self.staged, "commit"), "end"]
        pairs = self.send_lines(lines, op="commit", prompt=self.cfg_prompt)
        self.staged = None
        self.check("commit", pairs)
        self.exec_checked("copy running-config startup-config", "commit", max(60.0, self.options.read_timeout_s))

    def confirm(self) -> None:
        """NX-OS has no commit-confirm: the pipeline verifies before declaring success."""

    def discard(self) -> None:
        self.staged = None
        self.staged_diff = ""

    def rollback(self) -> None:
        out = self.exec_checked(
            f"rollback running-config checkpoint {self.checkpoint_name}",
            "rollback",
            max(120.0, self.options.read_timeout_s),
        )
        if not patterns.ROLLBACK_OK.search(out):
            raise DriverError(self.name, "rollback", f"rollback did not report success: {out.strip()[-200:]}")
