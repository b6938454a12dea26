"""An empty parse of a non-empty output is a failure, never a silent success (issue 16).

A parser that meets an output shape it does not know (a NOS release that nests its JSON differently, the output of
another command, an error page) typically returns nothing and no problem. :func:`parsed_nothing` tells that case
apart, so the switch collector reports ``fabricd_scrape_collector_success 0`` and the audit a finding.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..framing import first_content, frame
from .model import SwitchCounters

CLI_ERROR = re.compile(
    r"^\s*(?:\^\s*$|% ?(?:Invalid|Incomplete|Ambiguous|Error|Unrecognized)|ERROR:|Error:|Usage: |-bash: |"
    r"Invalid (?:Command|value|input))"
)
"""A reply that rejects the command rather than answering it, on any of the four NOSes (EOS/NX-OS ``% Invalid
input``, NX-OS's ``^`` marker line, SONiC click's ``Usage:``/``Error:``, NVUE's ``Error:``, a shell's ``-bash:``);
from the platform drivers' own error patterns (fabricd.nos.<id>.patterns)."""


def has_rows(counters: SwitchCounters) -> bool:
    """True when the snapshot holds any row."""
    c = counters
    return bool(
        c.pfc or c.queues or c.pfcwd or c.pfcwd_config or c.interfaces or c.drops or c.watermarks or c.optics or c.link
    )


def cli_error(text: str) -> str | None:
    """The rejecting line when ``text`` is the device refusing the command (within its first three lines)."""
    lines = [line for line in text.splitlines() if line.strip()][:3]
    for line in lines:
        if CLI_ERROR.match(line):
            return next((x.strip() for x in lines if x.strip() != "^"), line.strip())
    return None


def _has_scalar(value: Any) -> bool:
    if isinstance(value, dict):
        return any(_has_scalar(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_scalar(v) for v in value)
    return value is not None


_NUMBER = re.compile(r"(?<![\w.])[+-]?\d[\d,.]*(?![\w.])")
"""A standalone number (``52``, ``15,437``, ``1.5``), not a digit inside a name (``PFC3``, ``Ethernet0``)."""


def has_content(text: str) -> bool:
    """True when ``text`` holds something to read. Nothing to read: blank text; a JSON document without a single
    value (``{"interfaces": {}}``); a text without a single number outside names, which is what a table with its
    header and no rows looks like (``show pfcwd stats`` before any watchdog, EOS queue counters with no ports). In
    those the device says there is nothing, in a shape the parser need not know. Prompt and echoed command lines
    are not content (:func:`fabricd.readers.framing.frame`)."""
    stripped = frame(text).strip()
    if not stripped:
        return False
    if stripped[0] in "{[":
        try:
            return _has_scalar(json.loads(stripped))
        except ValueError:
            return True
    return any(_NUMBER.search(line) for line in stripped.splitlines())


def parsed_nothing(text: str, counters: SwitchCounters) -> bool:
    """True when its parser read no row from ``text`` and either said why (a problem: an output shape it does not
    know) while the text has content (:func:`has_content`), or the text is the device refusing the command
    (:func:`cli_error`). A parser that returns no row and no problem recognised an empty answer (NX-OS's global
    watchdog block without interfaces): every platform parser reports the shapes it does not know, which
    tests/unit/test_switch_empty_parse.py holds with the real output of another command."""
    if has_rows(counters):
        return False
    return cli_error(text) is not None or (bool(counters.problems) and has_content(text))


def empty_parse_problem(device: str, command: str, text: str, reason: str | None = None) -> str:
    """The one-line problem for an empty parse: device, command, how much output, the parser's own reason when it
    gave one, what to do."""
    rejected = cli_error(text)
    if rejected is not None:
        return f"{device}: the device rejected {command!r}: {rejected[:120]}"
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    if len(first) > 80:
        first = first[:77] + "..."
    why = f": {reason}" if reason else ""
    return (
        f"{device}: {command!r} printed {len(text)} bytes that parsed to nothing (output shape not understood, "
        f"starts {first!r}{why}); capture it with `fabricd capture --device {device}` and report it"
    )


def unread(platform: str, command: str, text: str, expected: str) -> tuple[str, ...]:
    """The problem of a parser that read no row from a non-empty output (an empty parse is never a success): the
    first line with content it could not place, by its number in the text given, and what it expected; none for a
    blank output. The switch collector keeps it only when the text has content (:func:`parsed_nothing`)."""
    first = first_content(text)
    if first is None:
        return ()
    return (
        f"{platform}: {command!r}: line {first[0]}: nothing read from a non-empty output (expected {expected}; "
        f"got {first[1]!r})",
    )
