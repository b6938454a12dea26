"""Cisco NX-OS quirks as data: prompts, error replies, volatile lines and the config sections fabricd owns.

Sources: Cisco Nexus 9000 NX-OS QoS and System Management configuration guides (``checkpoint``, ``rollback
running-config checkpoint``) and the captured configs (fixtures/nxos/running-config-*.txt).
"""

from __future__ import annotations

import re

from fabricd.platforms.textcfg import Ownership

DEVICE_TYPE = "cisco_nxos"
"""netmiko device_type."""

CHECKPOINT = "fabricd-last"
"""Checkpoint name holding the config from before the last push."""

ERROR = re.compile(
    r"^(?:% ?(?:Invalid|Incomplete|Ambiguous|Copy failed|Error)|ERROR:|Error:|.*Rollback (?:failed|Patch Failed))",
    re.M,
)
"""Replies that mean a line or command was rejected (``% Invalid command at '^' marker.``, ``ERROR: ...``)."""

ROLLBACK_OK = re.compile(r"Rollback completed successfully")

VOLATILE = re.compile(r"^!(?:Time|Running configuration last done at):.*$", re.M)
"""Header lines of ``show running-config`` that change without a config change."""


def config_prompt(hostname: str) -> re.Pattern[str]:
    """Any exec or config prompt of this host at a line start (NX-OS prints ``host(config-if)# ``)."""
    return re.compile(rf"(?m)^{re.escape(hostname)}(?:\([^)\n]*\))?# ?")


OWNERSHIP = Ownership(
    owned=tuple(
        re.compile(p)
        for p in (
            r"^class-map type qos ",
            r"^policy-map type (?:qos|queuing|network-qos) ",
            r"^priority-flow-control ",
            r"^system qos$",
        )
    ),
    owned_child=tuple(
        re.compile(p)
        for p in (
            r"^mtu ",
            r"^priority-flow-control ",
            r"^service-policy type ",
            r"^switchport access vlan ",
            r"^switchport trunk allowed vlan ",
        )
    ),
    single_valued=tuple(
        re.compile(p)
        for p in (
            r"^mtu(?= )",
            r"^priority-flow-control mode(?= )",
            r"^priority-flow-control watch-dog-interval(?= )",
            r"^priority-flow-control watch-dog shutdown-multiplier(?= )",
            r"^priority-flow-control watch-dog interval(?= )",
            r"^priority-flow-control watch-dog interface-multiplier(?= )",
            r"^priority-flow-control (?:auto|fixed)-restore multiplier(?= )",
            r"^service-policy type qos input(?= )",
            r"^service-policy type queuing (?:input|output)(?= )",
            r"^service-policy type network-qos(?= )",
            r"^bandwidth(?= )",
            r"^random-detect(?= )",
            r"^set qos-group(?= )",
            r"^pause pfc-cos(?= )",
            r"^switchport access vlan(?= )",
            r"^switchport trunk allowed vlan(?= )",
            r"^description(?= )",
            r"^name(?= )",
        )
    ),
)


RUNNING_CONFIG_MARK = re.compile(r"(?m)^version \S+")
"""What every full ``show running-config`` of NX-OS prints, so a read without it is a failed read, not an empty
config: the header's ``version <release>`` line (after ``!Command:`` and ``!Time:``). Source: Cisco Nexus 9000
Series NX-OS Fundamentals Configuration Guide, Release 10.3(x), "Verifying the Device Configuration" (sample output
``version 10.3(2) Bios:version 07.69``), and public captures of 7.0(3)I4(7) and 9.3(2) that print it the same way."""
RUNNING_CONFIG_RULE = "the 'version <release>' header line every NX-OS running config prints"
