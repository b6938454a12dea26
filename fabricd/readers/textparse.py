"""Located errors for the host text readers (``rdma statistic``, ``dcb ... show``, ``show_gids``).

A support bundle arrives as command outputs in files; a parse that reads nothing from a non-empty output, a line
the grammar does not know, or a value of the wrong kind is a :class:`TextParseError` naming the source, the line
number, what was expected and what was found; never a traceback and never a silent success.
"""

from __future__ import annotations

from fabricd.errors import FabricdError

from .framing import frame_lines


class TextParseError(FabricdError):
    """A command output that does not parse: ``source:line: what (expected X, got Y)``."""

    def __init__(self, source: str, line: int, what: str, *, expected: str, got: str, hint: str | None = None) -> None:
        shown = got if len(got) <= 80 else got[:77] + "..."
        super().__init__(
            f"{source}:{line}: {what} (expected {expected}, got {shown!r})",
            hint=hint
            or "pass the command's output (prompt and command lines are skipped); the "
            "line named is the first one the reader could not place",
        )
        self.source = source
        self.line = line
        self.expected = expected
        self.got = got


def content_lines(text: str) -> list[tuple[int, str]]:
    """``(line number, line)`` of the lines that carry output, framed (:func:`fabricd.readers.framing.frame_lines`:
    prompt and echoed-command lines, CRLF, tabs and trailing spaces gone; numbers are the lines of ``text``): blank
    lines and ``# ...`` comments are left out."""
    out = []
    for n, line in frame_lines(text):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        out.append((n, line))
    return out


def to_int(value: str, source: str, line: int, name: str) -> int:
    try:
        return int(value, 10)
    except ValueError:
        raise TextParseError(source, line, f"{name}: not a number", expected="a decimal integer", got=value) from None


def split_commands(text: str) -> list[tuple[str | None, str]]:
    """Split a bundle file holding several outputs, each after a ``$ command`` line, into ``(command, output)``;
    text before the first command line belongs to command None."""
    out: list[tuple[str | None, list[str]]] = [(None, [])]
    for line in text.splitlines():
        if line.startswith("$ "):
            out.append((line[2:].strip(), []))
        else:
            out[-1][1].append(line)
    return [(cmd, "\n".join(lines)) for cmd, lines in out if cmd is not None or any(x.strip() for x in lines)]
