"""Platform id -> driver class. Each platform maps to its netmiko device_type inside its driver (DESIGN.md §2)."""

from __future__ import annotations

from pathlib import Path

from fabricd.model import Platform, Switch

from .access import Access, resolve_access
from .base import DriverOptions
from .netmiko_base import NetmikoDriver


def driver_class(platform: Platform) -> type[NetmikoDriver]:
    """The driver class of a platform (imported on demand so that a command loads only what it uses)."""
    if platform is Platform.ARISTA_EOS:
        from .arista_eos.driver import EosDriver

        return EosDriver
    if platform is Platform.CISCO_NXOS:
        from .cisco_nxos.driver import NxosDriver

        return NxosDriver
    if platform is Platform.SONIC:
        from .sonic.driver import SonicDriver

        return SonicDriver
    from .cumulus_nvue.driver import NvueDriver

    return NvueDriver


def make_driver(switch: Switch, access: Access, options: DriverOptions | None = None) -> NetmikoDriver:
    """A driver for ``switch`` (not yet connected: call ``open()``)."""
    return driver_class(switch.platform)(switch, access, options)


def driver_for(switch: Switch, options: DriverOptions | None = None, *, state_dir: Path | None = None,
               known_hosts: tuple[Path, ...] = (), verify_host_key: bool = True) -> NetmikoDriver:
    """A driver for ``switch`` with the credentials its inventory entry refers to (:func:`resolve_access`), not
    yet connected: the one way deploy, audit and serve build their drivers."""
    access = resolve_access(switch, state_dir=state_dir, known_hosts=known_hosts, verify_host_key=verify_host_key,
                            accept_new_host_keys=options.accept_new_host_keys if options else None)
    return make_driver(switch, access, options)
