"""Shared machinery of the Cisco-style simulated CLIs (EOS, NX-OS): a tree-backed running config, modal shells,
output pipes and paging."""

from __future__ import annotations

import re
from abc import abstractmethod
from collections.abc import Callable

from .device import DeviceSpec, Reply, Shell, SimSwitch, Terminal, apply_filters
from .grammar import Rule
from .textconfig import Editor, Node, render

_PIPE = re.compile(r"\s+\|\s+")


def split_pipes(line: str) -> tuple[str, list[str], bool]:
    """``show x | json | include y`` -> (``show x``, [``include y``], json=True)."""
    parts = _PIPE.split(line)
    filters = [p.strip() for p in parts[1:]]
    as_json = any(f == "json" for f in filters)
    return parts[0].strip(), [f for f in filters if f != "json"], as_json


class TreeSwitch(SimSwitch):
    """A switch whose running config is a :class:`~fabricd_lab.textconfig.Node` tree edited through a grammar."""

    grammar: dict[str, tuple[Rule, ...]]
    indent = "   "
    block_bang = True

    def __init__(self, spec: DeviceSpec, **kwargs: float | Callable[[], float]) -> None:
        super().__init__(spec, **kwargs)  # type: ignore[arg-type]
        self.running = self.base_config()
        self.startup = self.running.copy()
        self.checkpoints: dict[str, Node] = {}
        self.config_changed()

    @abstractmethod
    def base_config(self) -> Node:
        """The factory config: hostname and the inventory's ports."""

    def normalize(self, tokens: list[str]) -> list[str]:
        return tokens

    def editor(self, tree: Node) -> Editor:
        return Editor(self.grammar, tree, self.normalize)

    def seed(self, text: str) -> Node:
        """Build a tree by typing ``text`` into a fresh config (used for the factory config)."""
        root = Node("")
        editor = self.editor(root)
        for raw in text.splitlines():
            line = raw.strip()
            if not line or line.startswith("!"):
                continue
            if line == "exit":
                editor.exit()
                continue
            error = editor.apply(line)
            if error is not None:
                raise ValueError(f"factory config line rejected by the {self.platform} grammar: {line!r}")
        return root

    def render_body(self, tree: Node) -> list[str]:
        return render(tree, self.indent, block_bang=self.block_bang)

    def config_changed(self) -> None:
        """The running config changed: platforms update the counter model's watchdog settings here."""

    def set_running(self, tree: Node) -> None:
        self.running = tree
        self.config_changed()


class ModalShell(Shell):
    """A Cisco-style session: exec mode, config mode with sub-modes, pipes, ``terminal length``/``width``."""

    def __init__(self, switch: TreeSwitch) -> None:
        self.switch = switch
        self.term = Terminal()
        self.editor: Editor | None = None

    @property
    def page_length(self) -> int:
        return self.term.length

    @property
    def echo_width(self) -> int:
        return self.term.width

    @property
    def hostname(self) -> str:
        return self.switch.name

    def handle(self, line: str) -> Reply:
        line = line.strip()
        if not line:
            return Reply()
        if self.editor is not None:
            return self.config_line(line)
        return self.exec_line(line)

    @abstractmethod
    def exec_line(self, line: str) -> Reply: ...

    @abstractmethod
    def config_line(self, line: str) -> Reply: ...

    def terminal(self, tokens: list[str]) -> Reply | None:
        """``terminal length N`` / ``terminal width N``; None when not a terminal command."""
        if len(tokens) >= 2 and tokens[0] == "terminal":
            if tokens[1] == "length" and len(tokens) == 3 and tokens[2].isdigit():
                self.term.length = int(tokens[2])
                return Reply(self.length_message(self.term.length))
            if tokens[1] == "width" and len(tokens) == 3 and tokens[2].isdigit():
                self.term.width = int(tokens[2])
                return Reply(self.width_message(self.term.width))
            if tokens[1] in ("dont-ask", "monitor", "no", "session-timeout", "exec"):
                return Reply()
        return None

    def length_message(self, length: int) -> str:
        return ""

    def width_message(self, width: int) -> str:
        return ""

    @staticmethod
    def filtered(text: str, filters: list[str]) -> str:
        return apply_filters(text, filters) if filters else text
