"""The watchdog's cheap poll path gives the detector the same story as reading every port on every poll.

With the detector's ``settled`` (what the runner passes), :class:`~fabricd.watchdog.sources.HostSource` stamps the
statistics files in one sweep, visits only ports whose file changed or whose channels are not settled, keeps back
samples that would only move an idle channel's time (handing them over, with their own time, before the next sample
that matters), and learns link-file changes from inotify instead of ``stat``. These tests drive one replay root
through random storms, bursts, traffic, link flaps (renamed and written in place), counter resets, torn files,
vanished files and re-plans, read it with both paths at the same simulated times (regular polls and deadline
reads), and require the same events and the same detector state. Time is simulated; files are real.
"""

from __future__ import annotations

import contextlib
import os
import random
from pathlib import Path

import pytest

from fabricd.sources import notify
from fabricd.watchdog import changes
from fabricd.watchdog.detector import Detector
from fabricd.watchdog.params import WatchdogParams
from fabricd.watchdog.sources import HostSource, PollEvery
from fabricd.watchdog.types import Event
from fabricd_lab.replay import ReplayHost, ReplayNic, add_sysfs_files

D, R, P = 0.2, 0.2, 0.05


def _event(ev: Event) -> tuple[object, ...]:
    return (ev.event, ev.interface, ev.priority, ev.direction, ev.ts, ev.paused_ms, ev.storm_duration_s)


def _state(det: Detector) -> dict[object, tuple[object, ...]]:
    out: dict[object, tuple[object, ...]] = {}
    for key, st in det.channels.items():
        prev = st.prev
        assert prev is not None
        out[key] = (
            st.active,
            st.detected,
            st.restored,
            st.run_open,
            round(st.run_s, 9),
            round(st.quiet_s, 9),
            st.run_full,
            round(st.win_dt, 9),
            prev.t,
            prev.pause_s,
            prev.frames,
            prev.progress,
            prev.link_up,
            prev.link_epoch,
            det.due.get(key),
        )
    return out


