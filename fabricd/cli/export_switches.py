"""Helpers of ``fabricd export switches``: targets from the inventory and driver sessions as command runners."""

from __future__ import annotations

from collections.abc import Callable

from fabricd.collectors.switch import CommandRunner, SwitchTarget
from fabricd.errors import UsageError
from fabricd.model import Fabric


def targets_of(fabric: Fabric, only: list[str] | None = None) -> list[SwitchTarget]:
    """One target per inventory switch (or per switch named in ``only``), with its port names."""
    switches = {s.name: s for s in fabric.switches}
    if only:
        unknown = [n for n in only if n not in switches]
        if unknown:
            raise UsageError(f"--device {', '.join(unknown)}: not in the inventory",
                             hint=f"choose from {', '.join(sorted(switches))}")
    chosen = [switches[n] for n in only] if only else list(switches.values())
    return [SwitchTarget(s.name, s.platform.value, tuple(p.name for p in s.ports)) for s in chosen]


def runner_factory(fabric: Fabric, *, verify_host_key: bool = True) -> Callable[[SwitchTarget], CommandRunner]:
    """Open a connected platform driver (netmiko over SSH, host key verified) for a target."""
    from fabricd.platforms.access import resolve_access
    from fabricd.platforms.registry import make_driver

    switches = {s.name: s for s in fabric.switches}

    def factory(target: SwitchTarget) -> CommandRunner:
        switch = switches[target.name]
        driver = make_driver(switch, resolve_access(switch, verify_host_key=verify_host_key))
        driver.open()
        return driver

    return factory
