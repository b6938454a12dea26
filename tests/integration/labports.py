"""The lab inventory copy's ports: how many it names and moving them to ports the test holds (the ``reserve_port``
fixture of tests/conftest.py, so no other process takes one before ``fabricd lab up``'s daemon binds it)."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

LAB_PORT = re.compile(r"port: (102\d\d)")
"""The management and gNMI ports of inventory/lab/switches.yml."""


def move_lab_ports(inv: Path, reserve: Callable[[], int]) -> None:
    """Move every management and gNMI port of the lab inventory copy ``inv`` to a port of its own from ``reserve``
    (the ``reserve_port`` fixture)."""
    path = inv / "switches.yml"
    text = path.read_text()
    new = {old: reserve() for old in sorted(set(LAB_PORT.findall(text)))}
    path.write_text(LAB_PORT.sub(lambda m: f"port: {new[m.group(1)]}", text))
