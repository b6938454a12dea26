"""The one error tree of fabricd (exit codes: docs/contracts.md).

Every error a user can see derives from :class:`FabricdError`. The CLI turns them into a located message and an
exit code; nothing below ``fabricd.cli`` prints or exits.
"""

from __future__ import annotations

from dataclasses import dataclass
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


class FabricdError(Exception):
    """Base of every error fabricd raises on purpose. ``hint`` says how to fix it."""

    exit_code = 2

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def render(self) -> str:
        return f"{self.message}; {self.hint}" if self.hint else self.message


class UsageError(FabricdError):
    """A bad option or argument, caught before any work (exit 2)."""


class InventoryError(FabricdError):
    """The inventory could not be loaded or is invalid. Carries *all* problems found, not just the first."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = list(problems)
        first = problems[0].render() if problems else "invalid inventory"
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        super().__init__(first + more)

    def render(self) -> str:
        return "\n".join(p.render() for p in self.problems)


class RenderError(FabricdError):
    """A template failed to render (missing template, undefined variable)."""


class DriverError(FabricdError):
    """A switch driver failed. ``op`` is connect | command | commit | rollback | ...; ``target`` names the device."""

    exit_code = 3

    def __init__(self, target: str, op: str, message: str, *, hint: str | None = None) -> None:
        super().__init__(f"{target}: {op}: {message}", hint=hint)
        self.target = target
        self.op = op


class HostBackendError(FabricdError):
    """A host backend operation failed on ``path`` with ``errno`` (None when not an OS error)."""

    exit_code = 3

    def __init__(
        self, op: str, path: str, message: str, *, errno: int | None = None, hint: str | None = None
    ) -> None:
        super().__init__(f"{op} {path}: {message}", hint=hint)
        self.op = op
        self.path = path
        self.errno = errno
