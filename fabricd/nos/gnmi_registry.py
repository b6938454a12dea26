"""Every pack's gNMI table (:class:`~fabricd.nos.gnmi.GnmiTable`, ``fabricd/nos/<id>/gnmi.py``) by platform: the one
place that imports all four (the packs stay independent of each other, like :mod:`fabricd.nos.registry`)."""

from __future__ import annotations

from fabricd.model import Platform

from .arista_eos.gnmi import TABLE as EOS
from .cisco_nxos.gnmi import TABLE as NXOS
from .cumulus_nvue.gnmi import TABLE as NVUE
from .gnmi import GnmiTable
from .sonic.gnmi import TABLE as SONIC

GNMI_TABLES: dict[Platform, GnmiTable] = {t.platform: t for t in (SONIC, EOS, NXOS, NVUE)}


def table_for(platform: Platform | str) -> GnmiTable:
    """The gNMI table of a platform id."""
    return GNMI_TABLES[Platform(platform)]
