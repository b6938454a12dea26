"""The framing step (fabricd/readers/framing.py) over every capture in tests/golden that a parser role reads.

The mutation test (issue 26 part 1): each capture, pasted the way people paste output (a shell or CLI prompt with the
command before it, the command echoed alone, CRLF line ends, trailing spaces, a bare prompt after it, and all of them
at once), parses to exactly the result of the capture as kept. The captures are found by walking the parser-role
registry (fabricd/nos/roles.py): every text capture linked to a role whose parser reads text. A second test holds
that every such parser reads through the framing step, so a new parser cannot skip it.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from fabricd.nos.roles import Role, all_roles, captures_of
from fabricd.readers.ethtool import parse_ethtool_stats
from fabricd.readers.framing import commands, frame, frame_lines, interface_of, is_framed, prompt_command
from fabricd.readers.textparse import TextParseError, split_commands

GOLDEN = Path(__file__).parent

NOT_TEXT = ("sysfs-", "configfs-", "dcb-netlink", "dcb-apptrust-json")
"""Host roles whose input is a sysfs/configfs tree or netlink messages, not a command's text."""


def _resolve(dotted: str) -> Any:
    module, _, attr = dotted.rpartition(".")
    try:
        return getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError):
        return None


def text_parser(role: Role) -> Callable[..., Any] | None:
    """The function that reads the role's command output as text, or None for tree and netlink roles."""
    if role.platform == "host" and role.name.startswith(NOT_TEXT):
        return None
    if role.name.startswith("ethtool-S"):
        return parse_ethtool_stats  # the per-driver roles name normalise(), which takes the parsed names
    parser = _resolve(role.parser)
    return parser if callable(parser) else None


def _switch_parsers() -> dict[Path, Callable[[str], Any]]:
    """Every switch capture as the golden switch test reads it (with its facts' interface, or two parsers)."""
    from test_readers_golden import SWITCH_CAPTURES, switch_parser

    return {path: switch_parser(path) for path in SWITCH_CAPTURES}


def body(path: Path) -> str:
    """The capture without its ``# source:`` header line."""
    text = path.read_text()
    first, _, rest = text.partition("\n")
    return rest if first.startswith("# source") or first.startswith("#source") else text


def _cases() -> list[tuple[str, Path, str, Callable[[str], Any]]]:
    special = _switch_parsers()
    out = []
    for role in all_roles():
        parser = text_parser(role)
        if parser is None:
            continue
        for path in captures_of(role, GOLDEN):
            if not path.is_file():
                continue
            fn = special.get(path, parser)
            command = re.sub(r"\s*\((?:[^()]*|\([^()]*\))*\)", "", role.command)
            command = re.sub(r"<[^>]*>", "IFNAME", command).replace("[", "").replace("]", "").strip()
            out.append((role.id, path, command, fn))
    return out


CASES = _cases()


def _parse(fn: Callable[[str], Any], text: str) -> list[Any]:
    """Parse every ``$ command`` segment of a bundle-style capture with ``fn``; segments another parser reads (a
    capture of two commands) raise TextParseError on the original and are left out by the caller."""
    return [fn(text)]


def _segments(text: str) -> list[str]:
    parts = split_commands(text)
    return [t for _, t in parts] if len(parts) > 1 else [text]


PROMPTS = (
    "[user@host ~]$ {cmd}",
    "[root@node-1 ~]# {cmd}",
    "admin@sonic:~$ {cmd}",
    "root@host:~# {cmd}",
    "cumulus@leaf01:mgmt:~$ {cmd}",
    "switch# {cmd}",
    "leaf-1#{cmd}",
    "$ {cmd}",
)
TRAILING = ("$", "#", "switch#", "switch(config)#", "admin@sonic:~$", "[user@host ~]$")


def mutations(text: str, command: str) -> dict[str, str]:
    lines = text.split("\n")
    out = {f"prompt {p.split('{')[0]!r}": p.format(cmd=command) + "\n" + text for p in PROMPTS}
    out["echoed command"] = command + "\n" + text
    out["prompt, then echo"] = "switch# \n" + command + "\n" + text
    out["CRLF"] = text.replace("\n", "\r\n")
    out["trailing spaces"] = "\n".join(line + "   " if line else line for line in lines)
    for p in TRAILING:
        out[f"trailing prompt {p!r}"] = text.rstrip("\n") + "\n" + p + "\n"
    out["all at once"] = (
        "[user@host ~]$ "
        + command
        + "\r\n"
        + "\r\n".join(line + "  " for line in lines)
        + "\r\n"
        + "[user@host ~]$ \r\n"
    )
    return out


