"""Switch OS ids: :class:`Platform`, a name the platform registry checks, not a closed enum.

A platform id names a platform pack (``fabricd/nos/<id>/``, or a pack another distribution installs). The model
(L0) imports no pack, so it checks an inventory's ``platform:`` against the ids it can know without one: the built-in
packs' ids (the constants below) and the names of the installed ``fabricd.platforms`` entry points, the group
:mod:`fabricd.nos.registry` loads packs from (docs/ARCHITECTURE.md, "Adding a fifth NOS"). tests/unit/
test_pack_contract.py keeps the two views equal. A pydantic validation context may pass its own ids (``context=
{"platforms": [...]}``), which is how a test checks an inventory against a registry it changed.
"""

from __future__ import annotations

import difflib
import re
from functools import lru_cache
from importlib.metadata import entry_points
from typing import Any, ClassVar

from pydantic import GetCoreSchemaHandler, GetJsonSchemaHandler, ValidationInfo
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import core_schema

from .types import rule_error

ENTRY_POINT_GROUP = "fabricd.platforms"
"""The entry point group a platform pack registers in: ``<id> = "<module>:<PlatformSpec object>"``."""

_ID = re.compile(r"[a-z][a-z0-9_]{0,31}")


class Platform(str):
    """A switch OS id (``sonic``, ``arista_eos``, ...): a plain string, one interned object per id, so ``is`` and
    ``==`` agree. Each maps to its pack's :class:`~fabricd.nos.spec.PlatformSpec` through the registry; the
    constants name the built-in packs (a pack from another distribution has no constant, only its id)."""

    SONIC: ClassVar[Platform]
    ARISTA_EOS: ClassVar[Platform]
    CISCO_NXOS: ClassVar[Platform]
    CUMULUS_NVUE: ClassVar[Platform]
    BUILTIN: ClassVar[tuple[Platform, ...]]
    """The built-in packs' ids, in the order the docs list the platforms."""

    __slots__ = ()
    _interned: ClassVar[dict[str, Platform]] = {}

    def __new__(cls, value: str) -> Platform:
        known = cls._interned.get(value)
        if known is None:
            known = cls._interned[str(value)] = super().__new__(cls, value)
        return known

    @property
    def value(self) -> str:
        """The id as a plain string (what an enum member's ``.value`` was)."""
        return str.__str__(self)

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        return core_schema.with_info_after_validator_function(
            _validate,
            core_schema.str_schema(),
            serialization=core_schema.plain_serializer_function_ser_schema(str, when_used="json"),
        )

    @classmethod
    def __get_pydantic_json_schema__(
        cls, schema: core_schema.CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        return {
            "type": "string",
            "enum": list(known_platforms()),
            "description": "Switch OS id: the id of a platform pack (fabricd's own, or one an installed package "
            f"registers in the {ENTRY_POINT_GROUP!r} entry point group).",
        }


Platform.SONIC = Platform("sonic")
Platform.ARISTA_EOS = Platform("arista_eos")
Platform.CISCO_NXOS = Platform("cisco_nxos")
Platform.CUMULUS_NVUE = Platform("cumulus_nvue")
Platform.BUILTIN = (Platform.SONIC, Platform.ARISTA_EOS, Platform.CISCO_NXOS, Platform.CUMULUS_NVUE)


@lru_cache(maxsize=1)
def installed_platforms() -> tuple[str, ...]:
    """The ids of the packs installed through the ``fabricd.platforms`` entry point group (names only: nothing is
    imported), in a stable order."""
    return tuple(sorted({ep.name for ep in entry_points(group=ENTRY_POINT_GROUP)}))


def known_platforms() -> tuple[str, ...]:
    """Every id an inventory may name: the built-in packs, then the installed ones."""
    builtin = [p.value for p in Platform.BUILTIN]
    return (*builtin, *(p for p in installed_platforms() if p not in builtin))


def _validate(value: str, info: ValidationInfo) -> Platform:
    context = info.context if isinstance(info.context, dict) else {}
    known = tuple(context.get("platforms") or known_platforms())
    if value in known:
        return Platform(value)
    close = difflib.get_close_matches(value.lower(), known, n=1, cutoff=0.6) or [
        k for k in known if value.lower() in k.split("_")
    ]  # a short name: eos, nxos, nvue
    if close:
        hint = f"did you mean {close[0]!r}?"
    elif _ID.fullmatch(value):
        hint = (
            "use one of these ids; a platform from another package needs that package installed (it registers "
            f"its pack in the {ENTRY_POINT_GROUP!r} entry point group)"
        )
    else:
        hint = "a platform id is lower case letters, digits and _; use one of these ids"
    raise rule_error("unknown switch platform", f"one of {', '.join(known)}", hint)
