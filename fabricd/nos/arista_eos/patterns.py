"""Arista EOS quirks as data: prompts, error replies, and the config sections fabricd owns.

Sources: Arista EOS User Manual (configuration sessions, ``configure checkpoint``), AVD's ``qos-profiles.j2`` and
``priority-flow-control.j2``, and the captured running-config
(fixtures/eos/running-config-qos-profile-pfc-ecn-avd-generated.txt).
"""

from __future__ import annotations

import re

from fabricd.platforms.textcfg import Ownership

DEVICE_TYPE = "arista_eos"
"""netmiko device_type."""

SESSION_NAME = "fabricd"
"""Name of the configuration session a push edits (EOS shows its first 6 characters in the prompt)."""

CHECKPOINT = "fabricd-last"
"""``configure checkpoint save`` name holding the config from before the last push."""

ERROR = re.compile(
    r"^% ?(?:Invalid input|Incomplete command|Ambiguous command|Error|Failed|Unavailable|Cannot|"
    r"Session \S+ (?:does not exist|is not pending|has)|Checkpoint \S+ does not exist|Not in a configuration)",
    re.M,
)
"""Replies that mean a line or command was rejected."""


def config_prompt(hostname: str) -> re.Pattern[str]:
    """Any exec or config prompt of this host, at a line start (an echo may follow it on the same line)."""
    return re.compile(rf"(?m)^{re.escape(hostname)}(?:\([^)\n]*\))?[#>]")


SESSION_ROW = re.compile(rf"(?m)^[ *]\s*(?P<name>{SESSION_NAME}-\S+)\s+(?P<state>\S+)")
"""A row of ``show configuration sessions`` naming one of fabricd's sessions and its state."""

OWNERSHIP = Ownership(
    owned=tuple(
        re.compile(p)
        for p in (
            r"^qos profile ",
            r"^qos map ",
            r"^qos rewrite ",
            r"^priority-flow-control ",
            r"^dcbx application ",
            r"^policy-map type qos ",
            r"^class-map type qos ",
        )
    ),
    owned_child=tuple(
        re.compile(p)
        for p in (
            r"^mtu ",
            r"^l2 mtu ",
            r"^service-profile ",
            r"^qos trust",
            r"^qos (?:dscp|cos) ",
            r"^priority-flow-control",
            r"^tx-queue ",
            r"^uc-tx-queue ",
            r"^service-policy type qos ",
            r"^switchport access vlan ",
            r"^switchport trunk allowed vlan ",
            r"^dcbx mode ",
        )
    ),
    single_valued=tuple(
        re.compile(p)
        for p in (
            r"^mtu(?= )",
            r"^l2 mtu(?= )",
            r"^service-profile(?= )",
            r"^qos trust(?= )",
            r"^qos (?:dscp|cos)(?= )",
            r"^priority-flow-control(?= (?:on|off)$)",
            r"^priority-flow-control priority \d(?= )",
            r"^priority-flow-control pause watchdog (?:default (?:timeout|polling-interval|recovery-time)|action)(?= )",
            r"^priority-flow-control pause watchdog port (?:action|timer)(?= )",
            r"^bandwidth (?:guaranteed )?percent(?= )",
            r"^random-detect ecn minimum-threshold",
            r"^switchport access vlan(?= )",
            r"^switchport trunk allowed vlan(?= )",
            r"^shape rate(?= )",
            r"^description(?= )",
            r"^name(?= )",
        )
    ),
)


RUNNING_CONFIG_MARK = re.compile(r"(?m)^! device: \S+ \(")
"""What every ``show running-config`` of EOS prints, so a read without it is a failed read, not an empty config:
the header's ``! device: <hostname> (<model>, EOS-<release>)`` line, after ``! Command: show running-config``.
Source: public captures of vEOS-lab and cEOSLab 4.27 to 4.33 (``! device: leaf1 (vEOS-lab, EOS-4.29.2F)``)."""
RUNNING_CONFIG_RULE = "the '! device: <hostname> (<model>, EOS-<release>)' header line every EOS running config prints"
