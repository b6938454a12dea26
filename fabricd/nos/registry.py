"""The platform registry: every :class:`~fabricd.model.Platform` -> its pack's
:class:`~fabricd.nos.spec.PlatformSpec`, and the switch intent builder that dispatches through it.

Dispatch is exhaustive: :func:`spec_of` raises :class:`UnknownPlatformError` for a platform without a pack (never a
fall-through to a default platform), and importing this module fails if a :class:`~fabricd.model.Platform` member
has no spec. Adding a platform: docs/ARCHITECTURE.md, "Adding a fifth NOS".
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import cast

from fabricd.errors import FabricdError
from fabricd.intent.switch import IntentShaping, SwitchIntentCore
from fabricd.model import Fabric, Platform, Switch
from fabricd.nos.arista_eos.intent import EosSwitchIntent
from fabricd.nos.arista_eos.spec import SPEC as ARISTA_EOS
from fabricd.nos.cisco_nxos.intent import NxosSwitchIntent
from fabricd.nos.cisco_nxos.spec import SPEC as CISCO_NXOS
from fabricd.nos.cumulus_nvue.intent import NvueSwitchIntent
from fabricd.nos.cumulus_nvue.spec import SPEC as CUMULUS_NVUE
from fabricd.nos.sonic.intent import SonicSwitchIntent
from fabricd.nos.sonic.spec import SPEC as SONIC

from .spec import PlatformSpec

SPECS: Mapping[Platform, PlatformSpec] = MappingProxyType(
    {s.platform: s for s in (SONIC, ARISTA_EOS, CISCO_NXOS, CUMULUS_NVUE)}
)
"""Platform -> spec, in the order docs list the platforms."""

_missing = [p.value for p in Platform if p not in SPECS]
if _missing:  # pragma: no cover - a new Platform member without its pack
    raise ImportError(f"fabricd.nos.registry: no platform pack for {', '.join(_missing)} (docs/ARCHITECTURE.md)")


class UnknownPlatformError(FabricdError):
    """A platform id no pack serves."""


def spec_of(platform: Platform | str) -> PlatformSpec:
    """The spec of ``platform`` (a :class:`Platform` or its id). Raises :class:`UnknownPlatformError` when no pack
    serves it."""
    try:
        return SPECS[Platform(platform)]
    except (ValueError, KeyError):
        raise UnknownPlatformError(
            f"unknown switch platform {platform!r}",
            hint=f"a switch platform is one of {', '.join(p.value for p in SPECS)}",
        ) from None


AnySwitchIntent = EosSwitchIntent | NxosSwitchIntent | NvueSwitchIntent | SonicSwitchIntent
"""Any platform's switch intent (a plain union, for type hints)."""

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
