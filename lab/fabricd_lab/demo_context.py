"""What the demo's stages share (:class:`DemoContext`) and what a stage is (:class:`Stage`).

A stage is an object with a name and a :meth:`Stage.run`; it reads the inventory, options and services of the
context, and publishes the parts it starts for the later stages as the context's public attributes (the push
stage the lab, the export stage Prometheus, ``fabricd serve`` and the replay writers, the storm stage its
timeline). The run loop and cleanup are :class:`fabricd_lab.demo.Demo`.
"""

from __future__ import annotations

import contextlib
import logging
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from fabricd.inventory import Inventory, load_inventory
from fabricd.model import Fabric

from .demo_parts import STAGES, Child, DemoObserver, DemoOptions, LabTraffic, StageResult, StageStatus
from .demo_prom import PrometheusServer

if TYPE_CHECKING:
    from fabricd_lab.report.record import StormTimeline
    from fabricd_lab.stormgen import StormGen

log = logging.getLogger(__name__)


class DemoContext:
    """The inventory, options, state dir and observer of one demo run, the cleanup stack everything started is
    registered on, and the running parts the stages hand on to each other."""

    def __init__(self, options: DemoOptions, observer: DemoObserver, state: Path, stack: contextlib.ExitStack) -> None:
        self.options = options
        self.observer = observer
        self.state = state
        self._stack = stack
        self._inv: Inventory | None = None
        self._workdir: Path | None = None
        self.keep_workdir = False
        """Set by ``--keep-running`` once something is detached: the workdir (replay roots) and the lab stay."""
        # -- published by the push stage
        self.lab_up = False
        self.lab_reused = False
        # -- published by the export stage
        self.prom: PrometheusServer | None = None
        self.prom_started_ts: float | None = None
        self.serve: Child | None = None
        self.children: list[Child] = []
        self.gens: dict[str, StormGen] = {}
        self.traffic: LabTraffic | None = None
        # -- published by the storm stage
        self.storm: StormTimeline | None = None

    @property
    def inventory(self) -> Inventory:
        if self._inv is None:
            self._inv = load_inventory(self.options.inventory)
        return self._inv

    @property
    def fabric(self) -> Fabric:
        return self.inventory.fabric

    @property
    def workdir_path(self) -> Path | None:
        """The run's temporary directory if one was made."""
        return self._workdir

    def workdir(self) -> Path:
        """A temporary directory for this run, removed on close (unless kept for --keep-running)."""
        if self._workdir is None:
            self._workdir = Path(tempfile.mkdtemp(prefix="fabricd-demo-"))
            wd = self._workdir
            self._stack.callback(lambda: None if self.keep_workdir else shutil.rmtree(wd, ignore_errors=True))
        return self._workdir

    def defer(self, callback: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
        """Run ``callback(*args, **kwargs)`` when the demo closes (in reverse order of registration)."""
        self._stack.callback(callback, *args, **kwargs)

    def note(self, stage: str, text: str) -> None:
        log.info("demo %s: %s", stage, text)
        self.observer.note(stage, text)


class Stage:
    """One stage of the demo: :attr:`name` (one of :data:`~fabricd_lab.demo_parts.STAGES`) and :meth:`run`, which
    returns its result or raises ``StageSkippedError`` / ``StageFailedError``."""

    name: ClassVar[str]

    def __init__(self, ctx: DemoContext) -> None:
        self.ctx = ctx

    @property
    def title(self) -> str:
        return dict(STAGES)[self.name]

    def run(self) -> StageResult:
        raise NotImplementedError

    def note(self, text: str) -> None:
        self.ctx.note(self.name, text)

    def ok(self, summary: str, data: dict[str, Any]) -> StageResult:
        return StageResult(self.name, self.title, StageStatus.OK, summary, data)
