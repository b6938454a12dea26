"""A small command grammar for the simulated CLIs: templates as data, exact error positions.

A template is a space-separated list of elements:

- ``word``: a literal keyword;
- ``(a|b|c)``: one of several literal keywords;
- ``<int>`` or ``<int:LO-HI>``: a decimal integer, optionally range-checked (inclusive);
- ``<num>``: a decimal number such as ``0.05``; ``<num:N>``: with at most N decimals (EOS watchdog timers: 2);
- ``<word>``: any single token;
- ``<list>``: a list such as ``3``, ``3,4`` or ``24-31`` (digits, commas and dashes);
- ``<ints>``: one or more space-separated integers (EOS ``qos map dscp 24 26 to ...``);
- ``<hms>``: a time of day ``hh:mm:ss`` (EOS ``commit timer``);
- ``<rest>``: one or more tokens to the end of the line (descriptions);
- ``[ ... ]``: an optional run of elements (not nested).

:func:`match` answers with the index of the first token that could not be matched, which the simulators turn into
each NOS's own error wording (EOS ``at token N``, NX-OS ``^`` marker).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

_INT = re.compile(r"^\d+$")
_NUM = re.compile(r"^\d+(?:\.\d+)?$")
_LIST = re.compile(r"^\d+(?:-\d+)?(?:,\d+(?:-\d+)?)*$")
_HMS = re.compile(r"^\d{1,2}:\d{2}:\d{2}$")


@dataclass(frozen=True)
class Element:
    """One template element. ``kind`` is lit | int | num | word | list | hms | rest | opt."""

    kind: str
    words: frozenset[str] = frozenset()
    lo: int | None = None
    hi: int | None = None
    inner: tuple[Element, ...] = ()

    def accepts(self, token: str) -> bool:
        if self.kind == "lit":
            return token in self.words
        if self.kind == "int":
            if not _INT.match(token):
                return False
            value = int(token)
            return (self.lo is None or value >= self.lo) and (self.hi is None or value <= self.hi)
        if self.kind == "ints":
            return bool(_INT.match(token))
        if self.kind == "num":
            return bool(_NUM.match(token)) and (self.hi is None or len(token.partition(".")[2]) <= self.hi)
        if self.kind == "list":
            return bool(_LIST.match(token))
        if self.kind == "hms":
            return bool(_HMS.match(token))
        return self.kind in ("word", "rest")


def _element(token: str) -> Element:
    if token.startswith("(") and token.endswith(")"):
        return Element("lit", frozenset(token[1:-1].split("|")))
    if token.startswith("<") and token.endswith(">"):
        spec = token[1:-1]
        name, _, rng = spec.partition(":")
        if name == "int" and rng:
            lo, _, hi = rng.partition("-")
            return Element("int", lo=int(lo), hi=int(hi))
        if name == "num" and rng:
            return Element("num", hi=int(rng))
        if name in ("int", "num", "word", "list", "hms", "rest", "ints"):
            return Element(name)
        raise ValueError(f"unknown template element {token!r}")
    return Element("lit", frozenset({token}))


def compile_template(template: str) -> tuple[Element, ...]:
    """Parse a template string into elements (see the module docstring)."""
    out: list[Element] = []
    optional: list[Element] | None = None
    for raw in template.split():
        token = raw
        opening = token.startswith("[")
        closing = token.endswith("]")
        if opening:
            if optional is not None:
                raise ValueError(f"nested [ in template {template!r}")
            optional = []
            token = token[1:]
        if closing:
            token = token[:-1]
        target = optional if optional is not None else out
        if token:
            target.append(_element(token))
        if closing:
            if optional is None:
                raise ValueError(f"unbalanced ] in template {template!r}")
            out.append(Element("opt", inner=tuple(optional)))
            optional = None
    if optional is not None:
        raise ValueError(f"unbalanced [ in template {template!r}")
    return tuple(out)


@dataclass(frozen=True)
class Match:
    """Result of matching tokens against one template.

    ``ok`` when every token was consumed and every required element matched. Otherwise ``bad_token`` is the index of
    the first token that no element accepted, or ``len(tokens)`` when the line ended too early (incomplete).
    """

    ok: bool
    bad_token: int

    @property
    def incomplete(self) -> bool:
        return not self.ok and self.bad_token < 0


def _match(elements: tuple[Element, ...], tokens: list[str], pos: int) -> tuple[bool, int]:
    """Return (full match, furthest token index reached). Backtracks over optional groups."""
    if not elements:
        return pos == len(tokens), pos
    head, rest = elements[0], elements[1:]
    special = _MATCH_KIND.get(head.kind)
    if special is not None:
        return special(head, rest, tokens, pos)
    if pos >= len(tokens) or not head.accepts(tokens[pos]):
        return False, pos
    return _match(rest, tokens, pos + 1)


def _match_opt(head: Element, rest: tuple[Element, ...], tokens: list[str], pos: int) -> tuple[bool, int]:
    """``[...]``: with the group, else without it."""
    ok, reach = _match(head.inner + rest, tokens, pos)
    if ok:
        return True, reach
    ok2, reach2 = _match(rest, tokens, pos)
    return ok2, max(reach, reach2)


def _match_rest(_head: Element, _rest: tuple[Element, ...], tokens: list[str], pos: int) -> tuple[bool, int]:
    """``...``: one or more tokens, to the end of the line."""
    return (pos < len(tokens)), (len(tokens) if pos < len(tokens) else pos)


def _match_ints(head: Element, rest: tuple[Element, ...], tokens: list[str], pos: int) -> tuple[bool, int]:
    """A run of one or more accepted tokens, the longest run that lets the rest match."""
    end = pos
    while end < len(tokens) and head.accepts(tokens[end]):
        end += 1
    if end == pos:
        return False, pos
    reach = end
    for stop in range(end, pos, -1):
        ok, r = _match(rest, tokens, stop)
        if ok:
            return True, r
        reach = max(reach, r)
    return False, reach


_MATCH_KIND: dict[str, Callable[[Element, tuple[Element, ...], list[str], int], tuple[bool, int]]] = {
    "opt": _match_opt,
    "rest": _match_rest,
    "ints": _match_ints,
}
"""Element kinds that match other than one token at a time."""


def match(elements: tuple[Element, ...], tokens: list[str]) -> Match:
    """Match ``tokens`` against compiled ``elements``; ``bad_token == -1`` means the line is incomplete."""
    ok, reach = _match(elements, tokens, 0)
    if ok:
        return Match(True, len(tokens))
    if reach >= len(tokens):
        return Match(False, -1)
    return Match(False, reach)


@dataclass(frozen=True)
class Rule:
    """A command of one CLI mode.

    ``mode`` names the sub-mode the command enters (None for a leaf line). ``key`` is how many leading tokens
    identify the setting: a second line with the same key replaces the first (``mtu 9216`` replaces ``mtu 1500``);
    None means the whole line is the key (repeatable lines such as ``match dscp 26``).
    """

    template: str
    mode: str | None = None
    key: int | None = None
    name: str | None = None
    elements: tuple[Element, ...] = field(default=(), compare=False)

    @staticmethod
    def of(template: str, mode: str | None = None, key: int | None = None, name: str | None = None) -> Rule:
        """``name`` fixes the key (``shutdown`` and ``no shutdown`` both set key ``shutdown``)."""
        return Rule(template, mode, key, name, compile_template(template))

    def key_of(self, tokens: list[str]) -> str:
        if self.name is not None:
            return self.name
        return " ".join(tokens if self.key is None else tokens[: self.key])


@dataclass(frozen=True)
class Verdict:
    """What a mode's grammar says about a line: the rule it matched, or where it failed."""

    rule: Rule | None
    bad_token: int  # -1: incomplete; >=0: first bad token (meaningful only when rule is None)


