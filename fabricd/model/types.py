"""Constrained scalar types. Each carries its range, unit and source in the Field description."""

from __future__ import annotations

import re
from collections.abc import Callable
from enum import StrEnum
from ipaddress import IPv4Interface, IPv4Network
from typing import Annotated

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field
from pydantic_core import PydanticCustomError


class Model(BaseModel):
    """Base of every intent model: unknown keys are errors and instances are immutable."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, use_enum_values=False)


Priority = Annotated[int, Field(ge=0, le=7, description="IEEE 802.1p priority / PFC priority, 0-7")]
TrafficClassId = Annotated[int, Field(ge=0, le=7, description="Egress traffic class (queue), 0-7")]
Dscp = Annotated[int, Field(ge=0, le=63, description="DSCP code point, 0-63 (RFC 2474)")]
VlanId = Annotated[int, Field(ge=1, le=4094, description="802.1Q VLAN id, 1-4094")]
Tos = Annotated[int, Field(ge=0, le=255, description="IPv4 ToS byte = DSCP << 2 | ECN bits, 0-255")]
MtuBytes = Annotated[
    int,
    Field(
        ge=576,
        le=9216,
        description="MTU in bytes, 576-9216 (the model's range; a platform may take less, e.g. EOS 68-9214: "
        "docs/platforms.md)",
    ),
]
Bytes = Annotated[int, Field(ge=0, description="A size in bytes")]
Milliseconds = Annotated[int, Field(ge=0, description="A duration in milliseconds")]
Percent = Annotated[int, Field(ge=0, le=100, description="A percentage, 0-100")]
Meters = Annotated[float, Field(ge=0, le=100_000, description="A cable length in metres, 0-100000")]
TcpPort = Annotated[int, Field(ge=1, le=65535, description="A TCP port, 1-65535")]

# Names that may reach a device CLI or a shell line: no whitespace, quotes, newlines or shell metacharacters.
# Every pattern here is applied with ``fullmatch``: ``re.match(...$)`` lets a trailing newline through, since ``$``
# also matches before a final "\n".
_SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:/@+-]{0,63}")
# Names that also become a file name (``render --out``, session logs, snapshots, captures): one path component.
_COMPONENT_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:@+-]{0,63}")


def rule_error(what: str, expected: str, hint: str) -> PydanticCustomError:
    """A validation error the inventory loader reports as ``what (expected ..., got ...); hint`` at file:line."""
    return PydanticCustomError("fabricd_rule", "{what}", {"what": what, "expected": expected, "hint": hint})


def _name_rule(
    pattern: re.Pattern[str],
    what: str,
    expected: str,
    hint: str,
    *,
    refuse: Callable[[str], bool] = lambda value: False,
) -> Callable[[str], str]:
    """A validator of a name that must ``fullmatch`` ``pattern`` (and not be one ``refuse`` picks out); anything
    else is a :func:`rule_error` saying what, expected and how to fix it."""

    def check(value: str) -> str:
        if not pattern.fullmatch(value) or refuse(value):
            raise rule_error(what, expected, hint)
        return value

    return check


_safe = _name_rule(
    _SAFE_NAME,
    "not a safe name: it reaches device CLIs and shell lines",
    "1-64 letters, digits and _ . : / @ + -, starting with a letter or digit, on one line",
    "rename it with those characters only (no spaces, quotes, control characters or line breaks)",
)
_component = _name_rule(
    _COMPONENT_NAME,
    "not a device name: it names files (render output, session logs, snapshots), so it must be one path component",
    "1-64 letters, digits and _ . : @ + -, starting with a letter or digit, without '/' or '..'",
    "rename the device with those characters only",
    refuse=lambda value: ".." in value,
)

# the kernel also takes a leading '-', which ip, ethtool and dcb would read as an option in a host script
_IFNAME = re.compile(r"[A-Za-z0-9_.@+][A-Za-z0-9_.@+-]{0,14}")

# the kernel's dev_valid_name(): 1-15 bytes, not "." or "..", no '/', ':' or whitespace
_ifname = _name_rule(
    _IFNAME,
    "not a Linux interface name (the kernel refuses '/', ':' and whitespace; it names a /sys/class/net directory)",
    "1-15 letters, digits and _ . @ + -, not starting with '-', not '.' or '..'",
    "use the name `ip link` shows for the NIC",
    refuse=lambda value: value in (".", ".."),
)

Name = Annotated[
    str,
    AfterValidator(_safe),
    Field(description="An identifier safe on a CLI line", json_schema_extra={"pattern": f"^{_SAFE_NAME.pattern}$"}),
]
InterfaceName = Annotated[
    str,
    AfterValidator(_ifname),
    Field(
        description="A Linux network interface name (kernel dev_valid_name: 1-15 characters, no '/', ':' or space)",
        json_schema_extra={"pattern": f"^{_IFNAME.pattern}$"},
    ),
]
DeviceName = Annotated[
    str,
    AfterValidator(_component),
    Field(
        description="A fabric, switch or host name: safe on a CLI line and one path component (no '/' or '..')",
        json_schema_extra={"pattern": f"^(?!.*\\.\\.){_COMPONENT_NAME.pattern}$"},
    ),
]

# 'switch:port' (the colon itself is checked by validate, which names the switches and ports it expected)
_ENDPOINT = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:/@+-]{0,128}")
_endpoint = _name_rule(
    _ENDPOINT,
    "not a 'switch:port' endpoint of safe names: it reaches device CLIs and shell lines",
    "a switch name, a colon and a port name (letters, digits and _ . : / @ + -), on one line",
    "write it as switch:port, e.g. leaf1:Ethernet0",
)

Endpoint = Annotated[
    str,
    AfterValidator(_endpoint),
    Field(description="A switch port as 'switch:port'", json_schema_extra={"pattern": f"^{_ENDPOINT.pattern}$"}),
]


def _one_line(value: str) -> str:
    # isprintable() is False for every control character and for the line and paragraph separators (\x85, \u2028,
    # \u2029) that would split a generated comment or CLI line.
    if not value.isprintable():
        raise rule_error(
            "not one line of printable text",
            "text without line breaks, tabs or control characters",
            "write it on one line",
        )
    return value


_CLI_TEXT_FORBIDDEN = frozenset("\"'`$;|&<>\\")


def _cli_text(value: str) -> str:
    if not value.isprintable() or any(c in _CLI_TEXT_FORBIDDEN for c in value):
        raise rule_error(
            "not safe on a device configuration line",
            "one line of printable text without quotes, backquotes, $ ; | & < > or backslash",
            "remove those characters and any line break",
        )
    return value


OneLine = Annotated[
    str,
    AfterValidator(_one_line),
    Field(max_length=200, description="One line of printable text, at most 200 characters"),
]
CliText = Annotated[
    str,
    AfterValidator(_cli_text),
    Field(
        max_length=200,
        description="One line of printable text for device config lines (no quotes or shell "
        "metacharacters), at most 200 characters",
    ),
]


_DOTTED_QUAD = re.compile(r"(0|[1-9]\d{0,2})\.(0|[1-9]\d{0,2})\.(0|[1-9]\d{0,2})\.(0|[1-9]\d{0,2})/(0|[12]?\d|3[0-2])")


def _address_text(value: object) -> object:
    # pydantic would read a YAML number or boolean as an integer address (ip: 10 -> 0.0.0.10/32)
    if isinstance(value, bool | int | float):
        raise ValueError("write the address as text with a prefix length, e.g. 10.0.0.1/24")
    return value


def _interface(value: object) -> object:
    """Plain ``a.b.c.d/len`` is built from integers (ipaddress parses the text twice, ~3x slower on 16,000
    NICs); anything else goes to pydantic's own validator, which reports the error."""
    value = _address_text(value)
    if isinstance(value, str):
        m = _DOTTED_QUAD.fullmatch(value)
        if m:
            a, b, c, d, prefix = (int(g) for g in m.groups())
            if a < 256 and b < 256 and c < 256 and d < 256:
                return IPv4Interface(((a << 24) | (b << 16) | (c << 8) | d, prefix))
    return value


