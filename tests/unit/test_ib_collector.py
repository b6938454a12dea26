"""The InfiniBand fabric collector (fabricd/collectors/ib.py) in replay mode, over real captures.

No InfiniBand fabric runs here (no HCA, no subnet manager, no ib_umad), so ``ibnetdiscover`` and ``perfquery`` cannot
run for real: these tests read a replay folder built from real captures (treydock/infiniband_exporter's
``ibnetdiscover --ports`` and ``perfquery -x`` outputs, tests/golden/readers/). The command path (subprocesses,
per-call timeouts, a missing executable) is tested in tests/integration/test_export_ib.py with stand-in executables
that print the same captures."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

from fabricd.collectors.core import Family, Registry
from fabricd.collectors.ib import IbCollector, ReplaySource, parse_header
from fabricd.errors import FabricdError

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "readers"
LINKED = 7  # linked ports in the EDR capture (9 lines, 2 without a peer)


def replay_folder(tmp: Path) -> Path:
    """ibnetdiscover.txt and perfquery/*.txt, copied from the golden captures (source header lines included: both
    readers skip them)."""
    (tmp / "perfquery").mkdir(parents=True)
    shutil.copy(GOLDEN / "ibnetdiscover" / "ibnetdiscover-p--treydock-edr.txt", tmp / "ibnetdiscover.txt")
    for path in (GOLDEN / "perfquery").glob("*.txt"):
        shutil.copy(path, tmp / "perfquery" / path.name)
    return tmp


def samples(families: list[Family], name: str) -> dict[tuple[str, ...], float]:
    return {labels: value for f in families if f.spec.name == name for labels, value in f.samples}


def test_replay_exports_each_linked_port_with_rdma_vocabulary(tmp_path: Path) -> None:
    coll = IbCollector(ReplaySource(replay_folder(tmp_path)))
    try:
        fams = Registry([coll]).scrape()
    finally:
        coll.close()
    up = samples(fams, "fabricd_ib_port_up")
    assert len(up) == LINKED
    sw1 = ("ib-i1l1s01", "0x7cfe9003009ce5b0", "1719", "1")
    hca = ("o0002 HCA-1", "0x7cfe9003003b4b96", "133", "1")
    # the captured ports are read; the others have no capture: up 0, never counters of 0
    assert {k for k, v in up.items() if v == 1} == {sw1, hca}
    data = samples(fams, "fabricd_ib_port_data_bytes_total")
    assert data[(*sw1, "tx")] == 36298026860928 * 4  # PortXmitData of the capture, 4-octet units
    assert data[(*hca, "rx")] == 37225401952885 * 4
    assert samples(fams, "fabricd_ib_port_transmit_wait_total")[sw1] == 22730501
    assert samples(fams, "fabricd_ib_port_errors_total")[(*sw1, "symbol")] == 0
    assert samples(fams, "fabricd_ib_port_qp1_dropped_total")[hca] == 0
    assert not [k for k in data if k[:4] == ("ib-i1l1s01", "0x7cfe9003009ce5b0", "1719", "10")]
    info = samples(fams, "fabricd_ib_port_info")
    assert info[(*sw1, "SW", "4x", "EDR", "ib-i1l2s01", "0x7cfe900300b07320", "1516", "1")] == 1
    assert samples(fams, "fabricd_ib_port_rate_bytes_per_second")[sw1] == 100e9 / 8
    assert samples(fams, "fabricd_ib_discovered_ports") == {("CA", "true"): 3, ("SW", "false"): 2, ("SW", "true"): 4}
    assert samples(fams, "fabricd_scrape_collector_success") == {("ib",): 0}  # 4 ports unread: a problem


def test_a_port_with_an_rcv_error_details_block_still_reads_its_extended_block(tmp_path: Path) -> None:
    """The replay holds a ``-E`` (PortRcvErrorDetails) block for LID 1719 port 1 too, in a file read first: the
    extended counters are the ones exported."""
    src = ReplaySource(replay_folder(tmp_path))
    src.discover()
    text = src.perfquery(1719, 1)
    heads = [parse_header(line) for line in text.splitlines() if line.startswith("# ")]
    assert heads.count((1719, 1)) == 2
    coll = IbCollector(src)
    try:
        fams = Registry([coll]).scrape()
    finally:
        coll.close()
    assert (
        samples(fams, "fabricd_ib_port_packets_total")[("ib-i1l1s01", "0x7cfe9003009ce5b0", "1719", "1", "rx")]
        == 32262508468
    )


class CountingSource:
    """Replay answers, counting discoveries and the most calls in flight. Each perfquery is held until ``overlap``
    calls have been in flight at once (or ``wait_s`` has passed): so a collector that runs them concurrently shows
    it however a loaded machine schedules its threads, and one that does not waits ``wait_s`` per call."""

    def __init__(self, inner: ReplaySource, *, overlap: int = 1, wait_s: float = 5.0) -> None:
        self.inner = inner
        self.overlap = overlap
        self.wait_s = wait_s
        self.discoveries = 0
        self.running = 0
        self.peak = 0
        self.lock = threading.Lock()
        self.met = threading.Event()

    def discover(self) -> str:
        self.discoveries += 1
        return self.inner.discover()

    def perfquery(self, lid: int, port: int) -> str:
        with self.lock:
            self.running += 1
            self.peak = max(self.peak, self.running)
            if self.running >= self.overlap:
                self.met.set()
        try:
            self.met.wait(self.wait_s)
            return self.inner.perfquery(lid, port)
        finally:
            with self.lock:
                self.running -= 1


def test_concurrency_is_bounded_and_discovery_is_reused(tmp_path: Path) -> None:
    """Under load: the first two queries wait for each other (up to 5 s), so a peak of 2 shows the collector's
    concurrency, not how the machine scheduled its threads."""
    src = CountingSource(ReplaySource(replay_folder(tmp_path)), overlap=2)
    now = [0.0]
    coll = IbCollector(src, concurrency=2, discover_interval_s=300, clock=lambda: now[0])
    try:
        reg = Registry([coll])
        reg.scrape()
        assert src.peak == 2  # 7 ports, at most 2 at once
        now[0] = 299.0
        reg.scrape()
        assert src.discoveries == 1
        now[0] = 301.0
        reg.scrape()
        assert src.discoveries == 2
    finally:
        coll.close()


def test_a_failed_discovery_keeps_the_last_report(tmp_path: Path) -> None:
    folder = replay_folder(tmp_path)
    coll = IbCollector(ReplaySource(folder), discover_interval_s=0)
    try:
        reg = Registry([coll])
        assert len(samples(reg.scrape(), "fabricd_ib_port_up")) == LINKED
        (folder / "ibnetdiscover.txt").write_text('vendid=0x2c9\nSwitch 36 "S-0002c903"\n')
        again = reg.scrape()
        assert len(samples(again, "fabricd_ib_port_up")) == LINKED
        assert samples(again, "fabricd_scrape_collector_success") == {("ib",): 0}
    finally:
        coll.close()


def test_replay_without_a_capture_for_a_port_names_it(tmp_path: Path) -> None:
    src = ReplaySource(replay_folder(tmp_path))
    src.discover()
    try:
        src.perfquery(1432, 1)
    except FabricdError as exc:
        assert "LID 1432 port 1" in exc.render()
    else:
        raise AssertionError("a port without a capture must fail")


def test_export_ib_replay_cli(tmp_path: Path) -> None:
    """``fabricd export ib --replay DIR --once`` in-process: the exposition as JSON rows, exit 3 naming the ports it
    could not read; a folder without ibnetdiscover.txt is a usage error."""
    import json

    from typer.testing import CliRunner

    from fabricd.cli.main import build_app
    from fabricd.errors import UsageError

    folder = replay_folder(tmp_path / "cap")
    res = CliRunner().invoke(build_app(), ["export", "ib", "--replay", str(folder), "--once", "--output", "json"])
    assert res.exit_code == 3, res.output
    rows = json.loads(res.stdout)
    up = {tuple(r["labels"].values()): r["value"] for r in rows if r["name"] == "fabricd_ib_port_up"}
    assert up[("ib-i1l1s01", "0x7cfe9003009ce5b0", "1719", "1")] == 1
    assert "ib-i4l1s01 (0x506b4b03005c2740) LID 2052 port 35: no perfquery output" in res.stderr
    assert "5 port(s) could not be read" in res.stderr
    (tmp_path / "empty").mkdir()
    res = CliRunner().invoke(build_app(), ["export", "ib", "--replay", str(tmp_path / "empty"), "--once"])
    assert isinstance(res.exception, UsageError) and "no ibnetdiscover.txt" in str(res.exception)
