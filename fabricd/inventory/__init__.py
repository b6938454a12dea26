"""L1: YAML inventory -> :class:`fabricd.model.Fabric`, with every problem located."""

from __future__ import annotations

from .loader import Inventory, inventory_marker, load_inventory
from .origins import dotted_path

__all__ = ["Inventory", "dotted_path", "inventory_marker", "load_inventory"]
