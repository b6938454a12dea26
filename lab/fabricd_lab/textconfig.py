"""The running configuration of a simulated EOS or NX-OS switch: an ordered tree edited the way the real CLI edits it.

Each node is one configuration line; its children are the lines typed in the sub-mode it opens. A line's *key*
(from the grammar :class:`fabricd_lab.grammar.Rule`) decides what a new line replaces: ``mtu 9216`` replaces
``mtu 1500``, ``match dscp 26`` adds beside ``match dscp 48``. ``no X`` removes the line (and its block) with X's key.
Lines that are not valid in the current mode fall back to the parent modes, as on the real devices, so a pasted
config works with or without ``exit``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from .grammar import Rule, Verdict, classify, key_rule


@dataclass(slots=True)
class Node:
    """One configuration line and the lines of the sub-mode it opens (insertion-ordered by key)."""

    line: str
    children: dict[str, Node] = field(default_factory=dict)
    block: bool = False  # opens a sub-mode (printed with a trailing "!" even when empty)

    def copy(self) -> Node:
        return Node(self.line, {k: v.copy() for k, v in self.children.items()}, self.block)

    def same(self, other: Node) -> bool:
        if self.line != other.line or list(self.children) != list(other.children):
            return False
        return all(c.same(other.children[k]) for k, c in self.children.items())


Normalizer = Callable[[list[str]], list[str]]


def _identity(tokens: list[str]) -> list[str]:
    return tokens


@dataclass(slots=True)
class ConfigError:
    """A rejected line: ``bad_token`` is the index of the offending token, -1 when the line is incomplete."""

    bad_token: int


@dataclass(slots=True)
class ModeFrame:
    mode: str
    node: Node
    tokens: tuple[str, ...]


@dataclass(slots=True)
class Editor:
    """Applies configuration lines to a tree, keeping the mode stack of one CLI session.

    ``grammar`` maps a mode name (``config`` is the top) to its rules. ``normalize`` canonicalises tokens, for
    example interface abbreviations (``Et1`` -> ``Ethernet1``), so the running config shows canonical names.
    """

    grammar: dict[str, tuple[Rule, ...]]
    root: Node
    normalize: Normalizer = _identity
    stack: list[ModeFrame] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.stack:
            self.stack = [ModeFrame("config", self.root, ())]

    @property
    def mode(self) -> ModeFrame:
        return self.stack[-1]

    def exit(self) -> bool:
        """Leave the current sub-mode; False when already at the top of config mode."""
        if len(self.stack) > 1:
            self.stack.pop()
            return True
        return False

    def apply(self, line: str) -> ConfigError | None:
        """Apply one line; None when accepted, else where it failed (the config is left unchanged)."""
        tokens = self.normalize(line.split())
        if not tokens:
            return None
        negate = tokens[0] in ("no", "default")
        # A positive rule may itself start with "no" (EOS "no priority", NX-OS "no shutdown").
        best: Verdict | None = None
        for depth in range(len(self.stack) - 1, -1, -1):
            frame = self.stack[depth]
            verdict = classify(self.grammar.get(frame.mode, ()), tokens)
            if verdict.rule is not None:
                del self.stack[depth + 1 :]
                self._set(verdict.rule, tokens)
                return None
            if best is None:
                best = verdict
        if negate and len(tokens) > 1:
            for depth in range(len(self.stack) - 1, -1, -1):
                frame = self.stack[depth]
                found = key_rule(self.grammar.get(frame.mode, ()), tokens[1:])
                if found is not None:
                    del self.stack[depth + 1 :]
                    self.mode.node.children.pop(found[1], None)
                    return None
            return ConfigError(bad_token=1 if best is None or best.bad_token < 1 else best.bad_token)
        assert best is not None
        return ConfigError(bad_token=best.bad_token)

    def _set(self, rule: Rule, tokens: list[str]) -> None:
        key = rule.key_of(tokens)
        node = self.mode.node
        text = " ".join(tokens)
        if rule.mode is not None:
            child = node.children.get(key)
            if child is None:
                child = Node(text, block=True)
                node.children[key] = child
            else:
                child.line = text
            self.stack.append(ModeFrame(rule.mode, child, tuple(tokens)))
            return
        existing = node.children.get(key)
        if existing is None:
            node.children[key] = Node(text)
        else:
            existing.line = text
            existing.children.clear()


def render(root: Node, indent: str, *, block_bang: bool) -> list[str]:
    """Render a tree as running-config lines. ``block_bang`` prints EOS's ``!`` separators around sub-blocks."""
    out: list[str] = []

    def walk(node: Node, depth: int) -> None:
        for child in node.children.values():
            if child.children and block_bang and depth > 0:
                out.append(indent * depth + "!")
            out.append(indent * depth + child.line)
            walk(child, depth + 1)
            if depth == 0 and (child.children or child.block):
                out.append("!" if block_bang else "")

    walk(root, 0)
    return out


def parse(text: str, editor_factory: Callable[[Node], Editor]) -> tuple[Node, list[str]]:
    """Build a tree by typing ``text`` line by line into a fresh editor. Returns the tree and rejected lines."""
    root = Node("")
    editor = editor_factory(root)
    rejected: list[str] = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("!") or line == "end":
            continue
        if line == "exit":
            editor.exit()
            continue
        if editor.apply(line) is not None:
            rejected.append(line)
    return root, rejected