class _Host:
    """A replay host whose counters and link files a test changes between polls."""

    def __init__(self, root: Path, rng: random.Random) -> None:
        self.nics = [ReplayNic(f"eth{i}", f"mlx5_{i}", channels=0) for i in range(5)]
        self.nics.append(ReplayNic("eth5", "mlx5_5", channels=0, pfc_priorities=(3, 4)))
        self.root = root
        self.host = ReplayHost(root, self.nics)
        self.host.build()
        self.rng = rng
        self.carrier = {n.interface: 0 for n in self.nics}
        self.down: dict[str, int] = {}
        self.run: dict[str, tuple[str, int, int]] = {}  # interface -> (direction, priority, polls left)
        self.held: list[int] = []  # another reader's descriptors: a replaced file stays alive while one is open
        for n in self.nics:
            self._link(n.interface, up=True, in_place=False)

    def _link(self, iface: str, *, up: bool, in_place: bool) -> None:
        files = {
            f"sys/class/net/{iface}/operstate": "up" if up else "down",
            f"sys/class/net/{iface}/carrier_changes": str(self.carrier[iface]),
        }
        if in_place:
            for rel, text in files.items():
                (self.root / rel).write_text(text + "\n")
        else:
            add_sysfs_files(self.root, files)

    def step(self, dt: float) -> None:
        rng = self.rng
        torn: list[str] = []
        gone: list[str] = []
        for nic in self.nics:
            iface = nic.interface
            self._pause_and_traffic(nic, dt)
            self._carrier(iface)
            if rng.random() < 0.01:
                self.host.reset(iface)
            if rng.random() < 0.01:
                torn.append(iface)
            elif rng.random() < 0.005:
                gone.append(iface)
        self._files(torn, gone)

    def _pause_and_traffic(self, nic: ReplayNic, dt: float) -> None:
        rng, iface = self.rng, nic.interface
        r = rng.random()
        if iface not in self.run and r < 0.06:  # a storm (several polls) or a burst (one or two)
            prio = rng.choice(nic.pfc_priorities)
            self.run[iface] = (rng.choice(("rx", "tx")), prio, rng.choice((1, 2, 3, 6, 9)))
        if iface in self.run:
            d, prio, left = self.run[iface]
            share = 1.0 if rng.random() < 0.8 else rng.uniform(0.2, 0.95)
            self.host.pause(iface, prio, direction=d, frames=int(dt * share * 2e4), duration_us=int(dt * share * 1e6))
            self.run[iface] = (d, prio, left - 1)
            if left <= 1:
                del self.run[iface]
        if rng.random() < 0.15:
            self.host.traffic(
                iface, rng.choice(nic.pfc_priorities), direction=rng.choice(("rx", "tx")), packets=rng.randint(1, 50)
            )

    def _carrier(self, iface: str) -> None:
        rng = self.rng
        if iface in self.down:
            self.down[iface] -= 1
            if self.down[iface] <= 0:
                del self.down[iface]
                self.carrier[iface] += 1
                self._link(iface, up=True, in_place=rng.random() < 0.5)
        elif rng.random() < 0.02:
            self.down[iface] = rng.randint(1, 6)
            self.carrier[iface] += 1
            self._link(iface, up=False, in_place=rng.random() < 0.5)

    def _files(self, torn: list[str], gone: list[str]) -> None:
        rng = self.rng
        if self.held and rng.random() < 0.3:
            os.close(self.held.pop(0))
        if rng.random() < 0.2:
            with contextlib.suppress(FileNotFoundError):  # vanished this poll
                self.held.append(os.open(self.root / "ethtool" / f"eth{rng.randint(0, 5)}.stats", os.O_RDONLY))
        self.host.flush()
        for iface in torn:  # written in place without its pause-duration lines: those channels skip this poll
            path = self.root / "ethtool" / f"{iface}.stats"
            text = path.read_text()
            path.write_text("".join(line + "\n" for line in text.splitlines() if "pause_duration" not in line))
            self.host.set(iface, "rx_prio3_pause_duration", self.host.get(iface, "rx_prio3_pause_duration"))
        for iface in gone:
            os.unlink(self.root / "ethtool" / f"{iface}.stats")
            self.host.set(iface, "rx_prio3_pause", self.host.get(iface, "rx_prio3_pause"))


@pytest.mark.slow  # several seconds: make test runs it, make unit leaves it out
@pytest.mark.parametrize("inotify", [True, False], ids=["link-watch", "link-stat"])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_settled_path_gives_the_detector_the_same_story(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, inotify: bool, seed: int
) -> None:
    if not inotify:
        monkeypatch.setattr(changes, "notifies", lambda path: False)
    elif not notify.notifies(str(tmp_path)):
        pytest.skip(f"{tmp_path} is not on a local file system with inotify")
    rng = random.Random(seed)
    host = _Host(tmp_path, rng)
    params = WatchdogParams(D, R, P)
    every = HostSource(tmp_path, "h", every=PollEvery(drops=10**9, replan=37))
    cheap = HostSource(tmp_path, "h", every=PollEvery(drops=10**9, replan=37))
    det_every, det_cheap = Detector(params), Detector(params)
    got_every: list[tuple[object, ...]] = []
    got_cheap: list[tuple[object, ...]] = []
    now, next_poll = 1.0, 1.0
    deadline_reads = 0
    for _ in range(600):
        if rng.random() < 0.3 and next_poll - now > 0.004:  # a deadline read between polls, of some ports
            read_at = round(now + rng.uniform(0.001, (next_poll - now) / 2), 9)
            host.step(read_at - now)
            now = read_at
            ports = rng.sample([n.interface for n in host.nics], rng.randint(1, 3))
            a = every.poll_ports(now, ports)
            b = cheap.poll_ports(now, ports, det_cheap.settled)
            deadline_reads += 1
        else:
            host.step(next_poll - now)
            now = next_poll
            next_poll = round(next_poll + P, 9)
            a = every.poll(now)
            b = cheap.poll(now, det_cheap.settled)
        assert a.problems == b.problems
        for s in a.pause:
            ev = det_every.observe(s, wall=s.t)
            if ev is not None:
                got_every.append(_event(ev))
        for s in b.pause:
            ev = det_cheap.observe(s, wall=s.t)
            if ev is not None:
                got_cheap.append(_event(ev))
        assert got_cheap == got_every
        assert det_cheap.due == det_every.due
    # hand every kept-back observation over (a read of every port where nothing counts as settled), then the
    # states must match exactly
    t = next_poll
    everything = [n.interface for n in host.nics]
    for s in every.poll_ports(t, everything).pause:
        det_every.observe(s, wall=s.t)
    for s in cheap.poll_ports(t, everything, lambda key, pause_s, frames: False).pause:
        det_cheap.observe(s, wall=s.t)
    assert _state(det_cheap) == _state(det_every)
    kinds = {e[0] for e in got_every}
    assert {"storm_detected", "storm_restored"} <= {getattr(k, "value", k) for k in kinds}
    assert deadline_reads > 50
    every.close()
    cheap.close()
    for fd in host.held:
        os.close(fd)


