"""`fabricd lab drive ... buffer|headroom --bytes N` raises the watermarks the SONiC simulator prints (the lab
daemon's control handler on a real simulator object, no daemon process needed)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from fabricd.model import Platform
from fabricd.nos.sonic.watermark import parse_pg_watermark_headroom, parse_queue_watermark_unicast
from fabricd_lab.daemon import _handle
from fabricd_lab.device import DeviceSpec
from fabricd_lab.sonic import SonicSwitch


@dataclass
class _Lab:
    switches: dict[str, SonicSwitch] = field(default_factory=dict)


def test_drive_headroom_and_buffer() -> None:
    sw = SonicSwitch(DeviceSpec("leaf1", Platform.SONIC, password="x", ports=(("Ethernet0", 400 * 10**9),)))
    lab: Any = _Lab({"leaf1": sw})  # _handle reads only .switches
    for action, size in (("headroom", 60_000), ("headroom", 40_000), ("buffer", 1_000_000)):
        assert _handle(
            lab, {"op": "drive", "device": "leaf1", "action": action, "port": "Ethernet0", "priority": 3, "bytes": size}
        )["ok"]
    shell = sw.open_shell()
    pg = parse_pg_watermark_headroom(shell.handle("show priority-group watermark headroom").output).watermarks
    assert {w.index: w.bytes for w in pg} == {**dict.fromkeys(range(8), 0), 3: 60_000}  # a peak, not the last
    q = parse_queue_watermark_unicast(shell.handle("show queue watermark unicast").output).watermarks
    assert [w.bytes for w in q if w.index == 3] == [1_000_000]
    bad = _handle(lab, {"op": "drive", "device": "leaf1", "action": "headroom", "port": "Ethernet9"})
    assert not bad["ok"] and "no port" in bad["error"]
