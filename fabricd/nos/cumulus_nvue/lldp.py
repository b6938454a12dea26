"""Cumulus NVUE LLDP neighbours: ``nv show interface <port> lldp neighbor`` (per port, text table).

Columns ``Neighbor  Remote IP  Model  SW Version  Remote Port``; empty cells are common (a host sends no model), so
the table is sliced at its dashed line. Capture: tests/golden/readers/lldp/cumulus_nvue-*.txt (NVIDIA's NVUE command
reference). No public capture of ``nv show interface --view=lldp`` or of the ``-o json`` form was found.
"""

from __future__ import annotations

from fabricd.readers.lldp import LldpNeighbor, text_columns

LLDP_COMMAND = "nv show interface {interface} lldp neighbor"


def parse_nv_show_interface_lldp_neighbor(text: str, interface: str) -> list[LldpNeighbor]:
    """Neighbours of one port's ``nv show interface <port> lldp neighbor``."""
    out = []
    for row in text_columns(text):
        name = row.get("Neighbor", "")
        if not name:
            continue
        out.append(LldpNeighbor(interface, name, row.get("Remote Port") or None, None, None,
                                row.get("Remote IP") or None))
    return out
