"""Where a reconcile agent gets its host's intent: an inventory on disk, or one fetched over HTTPS.

- **A path** (file or directory): loaded again whenever a file's modification time or size changes.
- **An ``https://`` URL**: a single-file inventory (YAML). The server's certificate is verified against the
  system trust store or ``ca_file``; the agent sends ``If-None-Match`` with the last ETag and reuses its cached copy
  on ``304 Not Modified``. The body and its ETag are kept in ``cache_dir``, so an agent that restarts while the
  server is down still has the last intent it fetched (and says so in ``last_error``). Plain ``http://`` is refused:
  the intent decides what is written to the NIC.

A fetch or load that fails raises :class:`IntentSourceError` when no earlier intent is known; otherwise the last
good intent is kept and the failure is recorded (the agent exports it).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import ssl
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from fabricd.errors import FabricdError
from fabricd.intent.host import HostIntent, host_intent
from fabricd.inventory import load_inventory

log = logging.getLogger(__name__)


class IntentSourceError(FabricdError):
    """The intent could not be read (no earlier copy to fall back on)."""


@dataclass
class FetchStats:
    fetched: int = 0
    not_modified: int = 0
    failed: int = 0


def is_url(source: str) -> bool:
    return "://" in source


class IntentSource:
    """The intent of ``host`` from ``source`` (path or https URL); :meth:`load` returns the current one."""

    def __init__(self, source: str, host: str, *, ca_file: Path | None = None, cache_dir: Path | None = None,
                 timeout_s: float = 10.0) -> None:
        self.source = source
        self.host = host
        self.ca_file = ca_file
        self.timeout_s = timeout_s
        self.stats = FetchStats()
        self.last_error: str | None = None
        self._intent: HostIntent | None = None
        self._stamp: object = None
        if is_url(source):
            url = urllib.parse.urlsplit(source)
            if url.scheme != "https":
                raise IntentSourceError(f"--intent {source}: only https:// URLs are accepted (got {url.scheme}://)",
                                        hint="serve the inventory over HTTPS, or give a local path")
            if ca_file is not None and not ca_file.is_file():
                raise IntentSourceError(f"--ca-file {ca_file}: no such file",
                                        hint="give the PEM file of the CA that signed the intent server's certificate")
            if cache_dir is None:
                raise IntentSourceError("an https intent source needs a cache directory")
            digest = hashlib.sha256(source.encode()).hexdigest()[:16]
            self.cache_body = cache_dir / f"intent-{digest}.yml"
            self.cache_meta = cache_dir / f"intent-{digest}.json"
        elif not Path(source).exists():
            raise IntentSourceError(f"--intent {source}: no such file or directory",
                                    hint="give the inventory (file or directory) or an https:// URL")

    # -- file --------------------------------------------------------------------------------------------------

    def _file_stamp(self) -> object:
        root = Path(self.source)
        files = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file())
        out = []
        for f in files:
            try:
                st = f.stat()
            except OSError:
                continue
            out.append((str(f), st.st_mtime_ns, st.st_size))
        return tuple(out)

    # -- https -------------------------------------------------------------------------------------------------

    def _context(self) -> ssl.SSLContext:
        return ssl.create_default_context(cafile=str(self.ca_file) if self.ca_file else None)

    def _cached_etag(self) -> str | None:
        try:
            meta = json.loads(self.cache_meta.read_text())
        except (OSError, ValueError):
            return None
        etag = meta.get("etag") if isinstance(meta, dict) else None
        return etag if isinstance(etag, str) and self.cache_body.is_file() else None

    def _fetch(self) -> bool:
        """Fetch the URL into the cache. True when the body changed (or there is no parsed intent yet)."""
        headers = {"User-Agent": "fabricd-agent", "Accept": "application/yaml, text/yaml, */*"}
        etag = self._cached_etag()
        if etag is not None:
            headers["If-None-Match"] = etag
        req = urllib.request.Request(self.source, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=self.timeout_s, context=self._context()) as resp:
                body = resp.read()
                new_etag = resp.headers.get("ETag")
        except urllib.error.HTTPError as exc:
            if exc.code == 304 and etag is not None:
                self.stats.not_modified += 1
                return self._intent is None
            raise IntentSourceError(f"{self.source}: HTTP {exc.code} {exc.reason}",
                                    hint="check the URL and that the server serves the inventory file") from None
        except (urllib.error.URLError, OSError, ssl.SSLError) as exc:
            reason = getattr(exc, "reason", exc)
            hint = ("the server's certificate is not signed by a trusted CA: give --ca-file"
                    if "CERTIFICATE_VERIFY_FAILED" in str(reason) else "check the URL and that the server is up")
            raise IntentSourceError(f"{self.source}: fetch failed: {reason}", hint=hint) from None
        self.stats.fetched += 1
        self.cache_body.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.cache_body.with_suffix(".tmp")
        tmp.write_bytes(body)
        os.replace(tmp, self.cache_body)
        self.cache_meta.write_text(json.dumps({"url": self.source, "etag": new_etag}))
        return True

    # -- both --------------------------------------------------------------------------------------------------

    def _parse(self, path: Path) -> HostIntent:
        fabric = load_inventory(path).fabric
        try:
            return host_intent(fabric, self.host)
        except KeyError:
            known = ", ".join(h.name for h in fabric.hosts) or "none"
            raise IntentSourceError(f"{self.source}: no host {self.host!r} in the inventory",
                                    hint=f"expected one of: {known}") from None

    def load(self) -> HostIntent:
        """The current intent. Re-reads the file or re-fetches the URL; keeps the last good one on failure."""
        try:
            if is_url(self.source):
                changed = self._fetch()
                if changed or self._intent is None:
                    self._intent = self._parse(self.cache_body)
            else:
                stamp = self._file_stamp()
                if stamp != self._stamp or self._intent is None:
                    self._intent = self._parse(Path(self.source))
                    self._stamp = stamp
            self.last_error = None
        except FabricdError as exc:
            self.stats.failed += 1
            self.last_error = exc.render()
            if self._intent is None and is_url(self.source) and self.cache_body.is_file():
                with contextlib.suppress(FabricdError):  # restarted while the server is down: the last copy
                    self._intent = self._parse(self.cache_body)
            if self._intent is None:
                raise
            log.warning("intent source %s: %s; keeping the last good intent", self.source, self.last_error)
        assert self._intent is not None
        return self._intent
