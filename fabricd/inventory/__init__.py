"""L1: YAML inventory -> :class:`fabricd.model.Fabric`, with every problem located."""

from __future__ import annotations

from .loader import Inventory, dotted_path, inventory_marker, load_inventory

__all__ = ["Inventory", "dotted_path", "inventory_marker", "load_inventory"]
