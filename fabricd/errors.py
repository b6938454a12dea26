"""The one error tree of fabricd (exit codes: docs/contracts.md).

Every error a user can see derives from :class:`FabricdError`. The CLI turns them into a located message and an
exit code; nothing below ``fabricd.cli`` prints or exits.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class Location:
    """Where a value came from: a file and a 1-based line (0 when the file as a whole is meant)."""

    file: Path | str
    line: int = 0

    def __str__(self) -> str:
        return f"{self.file}:{self.line}" if self.line else str(self.file)


def _printable(text: str) -> str:
    """Escape control and other non-printable characters (they come from user input and would split lines or
    drive the terminal): ``\x1b`` -> ``\\x1b``."""
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in text)


@dataclass(frozen=True)
class Problem:
    """One located problem in user input.

    ``path`` is dotted (``switches[leaf1].ports[Ethernet0].mtu``); ``expected``/``got`` are short human strings.
    """

    message: str
    path: str = ""
    location: Location | None = None
    expected: str | None = None
    got: str | None = None
    hint: str | None = None
    code: str = "INV000"
    severity: str = "error"

    def render(self) -> str:
        """``file:line: dotted.path: what is wrong (expected X, got Y); hint``."""
        head = f"{self.location}: " if self.location else ""
        where = f"{self.path}: " if self.path else ""
        text = f"{head}{where}{self.message}"
        if self.expected is not None or self.got is not None:
            text += f" (expected {self.expected}, got {self.got})"
        if self.hint:
            text += f"; {self.hint}"
        return _printable(text)


_INDEX = re.compile(r"\[[^\]]*\]")
_OWNER = re.compile(r"(\w+)\[([^\]]*)\]")
_KINDS = {
    "nics": "NIC",
    "ports": "port",
    "hosts": "host",
    "switches": "switch",
    "links": "link",
    "members": "member",
    "vlans": "VLAN",
    "groups": "group",
}
_PLURAL = {"switch": "switches"}
GROUP_NAMES_SHOWN = 3
"""How many names of the objects that share a problem a grouped message lists before `and N more`."""


@dataclass(frozen=True)
class ProblemGroup:
    """Problems that are one mistake: the same code, severity, location, expected and got, on the same field of
    objects of one kind (``hosts[*].nics[*].mtu``). A bad value in ``defaults`` or a group is inherited by every
    device that uses it; it is reported once, with how many objects inherit it and a few of their names."""

    problems: tuple[Problem, ...]

    @property
    def first(self) -> Problem:
        return self.problems[0]

    @property
    def count(self) -> int:
        return len(self.problems)

    @property
    def pattern(self) -> str:
        """The dotted path with the object names left out: ``hosts[*].nics[*].mtu``."""
        return _INDEX.sub("[*]", self.first.path)

    @property
    def kind(self) -> str:
        """What the grouped objects are, in the plural: ``NICs``, ``ports``, ``hosts``... (``objects`` if unknown)."""
        owners = _OWNER.findall(self.first.path)
        word = _KINDS.get(owners[-1][0], "object") if owners else "object"
        return _PLURAL.get(word, word + "s")

    @property
    def names(self) -> list[str]:
        """Each object's name: the names in its path's brackets joined by dots (``gpu1.ens1f0np0``)."""
        return [".".join(name for _, name in _OWNER.findall(p.path)) or p.path for p in self.problems]

    def render(self) -> str:
        """One problem as :meth:`Problem.render`; a group as the first one's message on the path pattern, then
        ``(68 NICs inherit this: gpu1.eth0, gpu2.eth0, gpu3.eth0 and 65 more)``."""
        if self.count == 1:
            return self.first.render()
        names = self.names
        shown = ", ".join(names[:GROUP_NAMES_SHOWN])
        if self.count > GROUP_NAMES_SHOWN:
            shown += f" and {self.count - GROUP_NAMES_SHOWN} more"
        loc = self.first.location
        verb = "inherit this" if loc is not None and loc.line else "have this problem"
        one = Problem(
            self.first.message,
            path=self.pattern,
            location=loc,
            expected=self.first.expected,
            got=self.first.got,
            hint=self.first.hint,
            code=self.first.code,
            severity=self.first.severity,
        )
        return f"{one.render()} ({self.count} {self.kind} {verb}: {_printable(shown)})"


def group_problems(problems: Iterable[Problem]) -> list[ProblemGroup]:
    """Problems grouped by :class:`ProblemGroup`'s key, in the order each group's first problem came."""
    groups: dict[tuple[object, ...], list[Problem]] = {}
    for p in problems:
        loc = p.location
        key = (
            str(loc.file) if loc else None,
            loc.line if loc else None,
            p.code,
            p.severity,
            p.expected,
            p.got,
            _INDEX.sub("[*]", p.path) if p.path else id(p),
        )
        groups.setdefault(key, []).append(p)
    return [ProblemGroup(tuple(g)) for g in groups.values()]


@dataclass(frozen=True)
class Fix:
    """A fabricd command that fixes (or shows) a problem, as data: which command, with which options.

    Below ``fabricd.cli`` nothing spells a command line: code says ``Fix(("push",), {"device": "leaf1"},
    "restores the intent")`` and the CLI renders it (``fabricd.cli.common.fix_line``: ```fabricd push --device
    leaf1` (restores the intent)``). ``args`` maps an option's name (``device``, ``max_failures``) to its value;
    ``True`` is a bare flag. A rename of a command or option then touches ``cli/`` only, and a test checks that
    every ``Fix`` names a real command and option (tests/unit/test_cli_words.py).
    """

    command: tuple[str, ...]
    args: Mapping[str, str | bool] = field(default_factory=dict, hash=False)
    text: str = ""
    """What running it does, in words (``shows the difference``); may be empty."""
    operands: tuple[str, ...] = ()
    """Positional arguments after the command (``docs captures``: the page)."""

    def describe(self) -> str:
        """A plain form for places that do not render commands (logs, the agent's status): ``push device=leaf1``."""
        words = [*self.command, *self.operands, *(k if v is True else f"{k}={v}" for k, v in self.args.items())]
        return " ".join(words) + (f" ({self.text})" if self.text else "")


class FabricdError(Exception):
    """Base of every error fabricd raises on purpose. ``hint`` says how to fix it in words; ``fixes`` are the
    fabricd commands that fix it, as data (the CLI renders them as command lines). ``option`` names the setting
    whose value is wrong (``device``, ``listen``): the message is about its value, and the CLI puts the option's
    flag in front (``--device leaf9: no switch of that name``), other callers its name (``device leaf9: ...``)."""

    exit_code = 2

    def __init__(
        self, message: str, *, hint: str | None = None, fixes: tuple[Fix, ...] = (), option: str | None = None
    ) -> None:
        super().__init__(f"{option} {message}" if option else message)
        self.message = message
        self.hint = hint
        self.fixes = fixes
        self.option = option

    def head(self, option_prefix: str = "") -> str:
        """The message, after the option's name (with ``option_prefix``: ``--``) when it has one."""
        return f"{option_prefix}{self.option.replace('_', '-')} {self.message}" if self.option else self.message

    def words(self) -> str:
        """The message and the hint, without the fixes (for a caller that keeps the fixes as data)."""
        return f"{self.head()}; {self.hint}" if self.hint else self.head()

    def render(self) -> str:
        extra = "; ".join(f.describe() for f in self.fixes)
        hint = "; ".join(h for h in (self.hint, extra) if h)
        return f"{self.head()}; {hint}" if hint else self.head()


class UsageError(FabricdError):
    """A bad option or argument, caught before any work (exit 2)."""


class InventoryError(FabricdError):
    """The inventory could not be loaded or is invalid. Carries *all* problems found, not just the first."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = list(problems)
        groups = group_problems(self.problems)
        first = groups[0].render() if groups else "invalid inventory"
        more = f" (and {len(groups) - 1} more)" if len(groups) > 1 else ""
        super().__init__(first + more)

    def render(self) -> str:
        """One line per mistake: problems that one source line causes in many objects are grouped."""
        return "\n".join(g.render() for g in group_problems(self.problems))


class RenderError(FabricdError):
    """A template failed to render (missing template, undefined variable)."""


class DriverError(FabricdError):
    """A switch driver failed. ``op`` is connect | command | commit | rollback | ...; ``target`` names the device."""

    exit_code = 3

    def __init__(
        self, target: str, op: str, message: str, *, hint: str | None = None, fixes: tuple[Fix, ...] = ()
    ) -> None:
        super().__init__(f"{target}: {op}: {message}", hint=hint, fixes=fixes)
        self.target = target
        self.op = op


class HostBackendError(FabricdError):
    """A host backend operation failed on ``path`` with ``errno`` (None when not an OS error)."""

    exit_code = 3

    def __init__(self, op: str, path: str, message: str, *, errno: int | None = None, hint: str | None = None) -> None:
        super().__init__(f"{op} {path}: {message}", hint=hint)
        self.op = op
        self.path = path
        self.errno = errno