IPv4Address = Annotated[
    IPv4Interface,
    BeforeValidator(_interface),
    Field(description="IPv4 address with prefix length, e.g. 10.100.0.11/16"),
]
IPv4Subnet = Annotated[
    IPv4Network, BeforeValidator(_address_text), Field(description="IPv4 network, e.g. 10.100.0.0/16")
]


class Speed(StrEnum):
    """Port speed as vendors print it. Pause quanta per speed come from SONiC's buffer_headroom_mellanox.lua."""

    G10 = "10G"
    G25 = "25G"
    G40 = "40G"
    G50 = "50G"
    G100 = "100G"
    G200 = "200G"
    G400 = "400G"
    G800 = "800G"

    @property
    def bps(self) -> int:
        """Line rate in bits per second."""
        return int(self.value[:-1]) * 1_000_000_000

    @property
    def gbps(self) -> int:
        return int(self.value[:-1])

    @property
    def pause_quanta(self) -> int:
        """Peer response time in 512-bit pause quanta (SONiC buffer_headroom_mellanox.lua)."""
        return _PAUSE_QUANTA[self]


_PAUSE_QUANTA = {
    Speed.G10: 67,
    Speed.G25: 80,
    Speed.G40: 118,
    Speed.G50: 147,
    Speed.G100: 394,
    Speed.G200: 453,
    Speed.G400: 905,
    Speed.G800: 905,
}
