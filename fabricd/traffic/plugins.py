"""Traffic runner sources that other distributions plug into fabricd (entry point group ``fabricd.traffic_runners``).

fabricd-lab registers its Soft-RoCE VMs here; fabricd itself never imports the lab. An entry point names an object
with the :class:`~fabricd.traffic.remote.RunnerSource` shape; it is loaded only when a command needs runners.
"""

from __future__ import annotations

import logging
from importlib.metadata import entry_points

from fabricd import settings
from fabricd.errors import UsageError

from .remote import RunnerPool, RunnerSource

log = logging.getLogger(__name__)

GROUP = "fabricd.traffic_runners"
NO_SOURCE_HINT = (
    f"for the Soft-RoCE lab VMs, {settings.LAB_INSTALL_HINT}; or run the pairs on real hosts over SSH with `--via ssh`"
)


def runner_sources() -> dict[str, RunnerSource]:
    """Every installed runner source by entry point name. One that fails to load is logged and left out."""
    found: dict[str, RunnerSource] = {}
    for ep in entry_points(group=GROUP):
        try:
            found[ep.name] = ep.load()
        except Exception as exc:  # a broken plugin must not break fabricd: say which and go on
            log.warning("traffic runner source %s (%s) failed to load: %s", ep.name, ep.value, exc)
    return found


def running_pool(name: str) -> tuple[RunnerPool | None, str]:
    """The first running pool called ``name`` among the installed sources, and, when there is none, why (with the
    command that starts one)."""
    sources = runner_sources()
    if not sources:
        return None, f"no traffic runner source is installed ({NO_SOURCE_HINT})"
    for source in sources.values():
        pool = source.running(name)
        if pool is not None:
            return pool, ""
    starts = " or ".join(f"'{s.how_to_start(name)}'" for s in sources.values())
    return None, f"no runner pool '{name}' is running ({starts} starts one)"


def require_pool(name: str) -> RunnerPool:
    """The running pool ``name``; a :class:`UsageError` saying how to get one otherwise."""
    pool, why = running_pool(name)
    if pool is None:
        raise UsageError(why, hint=NO_SOURCE_HINT if "installed" in why else "start it, then run this again")
    return pool
