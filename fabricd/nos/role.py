"""One parser role (:class:`Role`) and the builders a pack's ``roles.py`` declares its roles with.

A pack lists its own roles (``fabricd/nos/<id>/roles.py``: ``ROLES``, the spec's ``roles`` field), as data: each
builder returns a :data:`RoleOf`, which the parser-role registry (:mod:`fabricd.nos.roles`) makes a :class:`Role`
with the pack's spec as it walks the platform registry (and adds the host readers'). The spec gives the platform,
commands and parser modules, so a role never names a command the pack does not run.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .spec import PlatformSpec, ShowTable


RoleOf = Callable[["PlatformSpec"], "Role"]
"""A role as a pack declares it: the :class:`Role` it is, given the pack's spec."""


@dataclass(frozen=True, slots=True)
class Role:
    """One parser role. ``platform`` is a switch platform id or ``host``; ``name`` is the role key (the
    ``COMMANDS``/``OPTIONAL_COMMANDS`` key for exporter roles); ``command`` is what produces the output;
    ``parser`` the dotted path of the parsing function; ``used_by`` who reads it (``export``, ``export
    (optional)``, ``audit``, ``capture``, ``reference``: a parser kept for captured output fabricd does not
    poll); ``captures`` globs relative to tests/golden/; ``unverified`` the reason, None when verified."""

    platform: str
    name: str
    command: str
    parser: str
    used_by: str
    captures: tuple[str, ...] = ()
    unverified: str | None = None

    @property
    def id(self) -> str:
        return f"{self.platform}/{self.name}"

    @property
    def verified(self) -> bool:
        return self.unverified is None

    @property
    def folder(self) -> str:
        """Where captures named ``<name>--<source>.txt`` are linked by the naming convention (under tests/golden)."""
        if self.platform == "host":
            return "readers/host"
        if self.name == "running-config":
            return f"switch_config/{self.platform}"
        if self.name == "version":
            return f"readers/switch_version/{self.platform}"
        return f"readers/switch/{self.platform}"

    def globs(self) -> tuple[str, ...]:
        return (f"{self.folder}/{self.name}--*", *self.captures)


def _command(show: ShowTable, key: str) -> str:
    table: Mapping[str, str] = {**show.optional, **show.commands}
    return table.get(key, f"(no {key!r} command in {show.module})")


def _dotted(fn: Callable[..., Any]) -> str:
    return f"{fn.__module__}.{getattr(fn, '__name__', 'parse')}"


def sw(
    key: str,
    parser: str,
    captures: Iterable[str] = (),
    unverified: str | None = None,
    *,
    form: str | None = None,
) -> RoleOf:
    """An exporter role: command from the pack's COMMANDS/OPTIONAL_COMMANDS; ``form`` names another output form of
    the same command (``text``, or ``json`` where the exporter polls the text) parsed by the same function, as a
    reference role of its own. ``captures``: globs under tests/golden/readers/switch/<id>/."""
    found = tuple(captures)
    return lambda spec: _sw(spec, key, parser, found, unverified=unverified, form=form)


def _sw(
    spec: PlatformSpec, key: str, parser: str, captures: tuple[str, ...], *, unverified: str | None, form: str | None
) -> Role:
    platform, show = spec.platform.value, spec.show
    optional = key in show.optional and key not in show.commands
    command = _command(show, key)
    name = key if form is None else f"{key}-{form}"
    used_by = "export (optional)" if optional else "export"
    if key == "pfcwd":
        used_by += ", audit"
    if form is not None:
        base = command.replace(" | json", "").replace(" -o json", "")
        command = (f"{base} | json" if form == "json" else base) + f" ({form} form)"
        used_by = "reference"
    return _role(platform, name, command, f"{show.module}.{parser}", used_by, captures=captures, unverified=unverified)


def _role(
    platform: str,
    name: str,
    command: str,
    parser: str,
    used_by: str,
    *,
    captures: Iterable[str],
    unverified: str | None,
) -> Role:
    """A role whose ``captures`` are globs in the role's own folder (:attr:`Role.folder`)."""
    role = Role(platform, name, command, parser, used_by, unverified=unverified)
    return replace(role, captures=tuple(f"{role.folder}/{c}" for c in captures))


def ref(name: str, command: str, parser: str, captures: Iterable[str], *, unverified: str | None = None) -> RoleOf:
    """A parser fabricd keeps for captured output of a command it does not poll."""
    found = tuple(captures)
    return lambda spec: _role(
        spec.platform.value,
        name,
        command,
        f"{spec.show.module}.{parser}",
        "reference",
        captures=found,
        unverified=unverified,
    )


def _of_spec(
    name: str,
    used_by: str,
    part: Callable[[PlatformSpec], tuple[str, Callable[..., Any]]],
    captures: Iterable[str],
    unverified: str | None,
) -> RoleOf:
    """A role whose command and parser are spec fields (``part`` picks them)."""
    found = tuple(captures)

    def bind(spec: PlatformSpec) -> Role:
        command, parser = part(spec)
        return _role(
            spec.platform.value, name, command, _dotted(parser), used_by, captures=found, unverified=unverified
        )

    return bind


def config(captures: Iterable[str], unverified: str | None = None) -> RoleOf:
    """The running-config role (``PlatformSpec.running_config``, ``parse_running_config``); captures under
    tests/golden/switch_config/<id>/."""
    return _of_spec(
        "running-config", "audit, capture", lambda s: (s.running_config, s.parse_running_config), captures, unverified
    )


def version(captures: Iterable[str] = (), unverified: str | None = None) -> RoleOf:
    """The version role (``PlatformSpec.version_command``, ``parse_version``, ``fabricd capture``'s manifest)."""
    return _of_spec("version", "capture", lambda s: (s.version_command, s.parse_version), captures, unverified)


def lldp(
    captures: Iterable[str] = (), unverified: str | None = None, *, name: str = "lldp", command: str | None = None
) -> RoleOf:
    """The platform's LLDP neighbour command (``PlatformSpec.lldp``), read by ``fabricd audit cabling``; captures in
    tests/golden/readers/lldp/ (they are not counter outputs, so not beside the show captures). With ``name`` and
    ``command``: another form of the output the same parser reads (a reference role)."""
    found = tuple(f"readers/lldp/{c}" for c in captures)
    return lambda spec: _lldp(spec, name, command, found, unverified)


def _lldp(
    spec: PlatformSpec, name: str, command: str | None, captures: tuple[str, ...], unverified: str | None
) -> Role:
    table = spec.lldp
    if table is None:
        raise ValueError(f"{spec.platform}: the pack declares no LLDP table")
    parser = getattr(table.parse, "__name__", "parse")
    used_by = "audit cabling, capture" if command is None else "audit cabling (reference)"
    return Role(
        spec.platform.value, name, command or table.command, f"{table.module}.{parser}", used_by, captures, unverified
    )
