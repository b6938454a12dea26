"""Diff line counts the right way round (issue 25, part 7): NVUE's `nv config diff` is YAML whose `- set:` item adds
the tree under it (the demo said `diff spine2 (+0 -1)` for about 230 added lines); unified diffs count +/- lines.
The NVUE text comes from fabricd-lab's NVUE simulator, which prints `nv config diff` as NVUE does."""

from __future__ import annotations

from fabricd.deploy.diffstat import diff_counts, diff_signs
from fabricd.model import Platform
from fabricd_lab.device import DeviceSpec
from fabricd_lab.nvue import NvueSwitch


def _nvue_diff(*commands: str) -> str:
    sw = NvueSwitch(
        DeviceSpec(
            "sw1", Platform.CUMULUS_NVUE, password="x", ports=(("swp1", 400_000_000_000), ("swp2", 400_000_000_000))
        )
    )
    sh = sw.open_shell()
    for c in commands:
        assert sh.handle(c).output == "", c
    return sh.handle("nv config diff").output


def test_nvue_set_block_counts_as_added() -> None:
    diff = _nvue_diff("nv set interface swp1 link mtu 9216", "nv set interface swp2 link mtu 9216")
    lines = diff.splitlines()
    assert lines[0] == "- set:"
    assert diff_counts("cumulus_nvue", diff) == (len(lines) - 1, 0)
    assert diff_signs("cumulus_nvue", diff)[0] == ("", "- set:")
    # the same text read as a unified diff is what the demo printed before: one removal, nothing added
    assert diff_counts("sonic", diff) == (0, 1)


def test_nvue_unset_block_counts_as_removed() -> None:
    text = "- set:\n    interface:\n      swp1: {}\n- unset:\n    qos:\n      roce: null\n"
    assert diff_counts("cumulus_nvue", text) == (2, 2)
    assert [s for s, _ in diff_signs("cumulus_nvue", text)] == ["", "+", "+", "", "-", "-"]


def test_unified_diffs_count_prefixes() -> None:
    text = "+mtu 9216\n-mtu 1500\n interface Ethernet1\n+  priority-flow-control on\n"
    assert diff_counts("arista_eos", text) == (2, 1)
