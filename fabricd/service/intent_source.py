"""Where a reconcile agent gets its host's intent: an inventory on disk, or one fetched over HTTPS.

- **A path** (file or directory): loaded again whenever a file's modification time or size changes.
- **An ``https://`` URL**: a single-file inventory (YAML), fetched with :func:`fabricd.httpclient.request`. The
  server's certificate is verified against the system trust store or ``ca_file``; the agent sends ``If-None-Match``
  with the ETag of the last good body and reuses its cached copy on ``304 Not Modified``. Plain ``http://`` is
  refused: the intent decides what is written to the NIC as root. What a fetch trusts and bounds:

  - **no redirect is followed**: a 3xx is a failed fetch naming its ``Location`` (point ``--intent`` at the final
    URL), so a redirect can never lead to plain ``http://`` or to another server;
  - **a length-checked body only**: it carries a Content-Length and arrives in full, or is chunked and ends with its
    last chunk; a close-delimited body is refused (a connection cut at a line boundary yields a shorter inventory
    that still loads);
  - **an overall deadline** (``deadline_s``, connect to last byte, not per read) and **a size limit**
    (``max_body_bytes``);
  - **only a body that loads, validates (no error from ``fabricd validate``'s checks) and holds the host** replaces
    the cached copy and its ETag, written atomically in ``cache_dir``; a refused body is never cached, and its ETag
    is never sent back, so a ``304`` cannot clear the error;
  - optionally, a **pinned SHA-256** of the body (``sha256``): anything else is refused, whoever served it.

  An agent that restarts while the server is down or bad starts from the cached copy (and says so in
  ``last_error``).

Every failure to read, fetch, load or validate is recorded (``stats.failed``, ``last_error``, cleared by the next good
read) and keeps the last good intent; :class:`IntentSourceError` is raised only when there is none.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import ssl
import time
import urllib.parse
from dataclasses import dataclass
from pathlib import Path

from fabricd.errors import FabricdError, InventoryError
from fabricd.httpclient import HttpError, Reading, request
from fabricd.intent.host import HostIntent, host_intent
from fabricd.inventory import load_inventory
from fabricd.nos.validate import validate

log = logging.getLogger(__name__)

DEFAULT_DEADLINE_S = 30.0
"""Overall deadline of one intent fetch, seconds (connect, TLS, headers and body)."""
DEFAULT_MAX_BYTES = 8 << 20
"""Largest intent body accepted, bytes (8 MiB: a single-file inventory of several thousand hosts)."""


class IntentSourceError(FabricdError):
    """The intent could not be read (no earlier copy to fall back on)."""


@dataclass
class FetchStats:
    fetched: int = 0
    not_modified: int = 0
    failed: int = 0
    last_ok_ts: float | None = None
    """When the intent was last read or fetched successfully (seconds since the epoch)."""


def is_url(source: str) -> bool:
    return "://" in source


class IntentSource:
    """The intent of ``host`` from ``source`` (path or https URL); :meth:`load` returns the current one.

    ``deadline_s`` bounds one fetch as a whole; ``max_body_bytes`` the body; ``sha256`` (64 hex digits) pins the
    body's digest (see the module docstring)."""

    def __init__(
        self,
        source: str,
        host: str,
        *,
        ca_file: Path | None = None,
        cache_dir: Path | None = None,
        deadline_s: float = DEFAULT_DEADLINE_S,
        max_body_bytes: int = DEFAULT_MAX_BYTES,
        sha256: str | None = None,
    ) -> None:
        self.source = source
        self.host = host
        self.ca_file = ca_file
        self.deadline_s = deadline_s
        self.max_body_bytes = max_body_bytes
        self.sha256 = sha256.lower() if sha256 else None
        self.stats = FetchStats()
        self.last_error: str | None = None
        self._intent: HostIntent | None = None
        self._stamp: object = None
        if self.sha256 is not None and (
            len(self.sha256) != 64 or any(c not in "0123456789abcdef" for c in self.sha256)
        ):
            raise IntentSourceError(
                f"--intent-sha256 {sha256}: not a SHA-256 digest (64 hex digits)",
                hint="give the output of: sha256sum fabric.yml",
            )
        if deadline_s <= 0 or max_body_bytes <= 0:
            raise IntentSourceError(
                f"intent fetch limits must be positive (deadline {deadline_s:g} s, size {max_body_bytes} bytes)",
                hint="give --intent-timeout and --intent-max-bytes values above 0",
            )
        if is_url(source):
            url = urllib.parse.urlsplit(source)
            if url.scheme != "https":
                raise IntentSourceError(
                    f"--intent {source}: only https:// URLs are accepted (got {url.scheme}://)",
                    hint="serve the inventory over HTTPS, or give a local path",
                )
            if ca_file is not None and not ca_file.is_file():
                raise IntentSourceError(
                    f"--ca-file {ca_file}: no such file",
                    hint="give the PEM file of the CA that signed the intent server's certificate",
                )
            if cache_dir is None:
                raise IntentSourceError("an https intent source needs a cache directory")
            digest = hashlib.sha256(source.encode()).hexdigest()[:16]
            self.cache_body = cache_dir / f"intent-{digest}.yml"
            self.cache_meta = cache_dir / f"intent-{digest}.json"
            self._candidate = cache_dir / f"intent-{digest}.fetched.yml"
        else:
            if not Path(source).exists():
                raise IntentSourceError(
                    f"--intent {source}: no such file or directory",
                    hint="give the inventory (file or directory) or an https:// URL",
                )
            if self.sha256 is not None and not Path(source).is_file():
                raise IntentSourceError(
                    f"--intent-sha256 needs a single-file inventory; {source} is a directory",
                    hint="pin the digest of an https:// or single-file intent, or drop it",
                )

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

    def _forget_etag(self) -> None:
        """The cached copy is not good (written by an older fabricd, or changed on disk): fetch it in full next."""
        with contextlib.suppress(OSError):
            self.cache_meta.unlink()

    def _fetch(self) -> HostIntent | None:
        """Fetch the URL. The new intent when the server sent a good new body; None on ``304 Not Modified``.
        Raises :class:`FabricdError` for anything else, having changed nothing."""
        headers = {"User-Agent": "fabricd-agent", "Accept": "application/yaml, text/yaml, */*"}
        etag = self._cached_etag()
        if etag is not None:
            headers["If-None-Match"] = etag
        try:
            resp = request(
                self.source,
                headers=headers,
                deadline_s=self.deadline_s,
                read=Reading(max_bytes=self.max_body_bytes),
                context=self._context(),
            )
        except HttpError as exc:
            hint = exc.hint or {
                "tls": "the server's certificate is not signed by a trusted CA: give --ca-file",
                "deadline": "the server is too slow or stalled; raise --intent-timeout if it is merely slow",
                "too_large": "raise --intent-max-bytes if the inventory really is that large",
                "length": "the answer was cut short (a dropped connection or a broken server); it is fetched again "
                "at the next reconcile",
            }.get(exc.kind, "check the URL and that the server is up")
            raise IntentSourceError(f"{self.source}: fetch failed: {exc.message}", hint=hint) from None
        if resp.status == 304 and etag is not None:
            self.stats.not_modified += 1
            return None
        if 300 <= resp.status < 400:
            raise IntentSourceError(
                f"{self.source}: HTTP {resp.status} {resp.reason}: redirect to {resp.location or '(no Location)'} "
                "refused (redirects are never followed)",
                hint="give --intent the final https:// URL of the inventory",
            )
        if resp.status != 200:
            raise IntentSourceError(
                f"{self.source}: HTTP {resp.status} {resp.reason}",
                hint="check the URL and that the server serves the inventory file",
            )
        self.stats.fetched += 1
        self._check_digest(resp.body)
        # parse and validate a candidate file; only a good one replaces the cached copy and its ETag
        self._candidate.parent.mkdir(parents=True, exist_ok=True)
        self._candidate.write_bytes(resp.body)
        try:
            intent = self._parse(self._candidate)
        except FabricdError as exc:
            rejected = self._candidate  # left in place for a look; the next fetch replaces it
            problems = exc.problems if isinstance(exc, InventoryError) else []
            first = f"{problems[0].render()} [{problems[0].code}]" if problems else exc.render()
            more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
            raise IntentSourceError(
                f"{self.source}: refused the fetched inventory (kept as {rejected} for a look): {first}{more}",
                hint="fix the inventory on the server (fabricd validate FILE); the last good intent stays in use",
            ) from None
        os.replace(self._candidate, self.cache_body)
        tmp = self.cache_meta.with_suffix(".tmp")
        tmp.write_text(
            json.dumps(
                {"url": self.source, "etag": resp.headers.get("ETag"), "sha256": hashlib.sha256(resp.body).hexdigest()}
            )
        )
        os.replace(tmp, self.cache_meta)
        return intent

    def _check_digest(self, body: bytes) -> None:
        if self.sha256 is None:
            return
        got = hashlib.sha256(body).hexdigest()
        if got != self.sha256:
            raise IntentSourceError(
                f"{self.source}: the body's sha256 is {got}, not the pinned {self.sha256}",
                hint="publish the pinned inventory, or update --intent-sha256 to the new one after reviewing it",
            )

    def _from_cache(self) -> HostIntent:
        """The cached copy (checked again: an older fabricd may have cached a bad body)."""
        try:
            self._check_digest(self.cache_body.read_bytes())
            return self._parse(self.cache_body)
        except (FabricdError, OSError):
            self._forget_etag()
            raise

    # -- both --------------------------------------------------------------------------------------------------

    def _parse(self, path: Path) -> HostIntent:
        """Load, validate and take this host's intent; any error of the inventory refuses it all."""
        inventory = load_inventory(path)
        errors = validate(inventory).errors
        if errors:
            raise InventoryError(errors)
        fabric = inventory.fabric
        try:
            return host_intent(fabric, self.host)
        except KeyError:
            known = ", ".join(h.name for h in fabric.hosts) or "none"
            raise IntentSourceError(
                f"{self.source}: no host {self.host!r} in the inventory", hint=f"expected one of: {known}"
            ) from None

    def _read(self) -> HostIntent:
        if is_url(self.source):
            fetched = self._fetch()
            if fetched is not None:
                return fetched
            return self._intent if self._intent is not None else self._from_cache()
        stamp = self._file_stamp()
        if stamp == self._stamp and self._intent is not None:
            return self._intent
        if self.sha256 is not None:
            self._check_digest(Path(self.source).read_bytes())
        intent = self._parse(Path(self.source))
        self._stamp = stamp
        return intent

    def load(self, *, refresh: bool = True) -> HostIntent:
        """The current intent. Re-reads the file or re-fetches the URL; keeps the last good one on failure.

        ``refresh=False`` returns the intent in hand without fetching, when there is one (a URL source only: a file
        is cheap to check): the agent's repair after a driver reload must not wait for a slow intent server."""
        if not refresh and self._intent is not None and is_url(self.source):
            return self._intent
        try:
            self._intent = self._read()
            self.last_error = None
            self.stats.last_ok_ts = time.time()
        except Exception as exc:  # a failed read must never end the agent: it is counted and shown
            self.stats.failed += 1
            if isinstance(exc, FabricdError):
                self.last_error = exc.render()
            else:
                log.exception("intent source %s: unexpected error", self.source)
                self.last_error = f"{self.source}: {type(exc).__name__}: {exc}"
            if self._intent is None and is_url(self.source) and self.cache_body.is_file():
                with contextlib.suppress(FabricdError, OSError):  # restarted while the server is down or bad
                    self._intent = self._from_cache()
            if self._intent is None:
                if isinstance(exc, FabricdError):
                    raise
                raise IntentSourceError(self.last_error) from exc
            log.warning("intent source %s: %s; keeping the last good intent", self.source, self.last_error)
        return self._intent
