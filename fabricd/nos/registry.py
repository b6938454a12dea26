"""The platform registry: every platform id -> its pack's :class:`~fabricd.nos.spec.PlatformSpec`, and the switch
intent builder that dispatches through it.

The registry holds the built-in packs (``fabricd/nos/<id>/``, imported below) and every pack installed through the
``fabricd.platforms`` entry point group (``<id> = "<module>:<PlatformSpec>"``, loaded on first use, so a pack can
come from another distribution). Dispatch is exhaustive: :func:`spec_of` raises :class:`UnknownPlatformError` for an
id without a pack (never a fall-through to a default platform); an inventory naming one is refused when it is loaded
(:class:`~fabricd.model.Platform` checks the same ids). Adding a platform: docs/ARCHITECTURE.md, "Adding a fifth
NOS".
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from importlib.metadata import EntryPoint, entry_points
from typing import cast

from fabricd.errors import FabricdError
from fabricd.intent.switch import IntentShaping, SwitchIntentCore
from fabricd.model import Fabric, Platform, Switch
from fabricd.model.platform import ENTRY_POINT_GROUP
from fabricd.nos.arista_eos.intent import EosSwitchIntent
from fabricd.nos.arista_eos.spec import SPEC as ARISTA_EOS
from fabricd.nos.cisco_nxos.intent import NxosSwitchIntent
from fabricd.nos.cisco_nxos.spec import SPEC as CISCO_NXOS
from fabricd.nos.cumulus_nvue.intent import NvueSwitchIntent
from fabricd.nos.cumulus_nvue.spec import SPEC as CUMULUS_NVUE
from fabricd.nos.sonic.intent import SonicSwitchIntent
from fabricd.nos.sonic.spec import SPEC as SONIC

from .spec import PlatformSpec
from .templates import PackTemplatesError, check_logic_free, pack_templates

log = logging.getLogger(__name__)

BUILTIN: tuple[PlatformSpec, ...] = (SONIC, ARISTA_EOS, CISCO_NXOS, CUMULUS_NVUE)
"""The packs shipped in fabricd, in the order docs list the platforms (``Platform.BUILTIN``'s order)."""


class UnknownPlatformError(FabricdError):
    """A platform id no pack serves."""


class RefusedPackError(UnknownPlatformError, KeyError):
    """An installed pack the registry left out, looked up by its id: why (a KeyError too, so ``in`` and ``get`` see
    no such platform, and a lookup by id that expects a pack says why there is none)."""

    def __str__(self) -> str:
        return Exception.__str__(self)  # the message, as every FabricdError (not KeyError's quoted repr)


class Registry(Mapping[Platform, PlatformSpec]):
    """Platform -> spec: the built-in packs, then the installed ones (entry points, loaded on first use; one that
    fails to load, reuses a built-in id, or whose templates are missing or compute (nos/templates.py) is logged and
    left out, and looking it up raises :class:`RefusedPackError` saying why). :meth:`registered` adds a pack for the
    length of a ``with`` block (the contract tests' fake fifth pack)."""

    def __init__(self, builtin: tuple[PlatformSpec, ...]) -> None:
        self._builtin = builtin
        self._specs: dict[Platform, PlatformSpec] | None = None
        self.refused: dict[str, RefusedPackError] = {}
        """The installed packs left out, by id, with why."""

    def _loaded(self) -> dict[Platform, PlatformSpec]:
        if self._specs is None:
            specs = {s.platform: s for s in self._builtin}
            self.refused = {}
            for ep in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
                try:
                    spec = _admitted(ep, specs)
                except RefusedPackError as exc:  # a broken pack must not break fabricd: say which and go on
                    log.warning("%s; left out", exc.words())
                    self.refused[ep.name] = exc
                    continue
                specs[spec.platform] = spec
            self._specs = specs
        return self._specs

    def __getitem__(self, platform: Platform) -> PlatformSpec:
        specs = self._loaded()
        if platform not in specs and platform in self.refused:
            raise self.refused[platform]
        return specs[platform]

    def __iter__(self) -> Iterator[Platform]:
        return iter(self._loaded())

    def __len__(self) -> int:
        return len(self._loaded())

    @contextmanager
    def registered(self, spec: PlatformSpec) -> Iterator[PlatformSpec]:
        """``spec`` served for the length of the block (it must not replace a registered id)."""
        specs = self._loaded()
        if spec.platform in specs:
            raise ValueError(f"platform {spec.platform!r} is already registered")
        specs[spec.platform] = spec
        try:
            yield spec
        finally:
            del specs[spec.platform]

    @contextmanager
    def overridden(self, spec: PlatformSpec) -> Iterator[PlatformSpec]:
        """``spec`` served in place of the registered pack of its id for the length of the block (tests: a pack
        variant, e.g. one whose gNMI table is not mapped yet)."""
        specs = self._loaded()
        if spec.platform not in specs:
            raise ValueError(f"platform {spec.platform!r} is not registered")
        before = specs[spec.platform]
        specs[spec.platform] = spec
        try:
            yield spec
        finally:
            specs[spec.platform] = before


def _admitted(ep: EntryPoint, specs: Mapping[Platform, PlatformSpec]) -> PlatformSpec:
    """The installed pack ``ep`` names. Raises :class:`RefusedPackError` when it cannot serve."""
    fix = f"fix or reinstall the package that registers {ep.name!r} in the {ENTRY_POINT_GROUP!r} entry point group"
    try:
        spec = ep.load()
    except Exception as exc:  # whatever the pack's import raises
        raise RefusedPackError(f"platform pack {ep.name!r} ({ep.value}) failed to load: {exc}", hint=fix) from None
    if not isinstance(spec, PlatformSpec) or spec.platform != ep.name or spec.platform in specs:
        raise RefusedPackError(
            f"platform pack {ep.name!r} ({ep.value}) is not a new PlatformSpec with platform {ep.name!r}", hint=fix
        )
    try:  # its templates: where it says, with main.j2, only printing (fabricd's tests never see them)
        check_logic_free(pack_templates(spec))
    except PackTemplatesError as exc:
        raise RefusedPackError(exc.message, hint=exc.hint) from None
    return spec


SPECS = Registry(BUILTIN)
"""Platform -> spec, in the order docs list the platforms, then the installed packs."""


def spec_of(platform: Platform | str) -> PlatformSpec:
    """The spec of ``platform`` (a :class:`Platform` or its id). Raises :class:`UnknownPlatformError` when no pack
    serves it."""
    try:
        return SPECS[Platform(platform)]
    except RefusedPackError:
        raise
    except KeyError:
        raise UnknownPlatformError(
            f"unknown switch platform {platform!r}",
            hint=f"a switch platform is one of {', '.join(SPECS)}; a platform from another package needs that "
            f"package installed (it registers its pack in the {ENTRY_POINT_GROUP!r} entry point group)",
        ) from None


AnySwitchIntent = EosSwitchIntent | NxosSwitchIntent | NvueSwitchIntent | SonicSwitchIntent
"""The built-in platforms' switch intents (a plain union, for type hints: an installed pack's intent is a
:class:`~fabricd.intent.switch.SwitchIntentBase` too, and every consumer reads it through that base or its spec)."""


def _shaping(platform: Platform) -> IntentShaping:
    return spec_of(platform).intent


class SwitchIntentBuilder(SwitchIntentCore):
    """Builds :data:`AnySwitchIntent` for the switches of one fabric, each through its platform's pack, caching what
    they share (:class:`~fabricd.intent.switch.SwitchIntentCore`)."""

    def __init__(self, fabric: Fabric) -> None:
        super().__init__(fabric, _shaping)

    def build(self, switch: Switch) -> AnySwitchIntent:
        return cast(AnySwitchIntent, super().build(switch))


def switch_intent(fabric: Fabric, name: str) -> AnySwitchIntent:
    """The intent of switch ``name``. Raises KeyError when the fabric has no such switch."""
    switch = fabric.switch(name)
    if switch is None:
        raise KeyError(name)
    return SwitchIntentBuilder(fabric).build(switch)


def switch_intents(fabric: Fabric) -> list[AnySwitchIntent]:
    """The intent of every switch, inventory order."""
    builder = SwitchIntentBuilder(fabric)
    return [builder.build(s) for s in fabric.switches]
