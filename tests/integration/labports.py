"""Ports for a server process a test starts (``fabricd lab up``), held by the test until that process has bound them.

A port picked with ``bind(("127.0.0.1", 0))`` and closed at once is free for anyone again: on a busy machine another
process's ``bind`` to port 0 or an outgoing ``connect`` may be handed it before the started process binds it, seconds
later under load (the flaky ``test_export_switches_once_against_the_lab``: the lab daemon died on a port in use).
"""

from __future__ import annotations

import re
import socket
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

LAB_PORT = re.compile(r"port: (102\d\d)")
"""The management and gNMI ports of inventory/lab/switches.yml."""


@contextmanager
def reserved_ports(n: int) -> Iterator[list[int]]:
    """``n`` distinct TCP ports on 127.0.0.1, each held by a bound, not listening, ``SO_REUSEADDR`` socket of this
    process until the block ends. A server started inside the block binds them with ``SO_REUSEADDR`` (asyncio,
    asyncssh and grpcio all set it) and listens; meanwhile the kernel hands them to no other ``bind`` or ``connect``."""
    with ExitStack() as stack:
        ports = []
        for _ in range(n):
            s = stack.enter_context(socket.socket())
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind(("127.0.0.1", 0))
            ports.append(int(s.getsockname()[1]))
        yield ports


def lab_port_count(inv: Path) -> int:
    """How many distinct lab ports the inventory copy ``inv`` names (see :func:`move_lab_ports`)."""
    return len(set(LAB_PORT.findall((inv / "switches.yml").read_text())))


def move_lab_ports(inv: Path, ports: list[int]) -> None:
    """Move every management and gNMI port of the lab inventory copy ``inv`` to ``ports`` (one each, in order)."""
    path = inv / "switches.yml"
    text = path.read_text()
    old = sorted(set(LAB_PORT.findall(text)))
    new = dict(zip(old, ports, strict=True))
    path.write_text(LAB_PORT.sub(lambda m: f"port: {new[m.group(1)]}", text))
