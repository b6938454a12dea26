"""What a platform pack declares: :class:`PlatformSpec`, one frozen record per switch OS (docs/ARCHITECTURE.md,
"Platform packs").

A spec is data: functions and tables of its pack (``fabricd/nos/<id>/``), found through the one registry
(:mod:`fabricd.nos.registry`). Everything a spec names is pure (L1) except its driver, which is only a dotted
path here and is imported on first use (:meth:`PlatformSpec.driver_class`), so ``fabricd validate`` and
``fabricd render`` never load netmiko. tests/unit/test_platform_specs.py proves every spec complete.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from fabricd.intent.checks.base import Check
from fabricd.intent.switch import IntentShaping, SwitchIntentBase
from fabricd.intent.watchdog_timers import Warn, WatchdogMs
from fabricd.model import Platform, Watchdog
from fabricd.model.types import Model
from fabricd.readers.lldp import LldpNeighbor
from fabricd.readers.switch.config_model import LosslessConfig
from fabricd.readers.switch.model import SwitchCounters

from .gnmi import GnmiTable
from .role import RoleOf
from .rules import DeviceRules

W = TypeVar("W", bound=Model)


@dataclass(frozen=True)
class WatchdogCodec(Generic[W]):
    """The PFC watchdog in the platform's own units: ``forward`` turns the policy's ms into the platform's model
    (every rounding or clamp a render warning), ``inverse`` gives back what that model does, in ms (the audit
    compares it with the device; the contract test round-trips it)."""

    model: type[W]
    forward: Callable[[Watchdog, Warn], W]
    inverse: Callable[[W], WatchdogMs]

    def to_ms(self, watchdog: Model) -> WatchdogMs:
        """:attr:`inverse` of a watchdog of this platform; a watchdog of another platform is a TypeError."""
        if not isinstance(watchdog, self.model):
            raise TypeError(f"{type(watchdog).__name__} is not a {self.model.__name__}")
        return self.inverse(watchdog)


ShowParser = Callable[..., SwitchCounters]
"""``parse(text)`` or, for a per-interface command (``{interface}`` in it), ``parse(text, interface)``."""


@dataclass(frozen=True)
class ShowTable:
    """The show commands the exporter polls, by parser role, and the parser of each role.

    ``commands``: polled every scrape (a missing output fails the poll); ``optional``: polled, and an output the
    device refuses is skipped; ``parsers``: role -> parser, for every role of both tables; ``module``: the dotted
    module the parsers live in (the parser-role registry names parsers by it)."""

    commands: Mapping[str, str]
    optional: Mapping[str, str]
    parsers: Mapping[str, ShowParser]
    module: str


LldpParser = Callable[..., list[LldpNeighbor]]
"""``parse(text)`` or, for a per-interface command (``{interface}`` in it), ``parse(text, interface)``."""


@dataclass(frozen=True)
class LldpTable:
    """How the platform lists its LLDP neighbours (``fabricd audit cabling``): the command (``{interface}`` when the
    NOS answers per port), its parser, and the dotted module the parser lives in (the parser-role registry)."""

    command: str
    parse: LldpParser
    module: str


def unified_diff_signs(text: str) -> list[tuple[str, str]]:
    """Each line of a unified-style diff with its ``+`` / ``-`` prefix, or ``""`` (context): how most drivers'
    diffs read (EOS session diff, NX-OS checkpoint diff, SONiC's JSON-patch lines)."""
    return [(line[:1] if line[:1] in ("+", "-") else "", line) for line in text.splitlines()]


@dataclass(frozen=True)
class PlatformSpec:
    """Everything fabricd knows about one switch OS.

    ========================  ====================================================================================
    Field                     What
    ========================  ====================================================================================
    ``platform``, ``title``   the :class:`~fabricd.model.Platform` and its human name (validate's messages, the
                              docs' tables)
    ``intent``                intent shaping: the platform's intent class and its own decisions
    ``watchdog``              the PFC watchdog codec, forward and inverse
    ``rules``                 what the NOS accepts, as sourced data (``rules.py``: port names, name lengths,
                              MTU by port mode, the watchdog grid, ECN units, reserved VLANs); the device-rule
                              checks of ``fabricd validate`` read them (:mod:`fabricd.nos.checks`)
    ``checks``                the platform's own inventory checks beyond its rules (``checks.py``); they run in
                              ``fabricd validate`` (:mod:`fabricd.nos.validate`)
    ``show``                  the show commands and their parsers (exporter, audit watchdog, capture)
    ``running_config``        the command ``get_config`` runs, and ``parse_running_config`` reads its output
    ``audit_hints``           SW-* finding code -> the platform's own commands to fix it
    ``version_command``       the command that prints the NOS version, and ``parse_version`` reads it (capture)
    ``suffix``                the main rendered file, ``switches/<name>.<suffix>``
    ``templates``             folder under templates/ holding ``main.j2`` and its sections, or
                              ``"<package>:<folder>"``, a folder in the pack's own package (nos/templates.py)
    ``document``              when set, the main file is ``document(intent)`` (SONiC's CONFIG_DB JSON) and the
                              template's output goes to ``switches/<name>.<template_suffix>``
    ``lldp``                  the LLDP neighbour command and its parser (``fabricd audit cabling``)
    ``roles``                 every output the pack parses, with its captures or why it has none (``roles.py``
                              ``ROLES``; the parser-role registry, :mod:`fabricd.nos.roles`, walks them)
    ``gnmi``                  the gNMI table (``gnmi.py``: paths, encoding, ``to_counters``), None where the pack
                              has none (the gNMI collector, capture and validate's transport check read it)
    ``driver``                ``module:Class`` of the :class:`~fabricd.platforms.base.SwitchDriver` (L2), imported
                              on first use
    ``diff_signs``            ``diff_signs(text)``: each line of the driver's diff with ``+`` (adds), ``-``
                              (removes) or ``""``; by default the line's own ``+``/``-`` prefix (a unified diff)
    ========================  ====================================================================================
    """

    platform: Platform
    title: str
    intent: IntentShaping
    watchdog: WatchdogCodec[Any]
    rules: DeviceRules
    checks: tuple[Check, ...]
    show: ShowTable
    running_config: str
    parse_running_config: Callable[[str], LosslessConfig]
    audit_hints: Mapping[str, str]
    version_command: str
    parse_version: Callable[[str], str | None]
    suffix: str
    templates: str
    driver: str
    roles: Sequence[RoleOf]
    document: Callable[[Any], str] | None = None
    template_suffix: str | None = None
    lldp: LldpTable | None = None
    gnmi: GnmiTable | None = None
    diff_signs: Callable[[str], list[tuple[str, str]]] = unified_diff_signs

    @property
    def intent_class(self) -> type[SwitchIntentBase]:
        return self.intent.model

    def driver_class(self) -> Any:
        """The driver class, imported now (the first call loads netmiko). Typed by the L2 caller
        (:func:`fabricd.platforms.registry.driver_class`)."""
        module, _, name = self.driver.partition(":")
        return getattr(importlib.import_module(module), name)
