"""NVIDIA Cumulus NVUE driver: ``nv set``/``nv unset`` stage a pending revision, NVUE diffs it, ``nv config apply
--confirm Ns`` applies it with a revert timer, ``nv config apply --confirm-yes`` keeps it.

Push on NVUE (the community napalm-cumulus driver does the same): remember the applied revision (rollback point);
``nv config detach`` (drop any stale pending change); ``nv unset`` for owned entries the intent lacks and ``nv set``
for missing ones; ``nv config diff``; ``nv config apply --confirm 120s -y``; verify with ``nv config show -o
commands``; ``nv config apply --confirm-yes``. Rollback: ``--confirm-no`` while a timer runs, else ``nv config apply
REV -y`` with the revision from before the push.
"""

from __future__ import annotations

import json
import re

from fabricd.errors import DriverError
from fabricd.model import Platform
from fabricd.platforms.base import Capabilities, ConfigDelta
from fabricd.platforms.netmiko_base import NetmikoDriver

from . import patterns, schema

_COMMENT = re.compile(r"^\s*(?:#.*)?$")


def leaves(text: str, target: str, what: str) -> dict[tuple[str, ...], str | None]:
    """Every leaf of ``nv set`` lines (comments and blank lines skipped); unknown paths raise DriverError."""
    out: dict[tuple[str, ...], str | None] = {}
    for raw in text.splitlines():
        if _COMMENT.match(raw):
            continue
        tokens = raw.split()
        if tokens[:2] != ["nv", "set"]:
            raise DriverError(
                target,
                "read",
                f"{what}: not an `nv set` line: {raw.strip()!r}",
                hint="NVUE configs are lists of `nv set` commands",
            )
        parsed = schema.parse_set(tokens[2:])
        if isinstance(parsed, schema.PathError):
            raise DriverError(target, "read", f"{what}: {parsed.message('set', tokens[2:])}")
        for path, value in parsed:
            out[path] = value
    return out


def changes(running: str, candidate: str, target: str) -> tuple[list[str], list[str], list[str]]:
    """(problems, unset lines, set lines) that make the running config match the candidate on what fabricd owns."""
    run = leaves(running, target, "running config")
    cand = leaves(candidate, target, "candidate")
    problems: list[str] = []
    unsets: list[str] = []
    sets: list[str] = []
    for path, value in run.items():
        if path not in cand and schema.is_owned(path, patterns.OWNED_PREFIXES):
            problems.append(f"unexpected: {schema.leaf_line((path, value))}")
            unsets.append("nv unset " + " ".join(path))
    for path, value in cand.items():
        if path not in run or run[path] != value:
            word = "different" if path in run else "missing"
            problems.append(f"{word}: {schema.leaf_line((path, value))}")
            sets.append(schema.leaf_line((path, value)))
    return problems, unsets, sets


class NvueDriver(NetmikoDriver, patterns=patterns):
    platform = Platform.CUMULUS_NVUE
    capabilities = Capabilities(
        config_session=True, checkpoint=True, commit_confirm=True, native_diff=True, atomic_commit=True
    )

    loaded = False
    timer_pending = False

    def prepare(self) -> None:
        super().prepare()
        self.line_prompt = patterns.shell_prompt(self.conn.base_prompt)

    def get_config(self) -> str:
        return self.plausible_config(self.exec("nv config show -o commands", op="get_config"))

    def compare(self, running: str, candidate: str) -> ConfigDelta:
        problems, unsets, sets = changes(running, candidate, self.name)
        diff = "\n".join([*("-" + u[len("nv unset") :] for u in unsets), *("+" + s[len("nv set") :] for s in sets)])
        return ConfigDelta(tuple(problems), diff)

    def revisions(self) -> dict[str, dict[str, str | None]]:
        out = self.exec("nv config revision -o json", op="checkpoint")
        try:
            data = json.loads(out)
        except ValueError:
            raise DriverError(
                self.name, "checkpoint", f"`nv config revision -o json` is not JSON: {out[:120]!r}"
            ) from None
        return {str(k): v for k, v in data.items() if isinstance(v, dict)}

    def applied_revision(self) -> str | None:
        revs = [int(k) for k, v in self.revisions().items() if k.isdigit() and v.get("state") in ("applied", "confirm")]
        return str(max(revs)) if revs else None

    def checkpoint(self) -> None:
        """NVUE keeps every applied revision; the rollback point is the one applied now."""
        self.rollback_token = self.applied_revision()

    def load_candidate(self, candidate: str, *, replace: bool = True) -> None:
        _, unsets, sets = changes(self.get_config(), candidate, self.name)
        lines = ["nv config detach", *(unsets if replace else []), *sets]
        self.send_candidate(lines, self.line_prompt)
        self.loaded = True

    def diff(self) -> str:
        self.require_candidate(self.loaded, "diff")
        return self.exec_checked("nv config diff", "diff")

    def commit(self, *, confirm_in_s: int | None = None) -> None:
        self.require_candidate(self.loaded, "commit")
        command = f"nv config apply --confirm {confirm_in_s}s -y" if confirm_in_s else "nv config apply -y"
        out = self.exec_checked(command, "commit")
        if not patterns.APPLIED.search(out):
            raise DriverError(self.name, "commit", f"apply did not report a revision: {out.strip()[-200:]}")
        self.loaded = False
        self.timer_pending = confirm_in_s is not None

    def confirm(self) -> None:
        if self.timer_pending:
            self.exec_checked("nv config apply --confirm-yes", "confirm")
        self.timer_pending = False

    def discard(self) -> None:
        if self.conn is not None:
            self.exec("nv config detach", op="discard")
        self.loaded = False

    def rollback(self) -> None:
        """Revert a pending confirm; else re-apply the revision from before the push (``rollback_token``) or, from
        a fresh connection without one, the parent of the applied revision."""
        revs = self.revisions()
        if any(v.get("state") == "confirm" for v in revs.values()):
            self.exec_checked("nv config apply --confirm-no", "rollback")
            self.timer_pending = False
            return
        self.exec("nv config detach", op="rollback")
        target = self.rollback_token
        if target is None:
            current = self.applied_revision()
            target = (revs.get(current or "", {}).get("parent-revision-id")) if current else None
        if target is None:
            raise DriverError(
                self.name, "rollback", "no earlier revision to return to", hint="see `nv config history` on the switch"
            )
        if target == self.applied_revision():
            return
        self.exec_checked(f"nv config apply {target} -y", "rollback")
