"""One framing step for every text reader, switch and host: the command output as a parser expects it, from the
output as people paste it.

A capture arrives as it was copied from a terminal, a support bundle or an issue thread: a shell or CLI prompt with
the command before the output (``[user@host ~]$ rdma stat show``, ``admin@sonic:~$ show pfc counters``,
``switch# show interface``, ``# dcb ets show dev eth0``), the command echoed alone (``sudo rdma statistic``), a bare
prompt after it (``$``, ``switch(config)#``), pagination marks (`` --More-- `` and the backspaces that erase
them), ANSI colour codes, CRLF line ends, tabs and trailing spaces. :func:`frame` takes all of that away and keeps
everything else; every parser the parser-role registry names (fabricd/nos/roles.py) reads its text through
:func:`framed` (or :func:`frame_lines`), which tests/golden/test_framing.py checks, so no parser strips prompts on
its own.

What is left alone, on purpose:

- ``#`` and ``!`` comment lines (switch configs, perfquery's ``# Port counters: Lid 7 port 1`` header, bundle
  comments): a ``# `` line is a prompt only when a command follows it (``# dcb ets show dev eth0``); the readers
  that skip comments still do so themselves;
- a line that looks like a command in the middle of the output: only the first line of output can be an echoed
  command (a switch config line ``show ...`` does not exist, but ``nv set ...`` lines are NVUE's output);
- relative indentation (NVUE trees, NX-OS blocks): only the indent common to every line is removed;
- column positions: a tab is expanded to the next multiple of 8 columns, as a terminal shows it, so tables cut by
  their header's positions keep their columns, and parsers that split on whitespace see the same words.

Lines are never renumbered: a prompt or echo line becomes an empty line, so a reader's error names the line of the
text it was given (:func:`frame_lines` keeps the original numbers even where a pagination-only line is dropped).
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable
from typing import Any, Concatenate, ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")

_VERBS = (
    r"(?:sudo\s+(?:-\S+\s+)*)?(?:show|sh|nv\s+(?:show|config\s+show)|rdma|dcb|ethtool|show_gids|perfquery|portstat|"
    r"pfcstat|queuestat|pfcwd|watermarkstat|intfstat|mlnx_qos|lldptool|lldpctl|lldpcli|niccli|cl-netstat|cat|"
    r"ibv_devinfo|ibstat|ibstatus|ibnetdiscover|iblinkinfo|vtysh|docker)\b"
)
"""Words a command line starts with (switch CLIs, the host tools fabricd reads, ``sudo``, ``cat`` of a sysfs file).
Only used to tell a ``# command`` prompt line from a ``# comment`` and an echoed first line from output."""

_COMMAND = re.compile(rf"^{_VERBS}(?:\s.*)?$")
"""A whole line that is a command (``show pfc counters``, ``sudo rdma statistic``, ``dcb ets show dev eth0``)."""

_SHELL_PROMPT = re.compile(
    r"^(?:"
    r"\[[^\]\s@]+@[^\]]+\]\s?[#$%]"  # [user@host dir]$ / [root@node ~]#
    r"|[\w.\-]+@[\w.\-]+(?::[^\s#$%]*)?\s?[#$%]"  # admin@sonic:~$, root@host:~#, cumulus@leaf01:mgmt:~$
    r"|\([\w.\-]+\)\s*[\w.\-]+@[\w.\-]+(?::[^\s#$%]*)?\s?[#$%]"  # (venv) user@host:~$
    r")(?:\s+(?P<cmd>.*))?$"
)
_CLI_PROMPT = re.compile(r"^(?P<host>[A-Za-z][\w.\-]*(?:\((?:config|conf)[\w\-./]*\))?)[#>]\s*(?P<cmd>.*)$")
"""A NOS CLI prompt: ``switch#``, ``switch(config-if)#``, ``leaf1>``, ``N5K-A# show int e1/47``, ``sonic# show``."""
_BARE_PROMPT = re.compile(r"^[#$%>]$")
_DOLLAR_PROMPT = re.compile(r"^\$\s+(?P<cmd>\S.*)$")
_HASH_PROMPT = re.compile(rf"^#\s*(?P<cmd>{_VERBS}(?:\s.*)?)$")

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b[()][AB012]")
_PAGER = re.compile(r"\s*(?:<-+\s*)?-+\s?More\s?-+(?:\s*>)?(?:\s*\(q\)\s*quit)?\s*", re.IGNORECASE)
_MORE = re.compile(r"more", re.IGNORECASE)
_NEWLINE = re.compile(r"\r\n|\r|\n")


def prompt_command(line: str) -> str | None:
    """The command of a prompt line (``''`` for a bare prompt), or None when ``line`` is not a prompt line.

    Prompt lines: ``[user@host ~]$ cmd``, ``user@host:~$ cmd``, ``root@host:~# cmd``, ``$ cmd``, ``$``, ``#``,
    ``# <command>`` (a command word after ``#``: ``# dcb ets show``, not ``# Port counters: ...``), and NOS CLI
    prompts ``switch# show ...``, ``switch(config)#``, ``switch>`` (a CLI prompt with text after it only when the
    text is a command)."""
    s = line.strip()
    if not s:
        return None
    if _BARE_PROMPT.match(s):
        return ""
    m = _SHELL_PROMPT.match(s)
    if m is not None:
        return (m.group("cmd") or "").strip()
    m = _DOLLAR_PROMPT.match(s) or _HASH_PROMPT.match(s)
    if m is not None:
        return m.group("cmd").strip()
    m = _CLI_PROMPT.match(s)
    if m is not None:
        cmd = m.group("cmd").strip()
        if not cmd or _COMMAND.match(cmd) or cmd.startswith(("conf", "end", "exit", "copy", "enable", "term")):
            return cmd
    return None