def test_settled_poll_of_an_unchanged_root_gives_nothing_and_a_change_gives_the_kept_back_sample_first(
    tmp_path: Path,
) -> None:
    host = ReplayHost(tmp_path, [ReplayNic("eth0", "mlx5_0", channels=0), ReplayNic("eth1", "mlx5_1", channels=0)])
    host.build()
    det = Detector(WatchdogParams(D, R, P))
    src = HostSource(tmp_path, "h", every=PollEvery(drops=10**9))
    for t in (1.0, 1.05):  # first sight of each channel, then its settled state
        for s in src.poll(t, det.settled).pause:
            det.observe(s, wall=t)
    quiet = [src.poll(t, det.settled) for t in (1.10, 1.15, 1.20)]
    assert [b.pause for b in quiet] == [[], [], []]
    host.pause("eth1", 3, direction="tx", frames=100, duration_us=40_000)
    host.flush()
    batch = src.poll(1.25, det.settled)
    assert [(s.key.interface, s.key.direction.value, s.t, s.pause_s) for s in batch.pause] == [
        ("eth1", "tx", 1.20, 0.0),  # the observation kept back at the last poll that found the file unchanged
        ("eth1", "tx", 1.25, 0.04),
    ]
    src.close()


def test_dir_watch_reports_in_place_writes_renames_and_a_directory_that_goes(tmp_path: Path) -> None:
    if not notify.notifies(str(tmp_path)):
        pytest.skip(f"{tmp_path} is not on a local file system with inotify")
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    watch = notify.Watch(notify.DIR_CHANGES)
    try:
        assert watch.add("a", str(a)) and watch.add("b", str(b))
        assert watch.changed() == set()
        (a / "operstate").write_text("up\n")
        assert watch.changed() == {"a"}
        add_sysfs_files(tmp_path, {"b/carrier_changes": "3"})  # written to a temporary file, then renamed
        assert watch.changed() == {"b"}
        assert watch.changed() == set()
        (a / "operstate").unlink()
        a.rmdir()
        assert watch.changed() == {"a"}
        assert not watch.watching("a") and watch.watching("b")
        assert not watch.add("a", str(a))  # gone: the caller falls back to reading the files
    finally:
        watch.close()


def test_filesystem_of_takes_the_last_longest_mount_and_unescapes(tmp_path: Path) -> None:
    info = tmp_path / "mountinfo"
    info.write_text(
        "27 1 254:0 / / rw,relatime - ext4 /dev/vda rw\n"
        "25 24 0:23 / /dev/shm rw,relatime - tmpfs tmpfs rw\n"
        "30 24 0:27 / /dev/shm rw,relatime - nfs4 server:/x rw\n"
        "31 27 0:28 / /srv/with\\040space rw - tmpfs tmpfs rw\n"
    )
    assert notify.filesystem_of("/dev/shm/replay", str(info)) == "nfs4"
    assert notify.filesystem_of("/dev/shmx", str(info)) == "ext4"
    assert notify.filesystem_of("/srv/with space/r", str(info)) == "tmpfs"
    assert notify.filesystem_of("/x", str(tmp_path / "missing")) is None
