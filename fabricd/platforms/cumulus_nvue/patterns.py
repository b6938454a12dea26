"""NVUE quirks as data: prompts, error replies, the ``nv set`` schema fabricd uses, and what fabricd owns.

``SET_PATHS`` are NVUE command paths as NVIDIA lists them (CumulusNetworks/docs, Cumulus Linux 5.x
``NVUE-Commands.md`` ``nv list-commands`` example; PFC watchdog from the 5.14 QoS guide, anchors.md §3.4), the same
list render keeps in tests/golden/render/nvue_set_paths.txt, plus ``system hostname``, ``interface ... link
state`` and ``interface ... description`` from the NVUE command reference. Grammar: ``<x-id>`` and ``<vid>`` are keys
(NVUE accepts lists such as ``0,1,2`` and ranges such as ``24-31`` there and stores one entry per key), other
``<x>`` are values, ``a-b`` an integer range and ``(x|y)`` alternatives.
"""

from __future__ import annotations

import re

DEVICE_TYPE = "cumulus_linux"
"""netmiko device_type (a bash login; ``nv`` runs from the shell)."""

SET_PATHS: tuple[str, ...] = (
    "qos traffic-pool <traffic-pool-id> switch-priority <qos-sp-id>",
    "qos traffic-pool <traffic-pool-id> memory-percent 1-100",
    "qos pfc <profile-id> switch-priority <qos-sp-id>",
    "qos pfc <profile-id> xoff-threshold <value>",
    "qos pfc <profile-id> xon-threshold <value>",
    "qos pfc <profile-id> port-buffer <value>",
    "qos pfc <profile-id> cable-length 1-100000",
    "qos pfc <profile-id> tx (enable|disable)",
    "qos pfc <profile-id> rx (enable|disable)",
    "qos mapping <profile-id> pcp <qos-pcp-id> switch-priority 0-7",
    "qos mapping <profile-id> dscp <qos-dscp-id> switch-priority 0-7",
    "qos mapping <profile-id> port-default-sp 0-7",
    "qos mapping <profile-id> trust (l2|l3|port|both)",
    "qos congestion-control <profile-id> traffic-class <qos-tc-id> min-threshold <value>",
    "qos congestion-control <profile-id> traffic-class <qos-tc-id> max-threshold <value>",
    "qos congestion-control <profile-id> traffic-class <qos-tc-id> probability 0-100",
    "qos congestion-control <profile-id> traffic-class <qos-tc-id> red (enable|disable)",
    "qos congestion-control <profile-id> traffic-class <qos-tc-id> ecn (enable|disable)",
    "qos egress-queue-mapping <profile-id> switch-priority <qos-sp-id> traffic-class 0-7",
    "qos egress-scheduler <profile-id> traffic-class <qos-tc-id> mode (dwrr|strict)",
    "qos egress-scheduler <profile-id> traffic-class <qos-tc-id> bw-percent 0-100",
    "qos pfc-watchdog polling-interval 100-5000",
    "qos pfc-watchdog robustness 1-1000",
    "interface <interface-id> link mtu 552-9216",
    "interface <interface-id> link state (up|down)",
    "interface <interface-id> description <value>",
    "interface <interface-id> bridge domain <domain-id> vlan <vid>",
    "interface <interface-id> bridge domain <domain-id> access (1-4094|auto)",
    "interface <interface-id> qos pfc profile <profile-name>",
    "interface <interface-id> qos pfc-watchdog",
    "bridge domain <domain-id> vlan <vid>",
    "system hostname <value>",
)

LIST_KEYS = frozenset({"<qos-sp-id>", "<qos-pcp-id>", "<qos-dscp-id>", "<qos-tc-id>", "<vid>"})
"""Key elements that take lists and ranges (``3,4``, ``24-31``): NVUE stores one entry per value."""

OWNED_PREFIXES: tuple[tuple[str, ...], ...] = (("qos",), ("interface", "*", "qos"))
"""Subtrees fabricd manages entirely (``*`` matches any interface): entries the intent lacks are unset."""

ERROR = re.compile(r"^(?:Error|error):|^-bash: |Invalid (?:Command|value)", re.M)
APPLIED = re.compile(r"applied \[rev_id: (\d+)\]")


def shell_prompt(base_prompt: str) -> re.Pattern[str]:
    """The bash prompt at a line start (``admin@leaf4-nvue:mgmt:~$ ``), echo allowed after it."""
    return re.compile(rf"(?m)^{re.escape(base_prompt)}[$#] ?")