@pytest.mark.parametrize(("role_id", "path", "command", "fn"), CASES, ids=[f"{c[0]}:{c[1].name}" for c in CASES])
def test_pasted_capture_parses_the_same(role_id: str, path: Path, command: str, fn: Callable[[str], Any]) -> None:
    parsed = 0
    for segment in _segments(body(path)):
        try:
            expected = fn(segment)
        except TextParseError:
            continue  # another command's output in a capture of several (read by that command's role)
        parsed += 1
        for name, mutated in mutations(segment, command).items():
            assert fn(mutated) == expected, f"{role_id} {path.name}: {name} changed the result"
    assert parsed, f"{path.name}: no part of the capture parses with {role_id}'s parser"


def test_the_walk_covers_every_kind_of_capture() -> None:
    """Not vacuous: switch show, running config, version, ethtool, perfquery, rdma, dcb and show_gids captures."""
    roles = {c[0] for c in CASES}
    for rid in (
        "sonic/pfc",
        "cisco_nxos/interface",
        "cumulus_nvue/pfcwd",
        "arista_eos/running-config",
        "cisco_nxos/version",
        "host/ethtool-S-mlx5_core",
        "host/perfquery",
        "host/rdma-statistic",
        "host/dcb-ets-text",
        "host/show_gids-text",
    ):
        assert rid in roles, rid
    assert len(CASES) > 60


@pytest.mark.parametrize("role", [r for r in all_roles() if text_parser(r) is not None], ids=lambda r: r.id)
def test_every_text_parser_reads_through_the_framing_step(role: Role) -> None:
    parser = text_parser(role)
    assert parser is not None
    if parser is parse_ethtool_stats:
        return  # frames itself when the text is not the plain name: value layout (its fast path)
    assert is_framed(parser), f"{role.parser} does not read through fabricd.readers.framing (decorate it @framed)"


# -- the framing rules themselves ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "command"),
    [
        ("[leonro@server ~]$ rdma stat show", "rdma stat show"),
        ("[root@nvidiatools-30-workload ~]# show_gids", "show_gids"),
        ("admin@sonic:~$ show pfc counters", "show pfc counters"),
        ("cumulus@switch:~$ nv show interface swp1 qos pfc-watchdog", "nv show interface swp1 qos pfc-watchdog"),
        ("N5K-A# show int e1/47 | b RX", "show int e1/47 | b RX"),
        ("switch(config)#", ""),
        ("$ rdma statistic | grep mlx5_2", "rdma statistic | grep mlx5_2"),
        ("# dcb ets show dev eni1np1", "dcb ets show dev eni1np1"),
        ("$", ""),
        ("#", ""),
    ],
)
def test_prompt_lines(line: str, command: str) -> None:
    assert prompt_command(line) == command


@pytest.mark.parametrize(
    "line",
    [
        "# Port counters: Lid 7 port 1 (CapMask: 0x1400)",  # perfquery's header
        "# source: iproute2 commit ...",
        "! Command: show running-config",
        "interface Ethernet1/1",
        "nv set qos roce mode lossless",
        "Ethernet0 is up",
        "link mlx5_2/1 rx_write_requests 0",
        "   0 CRC/FCS  0 no buffer",
    ],
)
def test_output_lines_are_not_prompts(line: str) -> None:
    assert prompt_command(line) is None


def test_pager_marks_backspaces_and_ansi_are_removed() -> None:
    text = (
        "Port Rx  PFC0\n--------  ----\nEthernet0  1\n --More-- \b\b\b\b\b\b\b\b\b\b          \b\b\b\b\b\b\b\b\b\b"
        "Ethernet4  2\n--More--\nEthernet8  \x1b[1m3\x1b[0m\n"
    )
    assert frame(text) == "Port Rx  PFC0\n--------  ----\nEthernet0  1\nEthernet4  2\nEthernet8  3\n"
    # the numbers stay those of the text given, though a pager-only line is dropped
    assert [n for n, _ in frame_lines(text)][-3:] == [4, 6, 7]


def test_tabs_expand_to_terminal_columns() -> None:
    assert frame("DEV\tPORT\nmlx5_0\t1\n") == "DEV     PORT\nmlx5_0  1\n"


def test_commands_and_interface_of_a_capture() -> None:
    text = "cumulus@switch:~$ nv show interface swp1 qos pfc-watchdog\nstate  enabled\ncumulus@switch:~$\n"
    assert commands(text) == ["nv show interface swp1 qos pfc-watchdog"]
    assert interface_of(text) == "swp1"
    assert interface_of("N5K-A# show int e1/47 | b RX\n  RX\n") == "e1/47"
    assert interface_of("switch# show interface priority-flow-control\n") is None


def test_framing_is_idempotent_on_every_capture() -> None:
    for _, path, _, _ in CASES:
        once = frame(path.read_text())
        assert frame(once) == once, path.name


def test_an_echoed_command_only_at_the_start() -> None:
    """A command-looking line inside the output is output (only the first line can be an echo)."""
    text = "show pfc counters\nPort Rx\nshow something\n"
    assert frame(text) == "\nPort Rx\nshow something\n"
