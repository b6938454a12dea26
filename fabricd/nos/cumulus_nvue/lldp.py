"""Cumulus NVUE LLDP neighbours: ``nv show interface <port> lldp neighbor`` (per port, text table).

Columns ``Neighbor  Remote IP  Model  SW Version  Remote Port``; empty cells are common (a host sends no model), so
the table is sliced at its dashed line. Capture: tests/golden/readers/lldp/cumulus_nvue-*.txt (NVIDIA's NVUE command
reference). No public capture of ``nv show interface --view=lldp`` or of the ``-o json`` form was found.
"""

from __future__ import annotations

from fabricd.readers.framing import framed_interface
from fabricd.readers.lldp import LldpNeighbor, looks_empty, nothing_read, text_columns

LLDP_COMMAND = "nv show interface {interface} lldp neighbor"


@framed_interface
def parse_nv_show_interface_lldp_neighbor(text: str, interface: str | None = None) -> list[LldpNeighbor]:
    """Neighbours of one port's ``nv show interface <port> lldp neighbor`` (the port from the caller, else from the
    capture's prompt line). A non-empty output without the table (and not its empty header) is a
    :class:`~fabricd.readers.textparse.TextParseError` naming its first line."""
    port = interface or ""
    out = []
    for row in text_columns(text):
        name = row.get("Neighbor", "")
        if not name:
            continue
        out.append(LldpNeighbor(port, name, row.get("Remote Port") or None, None, None, row.get("Remote IP") or None))
    if not out and not looks_empty(text):
        raise nothing_read(
            LLDP_COMMAND.format(interface=port or "<port>"),
            text,
            "a Neighbor  Remote IP  Model  SW Version  Remote Port table over a dashed line",
        )
    return out
