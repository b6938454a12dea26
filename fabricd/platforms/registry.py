"""Platform -> driver, through the platform registry (:mod:`fabricd.nos.registry`): each pack names its driver
class, which maps to its netmiko device_type. An unknown platform is an
:class:`~fabricd.nos.registry.UnknownPlatformError`, never a default driver."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from fabricd.model import Platform, Switch
from fabricd.nos.registry import spec_of

from .access import Access, resolve_access
from .base import DriverOptions, SwitchDriver


class DriverClass(Protocol):
    """What a pack's driver class is called with: the switch, its access and the driver options."""

    def __call__(self, switch: Switch, access: Access, options: DriverOptions | None = None, /) -> SwitchDriver: ...


def driver_class(platform: Platform) -> DriverClass:
    """The driver class of a platform (imported on demand so that a command loads only what it uses)."""
    cls: DriverClass = spec_of(platform).driver_class()
    return cls


def make_driver(switch: Switch, access: Access, options: DriverOptions | None = None) -> SwitchDriver:
    """A driver for ``switch`` (not yet connected: call ``open()``)."""
    return driver_class(switch.platform)(switch, access, options)


def driver_for(
    switch: Switch,
    options: DriverOptions | None = None,
    *,
    known_hosts: tuple[Path, ...] = (),
    verify_host_key: bool = True,
) -> SwitchDriver:
    """A driver for ``switch`` with the credentials its inventory entry refers to (:func:`resolve_access`), not
    yet connected: the one way deploy, audit and serve build their drivers."""
    access = resolve_access(
        switch,
        known_hosts=known_hosts,
        verify_host_key=verify_host_key,
        accept_new_host_keys=options.accept_new_host_keys if options else None,
    )
    return make_driver(switch, access, options)


@dataclass(frozen=True)
class SwitchReach:
    """How to reach switches: driver pacing, host-key verification, extra known_hosts files. Push, audit and
    capture options are one of these (:class:`fabricd.deploy.pipeline.PushOptions` adds how to push)."""

    driver: DriverOptions = field(default_factory=DriverOptions)
    verify_host_key: bool = True
    known_hosts: tuple[Path, ...] = ()


def driver_factory(reach: SwitchReach) -> Callable[[Switch], SwitchDriver]:
    """Drivers built by :func:`driver_for` from each switch's credential reference, reached as ``reach`` says."""

    def make(switch: Switch) -> SwitchDriver:
        return driver_for(switch, reach.driver, known_hosts=reach.known_hosts, verify_host_key=reach.verify_host_key)

    return make
