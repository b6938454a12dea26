"""fabricd.sources.kept: layouts of kept-open files are trusted only while their directories are unchanged and not
racy, are rebuilt after their maximum age or a failed read, never hold configfs files, and stay within the
descriptor budget. Real files in a temporary directory; clocks are injected where a test needs time to pass."""

from __future__ import annotations

import os
import time
from pathlib import Path

from fabricd.readers.rdma import read_rdma_device
from fabricd.sources.kept import MAX_AGE_NS, RACY_NS, FdBudget, KeptFiles, LayoutBuilder, Layouts, on_configfs
from fabricd.sources.kept_files import RdmaFiles

LATER = 10_000_000_000


def make_dir(tmp_path: Path, n: int = 3) -> Path:
    d = tmp_path / "counters"
    d.mkdir()
    for i in range(n):
        (d / f"c{i}").write_text(f"{i}\n")
    return d


def build(d: Path, now_ns: int, budget: FdBudget | None = None) -> KeptFiles | None:
    b = LayoutBuilder(now_ns)
    names = b.listdir(str(d))
    assert names is not None
    for name in names:
        b.add(f"{d}/{name}")
    return b.build(budget or FdBudget(100))


def test_reads_every_file_in_order_and_sees_in_place_writes(tmp_path: Path) -> None:
    d = make_dir(tmp_path)
    kept = build(d, time.time_ns() + LATER)
    assert kept is not None
    assert kept.read() == [b"0\n", b"1\n", b"2\n"]
    (d / "c1").write_text("1000\n")  # same inode
    assert kept.read() == [b"0\n", b"1000\n", b"2\n"]
    assert kept.fresh(time.time_ns() + LATER)
    kept.close()


def test_files_longer_than_the_read_size_are_read_whole_and_grow_in_place(tmp_path: Path) -> None:
    d = make_dir(tmp_path)
    texts = ["x" * 255 + "\n", "y" * 70_000 + "\n", "z" * 1000 + "\n"]  # at, far above and just above one read size
    for i, text in enumerate(texts):
        (d / f"c{i}").write_text(text)
    kept = build(d, time.time_ns() + LATER)
    assert kept is not None
    for _ in range(2):  # the first read learns each size, the second reads each file at once
        assert kept.read() == [t.encode() for t in texts]
    (d / "c0").write_text("w" * 5000 + "\n")  # grows past what was learnt
    assert kept.read() == [b"w" * 5000 + b"\n", texts[1].encode(), texts[2].encode()]
    kept.close()


def test_racy_directory_is_not_trusted(tmp_path: Path) -> None:
    d = make_dir(tmp_path)
    b = LayoutBuilder(time.time_ns())
    assert b.listdir(str(d)) is None  # changed just now: a later change could keep the same stamp
    b.add(f"{d}/c0")
    assert b.build(FdBudget(10)) is None
    kept = build(d, time.time_ns() + RACY_NS + 1_000_000_000)
    assert kept is not None
    kept.close()


def test_directory_change_makes_layout_stale(tmp_path: Path) -> None:
    d = make_dir(tmp_path)
    kept = build(d, time.time_ns() + LATER)
    assert kept is not None
    time.sleep(0.03)
    (d / "c3").write_text("3\n")  # a new counter
    assert not kept.fresh(time.time_ns() + LATER)
    kept.close()


def test_rename_over_and_mtime_restored_is_still_seen(tmp_path: Path) -> None:
    """A file replaced by rename with the directory's mtime set back (rsync -a, cp -p): ctime still moves."""
    d = make_dir(tmp_path)
    st = os.stat(d)
    kept = build(d, time.time_ns() + LATER)
    assert kept is not None
    time.sleep(0.03)
    (d / ".tmp").write_text("77\n")
    os.replace(d / ".tmp", d / "c0")
    os.utime(d, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert os.stat(d).st_mtime_ns == st.st_mtime_ns
    assert not kept.fresh(time.time_ns() + LATER)
    kept.close()


def test_max_age_forces_a_rebuild(tmp_path: Path) -> None:
    d = make_dir(tmp_path)
    now = time.time_ns() + LATER
    kept = build(d, now)
    assert kept is not None
    assert kept.fresh(now + MAX_AGE_NS)
    assert not kept.fresh(now + MAX_AGE_NS + 1)
    kept.close()


def test_failed_read_returns_none(tmp_path: Path) -> None:
    d = make_dir(tmp_path)
    kept = build(d, time.time_ns() + LATER)
    assert kept is not None
    dir_fd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.dup2(dir_fd, kept.fds[1])  # that descriptor now reads a directory: EISDIR, like ENODEV on sysfs
    finally:
        os.close(dir_fd)
    assert kept.read() is None
    kept.close()


def test_budget_bounds_descriptors_and_is_returned(tmp_path: Path) -> None:
    d = make_dir(tmp_path, 5)
    budget = FdBudget(6)
    kept = build(d, time.time_ns() + LATER, budget)
    assert kept is not None and budget.used == 5
    assert build(d, time.time_ns() + LATER, budget) is None  # 5 more would pass 6
    assert budget.used == 5
    kept.close()
    assert budget.used == 0
    assert FdBudget().limit > 0


def test_configfs_files_are_never_kept(tmp_path: Path) -> None:
    cm = tmp_path / "sys/kernel/config/rdma_cm/mlx5_0/ports/1"
    cm.mkdir(parents=True)
    (cm / "default_roce_tos").write_text("106\n")
    assert on_configfs(f"{cm}/default_roce_tos") and not on_configfs(f"{tmp_path}/sys/class/net/eth0/mtu")
    b = LayoutBuilder(time.time_ns() + LATER)
    assert b.watch(str(cm))
    b.add(f"{cm}/default_roce_tos")
    assert b.build(FdBudget(10)) is None  # configfs serves a descriptor's first read again: reopen every time


def test_layouts_drop_gone_keys_and_stale_entries(tmp_path: Path) -> None:
    d = make_dir(tmp_path)
    budget = FdBudget(100)
    layouts: Layouts[str, str] = Layouts(clock=lambda: time.time_ns() + LATER, budget=budget)
    kept = build(d, layouts.clock(), budget)
    assert kept is not None
    layouts.put("a", kept, "layout")
    assert layouts.get("a", layouts.clock()) == (kept, "layout")
    layouts.keep_only({"b"})
    assert len(layouts) == 0 and budget.used == 0


def test_rdma_files_disabled_or_without_budget_read_the_slow_way(tmp_path: Path) -> None:
    dev = tmp_path / "sys/class/infiniband/mlx5_0/ports/1/counters"
    dev.mkdir(parents=True)
    (dev / "port_rcv_data").write_text("10\n")
    (dev.parent / "state").write_text("4: ACTIVE\n")
    clock = lambda: time.time_ns() + LATER  # noqa: E731
    assert RdmaFiles(tmp_path, Layouts(clock=clock, enabled=False)).read("mlx5_0") is None
    assert RdmaFiles(tmp_path, Layouts(clock=clock, budget=FdBudget(0))).read("mlx5_0") is None
    values = RdmaFiles(tmp_path, Layouts(clock=clock, budget=FdBudget(10))).read("mlx5_0")
    assert values is not None
    port = values.layout.ports[0]
    slow = read_rdma_device(tmp_path, "mlx5_0").ports[0]
    assert {k: values.ints[i] * m for k, i, m in port.meanings} == slow.normalised()
    assert values.text(port.state) == "4: ACTIVE" and values.text(port.rate) is None
