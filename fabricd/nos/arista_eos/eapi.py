"""What the EOS pack's eAPI (``| json``) parsers share: the JSON object of an answer (EOS may print a banner line
before it), one top-level object of it, a counter value, and the problem an answer fabricd cannot read is."""

from __future__ import annotations

import json
from typing import Any, TypeGuard

from fabricd.readers.switch.model import SwitchCounters


def load(text: str) -> tuple[Any, str | None]:
    """The JSON object in ``text`` (EOS may print a banner before it), or a problem saying why there is none."""
    start = text.find("{")
    if start < 0:
        return None, "no JSON object in the output"
    try:
        return json.loads(text[start:]), None
    except ValueError as exc:
        return None, f"the JSON output does not parse ({exc})"


def unrecognised(command: str, text: str, why: str) -> SwitchCounters:
    """An output fabricd cannot read: a problem if it is not empty, else nothing (and no problem)."""
    if not text.strip():
        return SwitchCounters()
    head = " ".join(text.strip().split())[:60]
    return SwitchCounters(problems=(f"{command}: {why}; output starts {head!r}",))


def document(
    text: str, command: str, *, keys: tuple[str, ...] = (), missing: str = "the JSON output is not an object"
) -> dict[str, Any] | SwitchCounters:
    """The answer's JSON object, or the problem saying why there is none: ``missing`` when it is not an object or
    has none of ``keys`` (when given)."""
    data, problem = load(text)
    if problem is not None:
        return unrecognised(command, text, problem)
    if not isinstance(data, dict) or (keys and not any(k in data for k in keys)):
        return unrecognised(command, text, missing)
    return data


def top_object(text: str, command: str, *, key: str, expected: str) -> dict[str, Any] | SwitchCounters:
    """The ``key`` object of the answer (``interfaces``: port -> detail), or the problem saying why there is none;
    ``expected`` names the path the parser reads, for that problem."""
    data, problem = load(text)
    if problem is not None:
        return unrecognised(command, text, problem)
    ports = data.get(key) if isinstance(data, dict) else None
    if not isinstance(ports, dict):
        return unrecognised(command, text, f"no {key!r} object (expected {expected})")
    return ports


def is_count(value: Any) -> TypeGuard[int]:
    """A counter's value: a whole number (not a bool), not negative."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0