def classify(rules: tuple[Rule, ...], tokens: list[str]) -> Verdict:
    """Find the rule a line matches; else the furthest error position over all rules (like a real parser)."""
    best = 0
    incomplete = False
    for rule in rules:
        result = match(rule.elements, tokens)
        if result.ok:
            return Verdict(rule, len(tokens))
        if result.bad_token < 0:
            incomplete = True
        else:
            best = max(best, result.bad_token)
    if incomplete and best == 0:
        return Verdict(None, -1)
    return Verdict(None, best)


def key_rule(rules: tuple[Rule, ...], tokens: list[str]) -> tuple[Rule, str] | None:
    """For ``no X``: the rule whose key prefix matches the first tokens of X, and that key.

    ``no mtu`` and ``no mtu 9216`` both find the ``mtu <int>`` rule (key ``mtu``). Whole-line keys need the whole
    line.
    """
    for rule in rules:
        if match(rule.elements, tokens).ok:
            return rule, rule.key_of(tokens)
    for rule in rules:
        if rule.name is not None and " ".join(tokens) == rule.name:
            return rule, rule.name
    for rule in rules:
        if rule.key is None or len(tokens) < rule.key:
            continue
        prefix = tokens[: rule.key]
        ok, reach = _match(rule.elements, prefix, 0)
        if ok or reach >= len(prefix):
            return rule, " ".join(prefix)
    return None
