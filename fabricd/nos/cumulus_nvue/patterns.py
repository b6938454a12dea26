"""NVUE quirks as data: prompts, error replies, the ``nv set`` schema fabricd uses, and what fabricd owns.

``SET_PATHS`` are the NVUE command paths of the pinned grammar (:mod:`.grammar`, each with its source). Grammar:
``<x-id>`` and ``<vid>`` are keys (NVUE accepts lists such as ``0,1,2`` and ranges such as ``24-31`` there and
stores one entry per key), other ``<x>`` are values, ``a-b`` an integer range and ``(x|y)`` alternatives.
"""

from __future__ import annotations

import re

from . import grammar

DEVICE_TYPE = "cumulus_linux"
"""netmiko device_type (a bash login; ``nv`` runs from the shell)."""

SET_PATHS = grammar.SET_PATHS
"""The pinned grammar's paths (:mod:`.grammar`, Cumulus Linux 5.11): the lab simulator accepts exactly these."""

LIST_KEYS = frozenset({"<qos-sp-id>", "<qos-pcp-id>", "<qos-dscp-id>", "<qos-tc-id>", "<vid>"})
"""Key elements that take lists and ranges (``3,4``, ``24-31``): NVUE stores one entry per value."""

OWNED_PREFIXES: tuple[tuple[str, ...], ...] = (("qos",), ("interface", "*", "qos"))
"""Subtrees fabricd manages entirely (``*`` matches any interface): entries the intent lacks are unset."""

ERROR = re.compile(r"^(?:Error|error):|^-bash: |Invalid (?:Command|value)", re.M)
APPLIED = re.compile(r"applied \[rev_id: (\d+)\]")


def shell_prompt(base_prompt: str) -> re.Pattern[str]:
    """The bash prompt at a line start (``admin@leaf4-nvue:mgmt:~$ ``), echo allowed after it."""
    return re.compile(rf"(?m)^{re.escape(base_prompt)}[$#] ?")


RUNNING_CONFIG_MARK = re.compile(r"(?m)^nv set ")
"""What ``nv config show -o commands`` prints for any configured switch: at least one ``nv set`` line. Unverified:
no capture of a factory-default NVUE configuration is at hand, so a switch whose applied configuration is truly
empty would be refused too (it has nothing fabricd could diff against)."""
RUNNING_CONFIG_RULE = "at least one 'nv set' line"
