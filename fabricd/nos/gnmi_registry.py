"""Every pack's gNMI table (:class:`~fabricd.nos.gnmi.GnmiTable`, ``fabricd/nos/<id>/gnmi.py``), by platform: a
view of the platform registry (``PlatformSpec.gnmi``), so a new pack lists its table in its own spec only."""

from __future__ import annotations

from fabricd.model import Platform

from .gnmi import GnmiTable
from .registry import SPECS, UnknownPlatformError, spec_of


def gnmi_tables() -> dict[Platform, GnmiTable]:
    """Platform -> gNMI table, for every registered pack that has one (registry order)."""
    return {p: s.gnmi for p, s in SPECS.items() if s.gnmi is not None}


def table_for(platform: Platform | str) -> GnmiTable:
    """The gNMI table of a platform id. Raises :class:`~fabricd.nos.registry.UnknownPlatformError` when no pack
    serves the id, or its pack has no gNMI table."""
    table = spec_of(platform).gnmi
    if table is None:
        raise UnknownPlatformError(
            f"platform {platform!s} has no gNMI table",
            hint="read this switch over SSH (`telemetry.transport: ssh`, the default)",
        )
    return table
