"""Parse ``nv set``/``nv unset`` arguments against NVUE's command paths (:data:`patterns.SET_PATHS`).

A set line becomes one or more *leaves*: a key path (every token but the value) and a value (None for a
container such as ``interface swp1 qos pfc-watchdog``). Keys that take lists expand into one leaf per value, as
NVUE stores them: ``qos mapping default-global dscp 0,1,26 switch-priority 0`` is three leaves.
"""

from __future__ import annotations

from dataclasses import dataclass

from .patterns import LIST_KEYS, SET_PATHS

Leaf = tuple[tuple[str, ...], str | None]


@dataclass(frozen=True)
class Elem:
    """``lit`` (words), ``key`` (a named id, ``name``), ``value``, ``range`` (lo..hi) or ``choice`` (words)."""

    kind: str
    name: str = ""
    words: frozenset[str] = frozenset()
    lo: int = 0
    hi: int = 0

    def accepts(self, token: str) -> bool:
        if self.kind in ("lit", "choice"):
            return token in self.words
        if self.kind == "range":
            return (token.isdigit() and self.lo <= int(token) <= self.hi) or token in self.words
        if self.kind == "key" and self.name in LIST_KEYS:
            try:
                expand(token)
            except ValueError:
                return False
        return bool(token)

    def describe(self) -> str:
        if self.kind in ("lit", "choice"):
            return "|".join(sorted(self.words))
        if self.kind == "range":
            return f"{self.lo}-{self.hi}" + ("|" + "|".join(sorted(self.words)) if self.words else "")
        return self.name


def _elem(token: str) -> Elem:
    if token.startswith("(") and token.endswith(")"):
        alts = token[1:-1].split("|")
        for alt in alts:
            lo, dash, hi = alt.partition("-")
            if dash and lo.isdigit() and hi.isdigit():
                return Elem("range", lo=int(lo), hi=int(hi), words=frozenset(a for a in alts if a != alt))
        return Elem("choice", words=frozenset(alts))
    if token.startswith("<") and token.endswith(">"):
        return Elem("key" if token.endswith("-id>") or token == "<vid>" else "value", name=token)
    lo, dash, hi = token.partition("-")
    if dash and lo.isdigit() and hi.isdigit():
        return Elem("range", lo=int(lo), hi=int(hi))
    return Elem("lit", words=frozenset({token}))


TEMPLATES: tuple[tuple[Elem, ...], ...] = tuple(tuple(_elem(t) for t in p.split()) for p in SET_PATHS)


def expand(token: str) -> list[str]:
    """``3`` -> [3]; ``0,1,5-7`` -> [0, 1, 5, 6, 7] (as strings); raises ValueError on anything else."""
    out: list[str] = []
    for part in token.split(","):
        lo, dash, hi = part.partition("-")
        if not lo.isdigit() or (dash and not hi.isdigit()):
            raise ValueError(f"{token!r} is not a number, list or range")
        if dash:
            if int(hi) < int(lo):
                raise ValueError(f"range {part!r} is backwards")
            out.extend(str(i) for i in range(int(lo), int(hi) + 1))
        else:
            out.append(str(int(lo)))
    return out


@dataclass(frozen=True)
class PathError:
    """Where parsing failed: the token index and the words that would have been valid there."""

    position: int
    expected: tuple[str, ...]

    def message(self, verb: str, tokens: list[str]) -> str:
        where = " ".join(["nv", verb, *tokens[: self.position]])
        if self.position >= len(tokens):
            return f"Error: Incomplete command: '{where}' needs one of: {', '.join(self.expected)}"
        return (
            f"Error: Invalid Command: '{tokens[self.position]}' is not valid after '{where}'; "
            f"expected one of: {', '.join(self.expected)}"
        )


def _fail(tokens: list[str], prefix_ok: bool) -> PathError:
    best = -1
    expected: set[str] = set()
    for tpl in TEMPLATES:
        pos = 0
        while pos < len(tpl) and pos < len(tokens) and tpl[pos].accepts(tokens[pos]):
            pos += 1
        if pos == len(tokens) and prefix_ok:
            continue
        if pos < len(tpl):
            if pos > best:
                best, expected = pos, {tpl[pos].describe()}
            elif pos == best:
                expected.add(tpl[pos].describe())
    return PathError(max(best, 0), tuple(sorted(expected)))


def _expand_path(tpl: tuple[Elem, ...], tokens: list[str]) -> list[tuple[str, ...]]:
    paths: list[tuple[str, ...]] = [()]
    for elem, token in zip(tpl, tokens, strict=False):
        values = expand(token) if elem.kind == "key" and elem.name in LIST_KEYS else [token]
        paths = [(*p, v) for p in paths for v in values]
    return paths


def parse_set(tokens: list[str]) -> list[Leaf] | PathError:
    """Leaves of ``nv set TOKENS`` (see module docstring), or where it fails."""
    for tpl in TEMPLATES:
        if len(tpl) != len(tokens) or not all(e.accepts(t) for e, t in zip(tpl, tokens, strict=True)):
            continue
        if tpl[-1].kind in ("key", "lit"):
            return [(p, None) for p in _expand_path(tpl, tokens)]
        return [(p, tokens[-1]) for p in _expand_path(tpl[:-1], tokens[:-1])]
    return _fail(tokens, prefix_ok=False)


def parse_unset(tokens: list[str]) -> list[tuple[str, ...]] | PathError:
    """Key paths removed by ``nv unset TOKENS``: any prefix of a set path; a trailing value is ignored."""
    for tpl in TEMPLATES:
        if len(tokens) > len(tpl) or not tokens:
            continue
        if not all(e.accepts(t) for e, t in zip(tpl, tokens, strict=False)):
            continue
        if len(tokens) == len(tpl) and tpl[-1].kind not in ("key", "lit"):
            return _expand_path(tpl[:-1], tokens[:-1])
        return _expand_path(tpl, tokens)
    return _fail(tokens, prefix_ok=True)


def leaf_line(leaf: Leaf) -> str:
    path, value = leaf
    return "nv set " + " ".join(path) + (f" {value}" if value is not None else "")


def is_owned(path: tuple[str, ...], prefixes: tuple[tuple[str, ...], ...]) -> bool:
    for prefix in prefixes:
        if len(path) >= len(prefix) and all(p in ("*", x) for p, x in zip(prefix, path, strict=False)):
            return True
    return False