def _erase(line: str) -> str:
    """Apply backspaces as a terminal does (each erases the character before it) and drop pager marks."""
    if "\b" in line:
        out: list[str] = []
        for ch in line:
            if ch == "\b":
                if out:
                    out.pop()
            else:
                out.append(ch)
        line = "".join(out)
    if _MORE.search(line):
        line = _PAGER.sub(" " if line.strip() else "", line)
        if not line.strip():
            return ""
    return line


def frame_lines(text: str) -> list[tuple[int, str]]:
    """The framed text as ``(original line number, line)`` for every line kept (numbered from 1 in ``text``).

    Every line: ANSI escapes removed, backspaces applied and pager marks dropped (a line that held only a pager
    mark is dropped: it sits inside the output and would split a table), tabs expanded to 8 columns, trailing
    whitespace removed. Prompt lines (:func:`prompt_command`) become empty lines. The first line with content is
    also emptied when it is a command alone (an echo: ``show pfc counters``, ``sudo rdma statistic``). The indent
    every line with content shares (output pasted into a markdown block or a test's string) is removed."""
    out: list[tuple[int, str]] = []
    first = True
    for n, raw in enumerate(_NEWLINE.split(text), 1):
        line = raw
        if "\x1b" in line:
            line = _ANSI.sub("", line)
        if "\b" in line or _MORE.search(line):
            line = _erase(line)
            if not line.strip() and raw.strip():
                continue  # a pagination mark alone
        if "\t" in line:
            line = line.expandtabs(8)
        line = line.rstrip()
        if line.strip():
            if prompt_command(line) is not None:
                line = ""
            elif first and _COMMAND.match(line.strip()):
                line = ""
                first = False
            else:
                first = False
        out.append((n, line))
    indents = [len(line) - len(line.lstrip(" ")) for _, line in out if line]
    cut = min(indents, default=0)
    if cut:  # pasted indented (a markdown block, a test's string): the common indent is not the output's
        out = [(n, line[cut:]) for n, line in out]
    return out


def frame(text: str) -> str:
    """The text a parser reads (:func:`frame_lines` joined with ``\\n``). Idempotent: ``frame(frame(t)) ==
    frame(t)``."""
    lines = [line for _, line in frame_lines(text)]
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines) + ("\n" if lines else "")


def commands(text: str) -> list[str]:
    """The commands of the prompt lines in ``text`` (and of an echoed first line), in order: what a parser may
    read its context from (NVUE's interface in ``nv show interface swp1 ...``)."""
    out: list[str] = []
    first = True
    for raw in _NEWLINE.split(text):
        line = _ANSI.sub("", raw).strip()
        if not line:
            continue
        cmd = prompt_command(line)
        if cmd is None:
            if first and _COMMAND.match(line):
                cmd = line
            first = False
        if cmd:
            out.append(cmd)
    return out


def framed(parser: Callable[Concatenate[str, P], R]) -> Callable[Concatenate[str, P], R]:
    """Make ``parser`` read its first argument (the command output) through :func:`frame`. Every text parser of
    the parser-role registry is wrapped so; ``is_framed`` tells (the registry's meta-test checks it)."""

    @functools.wraps(parser)
    def run(text: str, /, *args: P.args, **kwargs: P.kwargs) -> R:
        return parser(frame(text), *args, **kwargs)

    run.__fabricd_framed__ = True  # type: ignore[attr-defined]
    return run


def is_framed(function: object) -> bool:
    """True when ``function`` reads its text through :func:`framed`."""
    return bool(getattr(function, "__fabricd_framed__", False))


_INTERFACE_ARG = re.compile(r"\b(?:interfaces?|int)\s+(?P<name>[A-Za-z][\w\-]*\d[\w/.:\-]*)")


def interface_of(text: str) -> str | None:
    """The interface a prompt or echoed command of ``text`` names (``nv show interface swp1 qos pfc-watchdog`` ->
    ``swp1``, ``N5K-A# show int e1/47 | b RX`` -> ``e1/47``), or None."""
    for cmd in commands(text):
        m = _INTERFACE_ARG.search(cmd)
        if m is not None:
            return m.group("name")
    return None


def framed_interface(
    parser: Callable[Concatenate[str, str | None, P], R],
) -> Callable[Concatenate[str, str | None, P], R]:
    """:func:`framed` for a per-interface parser ``parser(text, interface=None)``: when the caller names no
    interface, the one the capture's prompt or echoed command names is passed (the prompt is gone from the framed
    text)."""

    @functools.wraps(parser)
    def run(text: str, interface: str | None = None, /, *args: P.args, **kwargs: P.kwargs) -> R:
        return parser(frame(text), interface or interface_of(text), *args, **kwargs)

    run.__fabricd_framed__ = True  # type: ignore[attr-defined]
    return run


def first_content(text: str) -> tuple[int, str] | None:
    """``(line number, text)`` of the first line with content of the framed ``text`` (a prompt or echo line is not
    content), for a reader's error naming the line it could not place; None for an output with nothing in it."""
    for n, line in frame_lines(text):
        if line.strip():
            return n, line.strip() if len(line.strip()) <= 80 else line.strip()[:77] + "..."
    return None


def json_object_text(text: str) -> Any:
    """The JSON document of an output that is one (its first character, past white space, is ``{``); None for an
    output in another form (a text table, a banner). Raises ValueError when it starts like JSON and does not parse:
    whether that is a problem or another form is the parser's call."""
    stripped = text.strip()
    if not stripped.startswith("{"):
        return None
    return json.loads(stripped)
