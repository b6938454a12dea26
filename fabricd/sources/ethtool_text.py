"""The live source of the host's link-health text: ``ethtool -m <if>`` (module EEPROM decoded to DOM lines) and
``ethtool -I --show-fec <if>`` (FEC mode and, where the driver reports them, the IEEE 802.3 corrected/uncorrectable
block counters), run as the ``ethtool`` binary.

Why the binary and not an ioctl: ``ethtool -m`` is the ETHTOOL_GMODULEEEPROM read plus ethtool's SFF-8472 / SFF-8636 /
CMIS decoding (thresholds, pages, per-lane layouts), which fabricd does not re-implement; the text it prints is what
:func:`fabricd.readers.module.read_ethtool_module` reads from captures and support bundles, so the live host and a
replay root go through one parser. Where ethtool prints only a hex dump (an ethtool older than the module), that
reader decodes the DOM bytes the dump holds.
``--show-fec -I`` is the only place some drivers count FEC: ice (E810) reports
``corrected_blocks``/``uncorrectable_blocks`` through the ethtool FEC statistics (the 2024 kernel patch "ice: Implement
driver functionality to dump fec statistics", whose cover letter's output is tests/golden/readers/host/
ethtool-show-fec-ice-cover-letter.txt) and prints none under ``ethtool -S``; mlx5 reports its blocks there too.

Cost and caching: a module EEPROM read goes over the module's I2C bus (tens of milliseconds, more on CMIS modules
with banked pages), and DOM values refresh about once a second in the module, so each interface's outputs are kept
for ``interval_s`` (default 10 s) and re-run after. An interface that refuses (``Operation not supported``: no
module, a virtual device, a driver without FEC statistics) is asked again only after ``retry_s`` (default 300 s: a
module plugged in later is seen). Each run has a ``timeout_s`` limit. The text is returned as printed; whether it
parses is the reader's job (a shape it does not know is the collector's problem to report).
"""

from __future__ import annotations

import logging
import shutil
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass

log = logging.getLogger(__name__)

Runner = Callable[[list[str], float], tuple[int, str]]
"""Runs ``argv`` with a timeout in seconds; returns (exit code, stdout)."""


def run_binary(argv: list[str], timeout_s: float) -> tuple[int, str]:
    """:data:`Runner` over :func:`subprocess.run` (no shell; stderr discarded; a timeout or a missing binary is
    exit code -1)."""
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        log.debug("%s: %s", argv, exc)
        return -1, ""
    return done.returncode, done.stdout


@dataclass
class _Entry:
    text: str | None
    at: float


class EthtoolTextSource:
    """``module(ifname)`` and ``fec(ifname)``: the live ``ethtool -m`` / ``ethtool -I --show-fec`` output of an
    interface, or None when the interface refuses it (or no ``ethtool`` binary is installed)."""

    def __init__(
        self,
        binary: str | None = None,
        *,
        interval_s: float = 10.0,
        retry_s: float = 300.0,
        timeout_s: float = 2.0,
        runner: Runner = run_binary,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.binary = binary if binary is not None else shutil.which("ethtool")
        self.interval_s = interval_s
        self.retry_s = retry_s
        self.timeout_s = timeout_s
        self._run = runner
        self._clock = clock
        self._cache: dict[tuple[str, str], _Entry] = {}

    def module(self, ifname: str) -> str | None:
        """``ethtool -m <ifname>`` (the module's DOM as text)."""
        return self._get("module", ["-m", ifname], ifname)

    def fec(self, ifname: str) -> str | None:
        """``ethtool -I --show-fec <ifname>`` (FEC mode and statistics as text)."""
        return self._get("fec", ["-I", "--show-fec", ifname], ifname)

    def _get(self, kind: str, args: list[str], ifname: str) -> str | None:
        if self.binary is None:
            return None
        now = self._clock()
        old = self._cache.get((kind, ifname))
        if old is not None and now - old.at < (self.interval_s if old.text is not None else self.retry_s):
            return old.text
        code, out = self._run([self.binary, *args], self.timeout_s)
        text = out if code == 0 and out.strip() else None
        self._cache[(kind, ifname)] = _Entry(text, now)
        return text
