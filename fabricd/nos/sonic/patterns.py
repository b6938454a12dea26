"""SONiC quirks as data: prompts, error replies, the CONFIG_DB tables fabricd owns, and GCU's success lines.

Sources: sonic-net/sonic-utilities ``config/main.py`` (apply-patch, checkpoint, rollback messages),
``generic_config_updater`` (JSON patch, empty-table rule).
"""

from __future__ import annotations

import re

DEVICE_TYPE = "linux"
"""netmiko device_type: SONiC's admin login is a bash shell (``edgecore_sonic`` is the same LinuxSSH class)."""

CHECKPOINT = "fabricd-last"
PATCH_FILE = "/tmp/fabricd-patch.json"
"""Where the JSON patch is written on the switch before ``config apply-patch``."""

CHUNK_CHARS = 3000
"""Base64 characters per ``echo ... | base64 -d >> FILE`` line."""

ERROR = re.compile(
    r"^(?:Error: |Failed to |-bash: |Root privileges are required|Usage: |sonic-cfggen: error|base64: )", re.M
)
APPLY_OK = re.compile(r"^Patch applied successfully\.", re.M)
CHECKPOINT_OK = re.compile(r"^Checkpoint created successfully\.", re.M)
ROLLBACK_OK = re.compile(r"^Config rolled back successfully\.", re.M)


def shell_prompt(base_prompt: str) -> re.Pattern[str]:
    """The bash prompt at a line start, echo allowed after it (``admin@leaf1-sonic:~$ ``)."""
    return re.compile(rf"(?m)^{re.escape(base_prompt)}[$#] ?")


OWNED_TABLES = frozenset(
    {
        "DSCP_TO_TC_MAP",
        "TC_TO_QUEUE_MAP",
        "TC_TO_PRIORITY_GROUP_MAP",
        "PFC_PRIORITY_TO_PRIORITY_GROUP_MAP",
        "MAP_PFC_PRIORITY_TO_QUEUE",
        "PORT_QOS_MAP",
        "WRED_PROFILE",
        "QUEUE",
        "SCHEDULER",
        "BUFFER_PROFILE",
        "BUFFER_PG",
        "BUFFER_QUEUE",
        "CABLE_LENGTH",
        "PFC_WD",
    }
)
"""QoS tables fabricd manages entirely: keys the intent lacks are removed (with replace)."""


RUNNING_CONFIG_MARK = re.compile(r'"DEVICE_METADATA"\s*:')
"""What every ``show runningconfiguration all`` of SONiC prints, so a read without it is a failed read, not an
empty config: the CONFIG_DB ``DEVICE_METADATA`` table, which holds the switch's hostname, HWSKU and MAC
(``DEVICE_METADATA|localhost``, sonic-yang-models ``sonic-device_metadata.yang``) and is written at first boot."""
RUNNING_CONFIG_RULE = "the DEVICE_METADATA table every SONiC CONFIG_DB holds (hostname, hwsku, mac)"
