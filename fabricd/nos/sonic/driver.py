"""SONiC driver: the change is an RFC 6902 JSON patch applied by the Generic Config Updater.

Push on SONiC: ``sudo config checkpoint fabricd-last``; fabricd computes the patch from ``show
runningconfiguration all`` and the rendered CONFIG_DB tables, writes it to the switch (base64 in a few ``echo``
lines) and lets GCU validate it with ``config apply-patch --dry-run``; commit is ``config apply-patch``; verify
re-reads CONFIG_DB; confirm saves with ``config save -y``; a failure runs ``config rollback fabricd-last``.
SONiC has no commit-confirm and GCU applies a patch change by change, so the checkpoint is what makes it safe.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from fabricd.errors import DriverError
from fabricd.model import Platform
from fabricd.platforms.base import Capabilities, ConfigDelta
from fabricd.platforms.netmiko_base import NetmikoDriver

from . import patterns

Db = dict[str, dict[str, dict[str, Any]]]


def _escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


def _load(text: str, what: str, target: str) -> Db:
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise DriverError(
            target,
            "read",
            f"{what} is not JSON: {exc}",
            hint="the device printed something else; check the session log",
        ) from None
    if not isinstance(data, dict):
        raise DriverError(target, "read", f"{what} is not a CONFIG_DB object")
    return data


def patch_ops(running: Db, candidate: Db, *, replace: bool = True) -> list[dict[str, Any]]:
    """JSON patch turning ``running`` into ``candidate`` on what fabricd owns (see patterns.OWNED/MERGED)."""
    ops: list[dict[str, Any]] = []
    for table, entries in candidate.items():
        current = running.get(table)
        if current is None:
            ops.append({"op": "add", "path": f"/{_escape(table)}", "value": entries})
            continue
        merged = table not in patterns.OWNED_TABLES
        if not merged and replace:
            for key in current:
                if key not in entries:
                    ops.append({"op": "remove", "path": f"/{_escape(table)}/{_escape(key)}"})
        for key, fields in entries.items():
            path = f"/{_escape(table)}/{_escape(key)}"
            have = current.get(key)
            if have is None:
                ops.append({"op": "add", "path": path, "value": fields})
            elif merged or not replace:
                for field, value in fields.items():
                    if have.get(field) != value:
                        ops.append({"op": "add", "path": f"{path}/{_escape(field)}", "value": value})
            elif have != fields:
                ops.append({"op": "replace", "path": path, "value": fields})
    if replace:
        for table in running:
            if table in patterns.OWNED_TABLES and table not in candidate:
                ops.append({"op": "remove", "path": f"/{_escape(table)}"})
    return ops


def _describe(op: dict[str, Any]) -> str:
    path = op["path"].lstrip("/").replace("~1", "/").replace("~0", "~").replace("/", "|", 1)
    if op["op"] == "remove":
        return f"unexpected {path}"
    return f"{'missing' if op['op'] == 'add' else 'different'} {path}: {json.dumps(op['value'], sort_keys=True)}"


def diff_text(ops: list[dict[str, Any]]) -> str:
    """``+``/``-``/``~`` lines per patch operation (table|key[|field] and value)."""
    sign = {"add": "+", "remove": "-", "replace": "~"}
    return "\n".join(
        f"{sign[op['op']]} {op['path']}" + (f" {json.dumps(op['value'], sort_keys=True)}" if "value" in op else "")
        for op in ops
    )


class SonicDriver(NetmikoDriver, patterns=patterns):
    platform = Platform.SONIC
    capabilities = Capabilities(
        config_session=False, checkpoint=True, commit_confirm=False, native_diff=True, atomic_commit=False
    )

    ops: list[dict[str, Any]] | None = None

    def prepare(self) -> None:
        super().prepare()
        self.line_prompt = patterns.shell_prompt(self.conn.base_prompt)

    def _checked(self, command: str, op: str, ok: Any, timeout: float | None = None) -> str:
        out = self.exec_checked(command, op, timeout)
        if ok is not None and not ok.search(out):
            raise DriverError(self.name, op, f"{command!r} did not report success: {out.strip()[-300:]}")
        return out

    def get_config(self) -> str:
        return self.plausible_config(self.exec("show runningconfiguration all", op="get_config"))

    def run(self, commands: list[str]) -> dict[str, str]:
        """Read-only show commands. A reply in SONiC's error shape (click's ``Usage: ... Error: No such command``
        on a release without the command, ``-bash:``...) raises, so that the poller records an optional command this
        release lacks, and a required one fails the poll with the device's words, instead of parsing an error
        message as counters."""
        out: dict[str, str] = {}
        for command in commands:
            reply = self.exec(command, op="command")
            if self.error_pattern.search(reply):
                words = " / ".join(ln.strip() for ln in reply.splitlines() if self.error_pattern.search(ln))
                raise DriverError(
                    self.name,
                    "command",
                    f"{command!r} failed: {words[:300]}",
                    hint="a command this SONiC release lacks, or a session without the rights to run it",
                )
            out[command] = reply
        return out

    def compare(self, running: str, candidate: str) -> ConfigDelta:
        ops = patch_ops(_load(running, "running config", self.name), _load(candidate, "candidate", self.name))
        return ConfigDelta(tuple(_describe(op) for op in ops), diff_text(ops))

    def checkpoint(self) -> None:
        self._checked(f"sudo config checkpoint {self.checkpoint_name}", "checkpoint", patterns.CHECKPOINT_OK)

    def load_candidate(self, candidate: str, *, replace: bool = True) -> None:
        running = _load(self.get_config(), "running config", self.name)
        self.ops = patch_ops(running, _load(candidate, "candidate", self.name), replace=replace)
        blob = base64.b64encode(json.dumps(self.ops).encode()).decode()
        size = patterns.CHUNK_CHARS
        lines = [
            f"echo '{blob[i : i + size]}' | base64 -d {'>' if i == 0 else '>>'} {patterns.PATCH_FILE}"
            for i in range(0, max(len(blob), 1), size)
        ]
        pairs = self.send_lines(lines, op="load_candidate", prompt=self.line_prompt)
        self.check("load_candidate", pairs)

    def _apply_patch(self, op: str, dry_run: bool, timeout_s: float) -> list[dict[str, Any]]:
        """``config apply-patch`` of the loaded candidate's patch file (GCU checks it with ``--dry-run``); its ops."""
        ops = self.require_candidate(self.ops, op)
        self._checked(
            f"sudo config apply-patch {'--dry-run ' if dry_run else ''}{patterns.PATCH_FILE}",
            op,
            patterns.APPLY_OK,
            timeout=max(timeout_s, self.options.read_timeout_s),
        )
        return ops

    def diff(self) -> str:
        return diff_text(self._apply_patch("diff", True, 120.0))

    def commit(self, *, confirm_in_s: int | None = None) -> None:
        self._apply_patch("commit", False, 300.0)
        self.ops = None

    def confirm(self) -> None:
        """No commit-confirm on SONiC: after verification, persist with ``config save -y``."""
        self._checked("sudo config save -y", "confirm", None)
        self.exec(f"rm -f {patterns.PATCH_FILE}", op="confirm")

    def discard(self) -> None:
        self.ops = None
        if self.conn is not None:
            self.exec(f"rm -f {patterns.PATCH_FILE}", op="discard")

    def rollback(self) -> None:
        self._checked(
            f"sudo config rollback {self.checkpoint_name}",
            "rollback",
            patterns.ROLLBACK_OK,
            timeout=max(300.0, self.options.read_timeout_s),
        )
