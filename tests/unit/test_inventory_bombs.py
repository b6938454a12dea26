"""Hostile inventories (issue 23 part 3): a YAML alias bomb (billion laughs, ~1.5 kB) in a group name, as a complex
mapping key and in an unused group; an alias cycle; 10^6 hosts; a byte limit. Each is refused with a located problem,
and no message ever prints an aliased structure. Memory is measured with tracemalloc around the load (the
bound is generous: the point is that nothing expands; before the fix the group-name bomb took 1.4 GB)."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import pytest

from fabricd.errors import InventoryError, UsageError
from fabricd.inventory import load_inventory

REPO = Path(__file__).resolve().parents[2]
LAB = REPO / "inventory" / "lab"
LEVELS = 9
WIDTH = 9
MAX_PEAK_BYTES = 150 * 1024 * 1024


def bomb(indent: str, first: str = "- ") -> list[str]:
    """The anchors of a billion-laughs bomb as list items: &a0 is 9 strings of 'lol', each next level 9 aliases of
    the one before, so *a8 stands for 9^9 = 387 million strings."""
    lines = [f"{indent}{first}&a0 [" + ",".join(['"lolololololol"'] * WIDTH) + "]"]
    for i in range(1, LEVELS):
        lines.append(f"{indent}- &a{i} [" + ",".join([f"*a{i - 1}"] * WIDTH) + "]")
    return lines


def _load_measured(path: Path) -> dict[str, object]:
    """load_inventory(path) under tracemalloc: problem codes, lines and texts, and the peak of traced memory."""
    tracemalloc.start()
    try:
        try:
            load_inventory(path)
            problems: list[dict[str, object]] = []
        except InventoryError as exc:
            problems = [
                {"code": p.code, "line": p.location.line if p.location else None, "text": p.render()}
                for p in exc.problems
            ]
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return {"peak": peak, "problems": problems}


def _write(tmp_path: Path, lines: list[str]) -> Path:
    path = tmp_path / "hosts.yml"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_alias_bomb_in_a_group_name_is_refused_without_expanding(tmp_path: Path) -> None:
    lines = ["groups:", "  gpu: {}", "hosts:", "  - name: h1", "    groups:", *bomb("      ")]
    path = _write(tmp_path, lines)
    assert len(path.read_bytes()) < 2048
    res = _load_measured(path)
    problems = res["problems"]
    assert isinstance(problems, list) and problems
    assert problems[0]["code"] == "INV009"
    assert "the alias *a" in problems[0]["text"] and "FABRICD_INVENTORY_MAX_NODES" in problems[0]["text"]
    assert problems[0]["line"] > 5
    assert sum(len(p["text"]) for p in problems) < 2000  # nothing aliased turned into text
    assert isinstance(res["peak"], int) and res["peak"] < MAX_PEAK_BYTES, res["peak"]


def test_small_aliased_list_as_a_group_name_is_named_not_printed(tmp_path: Path) -> None:
    lines = [
        "defaults:",
        "  host: {}",
        "groups:",
        "  gpu: {}",
        "hosts:",
        "  - name: h1",
        "    groups:",
        *bomb("      ")[:5],
        "      - *a4",
    ]  # 66,430 nodes: under the limit, so the loader goes on
    with pytest.raises(InventoryError) as err:
        load_inventory(_write(tmp_path, lines))
    texts = [p.render() for p in err.value.problems]
    assert any("a group name must be text" in t and "got a list" in t for t in texts), texts
    assert all(len(t) < 500 for t in texts) and not any("lolol" in t for t in texts)


def test_alias_bomb_as_a_complex_key_is_refused_unread(tmp_path: Path) -> None:
    lines = ["groups:", "  ? ", *bomb("    "), "  : {}"]
    path = _write(tmp_path, lines)
    res = _load_measured(path)
    problems = res["problems"]
    assert isinstance(problems, list) and [p["code"] for p in problems] == ["INV008"]
    assert problems[0]["line"] == 3 and "a mapping key must be a plain scalar" in problems[0]["text"]
    assert isinstance(res["peak"], int) and res["peak"] < MAX_PEAK_BYTES, res["peak"]


def test_alias_as_a_key_is_named(tmp_path: Path) -> None:
    lines = ["x:", *bomb("  ")[:3], "groups:", "  ? *a2", "  : {}"]
    with pytest.raises(InventoryError) as err:
        load_inventory(_write(tmp_path, lines))
    key = [p for p in err.value.problems if p.code == "INV008"]
    assert key and key[0].got == "the alias *a2" and key[0].location is not None and key[0].location.line == 6


def test_bomb_and_cycle_in_an_unused_group_are_reported(tmp_path: Path) -> None:
    lines = ["groups:", "  unused_bomb:", "    x:", *bomb("      ")]
    path = _write(tmp_path, lines)
    assert [p["code"] for p in _load_measured(path)["problems"]] == ["INV009"]  # type: ignore[index]
    lines = ["groups:", "  gpu: {}", "  unused_cycle: &c", "    mtu: [*c]"]
    with pytest.raises(InventoryError) as err:
        load_inventory(_write(tmp_path, lines))
    cyc = [p for p in err.value.problems if p.code == "INV022"]
    assert cyc and cyc[0].location is not None and cyc[0].location.line == 4
    assert "*c" in cyc[0].message and "line 3" in cyc[0].message


def test_a_million_hosts_are_refused_by_the_node_limit(tmp_path: Path) -> None:
    path = tmp_path / "hosts.yml"
    path.write_text("hosts:\n" + "".join(f"  - name: h{i}\n" for i in range(10**6)))
    with pytest.raises(InventoryError) as err:
        load_inventory(path)
    [p] = err.value.problems
    assert p.code == "INV009" and p.location is not None and p.location.line < 10**6
    assert "limit of 1,000,000 YAML nodes" in p.message and "FABRICD_INVENTORY_MAX_NODES=2000000" in (p.hint or "")


def test_byte_limit_and_its_option(monkeypatch: pytest.MonkeyPatch) -> None:
    from fabricd.inventory.yamlsrc import Limits
    from fabricd.settings import inventory_limits

    load_inventory(LAB)
    monkeypatch.setenv("FABRICD_INVENTORY_MAX_BYTES", "2000")
    with pytest.raises(InventoryError) as err:
        load_inventory(LAB)
    p = err.value.problems[0]
    assert p.code == "INV009" and "FABRICD_INVENTORY_MAX_BYTES=4000" in (p.hint or "")
    assert p.location is not None and p.location.file is not None
    monkeypatch.setenv("FABRICD_INVENTORY_MAX_BYTES", "lots")
    with pytest.raises(UsageError, match="FABRICD_INVENTORY_MAX_BYTES='lots': expected a positive integer"):
        inventory_limits()
    monkeypatch.delenv("FABRICD_INVENTORY_MAX_BYTES")
    with pytest.raises(InventoryError):
        load_inventory(LAB, Limits(max_nodes=100))


def test_a_large_group_listed_by_many_devices_counts_against_the_node_limit(tmp_path: Path) -> None:
    """66,430 nodes in one group (under the limit), listed by 20 hosts: 1.3 million to validate; refused at the host
    that passes the limit, not walked 20 times."""
    lines = ["groups:", "  anchors:", "    x:", *bomb("      ")[:5], "  big:", "    ports: *a4", "hosts:"]
    lines += [f"  - name: h{i}\n    groups: [big]" for i in range(20)]
    res = _load_measured(_write(tmp_path, lines))
    problems = res["problems"]
    assert isinstance(problems, list)
    inherited = [p for p in problems if p["code"] == "INV009"]
    assert inherited and "inherit" in inherited[0]["text"] and "FABRICD_INVENTORY_MAX_NODES" in inherited[0]["text"]
    assert inherited[0]["line"] == 12 + 2 * 15  # hosts[15]: the 16th host passes 1,000,000
