"""Option types that several commands declare alike (the same flag with the same help), one ``Annotated`` type each,
and the watchdog's timing flags (``serve`` and ``watch``) as one group. The families with a module of their own:
switch SSH flags in deploy_common.py, ``--hosts`` in host_fanout.py, ``--shard`` in shard_opts.py, the exporter's
HTTP endpoint in export.py."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from .common import FlagGroup

if TYPE_CHECKING:
    from fabricd.model import Fabric
    from fabricd.watchdog.params import WatchdogParams

ServiceWebConfigOpt = Annotated[
    Path | None,
    typer.Option(
        "--web-config",
        envvar="FABRICD_WEB_CONFIG",
        show_default=False,
        help="exporter-toolkit web config (YAML): TLS and basic auth.",
    ),
]
"""``serve`` and ``agent`` (``export``'s own names the fields)."""
ServiceDurationOpt = Annotated[
    float | None, typer.Option("--duration", min=0.0, help="Stop after this many seconds (default: until SIGTERM).")
]
ThisHostOpt = Annotated[
    str | None,
    typer.Option(
        "--host",
        envvar="FABRICD_HOST",
        help="Inventory host this machine (or the unnamed --root) is. Default: the hostname.",
    ),
]
FullPauseFractionOpt = Annotated[
    float,
    typer.Option(
        "--full-pause-fraction",
        min=0.5,
        max=1.0,
        help="Share of a poll interval that must be paused for it to count as paused throughout.",
    ),
]
QpsOpt = Annotated[int, typer.Option("--qps", min=1, max=64)]
"""``traffic selftest`` and ``validate-fabric`` (``traffic run``'s has its own help)."""


@dataclass(frozen=True)
class WatchdogFlags(FlagGroup):
    """The storm watchdog's timing flags of ``serve`` and ``watch`` (``WatchdogFlags.of(locals())``); each
    command words their help for what it watches."""

    detection_ms: float | None
    restoration_ms: float | None
    poll_ms: float | None
    full_pause_fraction: float
    stuck_after_s: float

    def params(self, fabric: Fabric | None) -> WatchdogParams:
        """The watchdog's parameters: these flags over the inventory's ``policy.pfc.watchdog`` (when one is given)."""
        from fabricd.service.wiring import params_for

        return params_for(
            fabric,
            detection_ms=self.detection_ms,
            restoration_ms=self.restoration_ms,
            poll_ms=self.poll_ms,
            full_pause_fraction=self.full_pause_fraction,
            stuck_after_s=self.stuck_after_s,
        )
