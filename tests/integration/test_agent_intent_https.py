"""The agent's intent over HTTPS: a real TLS server on 127.0.0.1 with a throwaway CA made by openssl. The CA is
verified, the ETag is honoured (304 reuses the cached copy), a failing server keeps the last good intent, and
http:// or a wrong CA are refused with a hint."""

from __future__ import annotations

import hashlib
import shutil
import ssl
import subprocess
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from fabricd.errors import FabricdError
from fabricd.service.intent_source import IntentSource, IntentSourceError

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
INVENTORY = REPO / "inventory" / "examples" / "softroce.yml"


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, timeout=60)


def make_pki(d: Path) -> tuple[Path, Path, Path, Path]:
    """A CA, a server certificate for 127.0.0.1 signed by it, and a second, unrelated CA."""
    _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=fabricd test CA",
             "-keyout", "ca.key", "-out", "ca.pem", cwd=d)
    _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=other CA",
             "-keyout", "other.key", "-out", "other.pem", cwd=d)
    _openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1", "-keyout", "srv.key", "-out",
             "srv.csr", cwd=d)
    (d / "ext.cnf").write_text("subjectAltName=IP:127.0.0.1\n")
    _openssl("x509", "-req", "-in", "srv.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-days", "2",
             "-extfile", "ext.cnf", "-out", "srv.pem", cwd=d)
    return d / "ca.pem", d / "srv.pem", d / "srv.key", d / "other.pem"


@dataclass
class IntentServer:
    body: bytes
    requests: list[dict[str, Any]] = field(default_factory=list)
    fail: bool = False


@pytest.fixture()
def https(tmp_path: Path) -> Iterator[tuple[str, IntentServer, Path, Path]]:
    if shutil.which("openssl") is None:
        pytest.skip("needs openssl to make a test CA")
    ca, cert, key, other = make_pki(tmp_path)
    state = IntentServer(INVENTORY.read_bytes())

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            etag = '"' + hashlib.sha256(state.body).hexdigest()[:16] + '"'
            state.requests.append({"path": self.path, "if_none_match": self.headers.get("If-None-Match")})
            if state.fail:
                self.send_response(503)
                self.end_headers()
                return
            if self.headers.get("If-None-Match") == etag:
                self.send_response(304)
                self.send_header("ETag", etag)
                self.end_headers()
                return
            self.send_response(200)
            self.send_header("ETag", etag)
            self.send_header("Content-Type", "application/yaml")
            self.send_header("Content-Length", str(len(state.body)))
            self.end_headers()
            self.wfile.write(state.body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(cert, key)
    server.socket = ctx.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"https://127.0.0.1:{server.server_address[1]}/fabric.yml", state, ca, other
    finally:
        server.shutdown()
        server.server_close()


def test_fetch_verify_etag_and_keep_last_good(https: tuple[str, IntentServer, Path, Path], tmp_path: Path) -> None:
    url, server, ca, _ = https
    src = IntentSource(url, "rxe-a", ca_file=ca, cache_dir=tmp_path / "cache")
    first = src.load()
    assert first.host == "rxe-a" and first.nics
    assert server.requests[-1]["if_none_match"] is None
    again = src.load()
    assert again == first
    assert server.requests[-1]["if_none_match"] is not None  # conditional request
    assert (src.stats.fetched, src.stats.not_modified) == (1, 1)

    # the server changes the inventory: a new body, a new ETag, a new intent
    server.body = server.body.replace(b"rxe-a", b"rxe-z")
    with pytest.raises(IntentSourceError, match="no host 'rxe-a'"):
        IntentSource(url, "rxe-a", ca_file=ca, cache_dir=tmp_path / "other-cache").load()
    src_z = IntentSource(url, "rxe-z", ca_file=ca, cache_dir=tmp_path / "cache-z")
    assert src_z.load().host == "rxe-z"

    # the server fails: the last good intent is kept and the failure recorded
    server.fail = True
    assert src.load() == first
    assert src.stats.failed == 1 and "HTTP 503" in (src.last_error or "")
    # an agent restarted while the server is down starts from its cached copy
    restarted = IntentSource(url, "rxe-a", ca_file=ca, cache_dir=tmp_path / "cache")
    assert restarted.load() == first and "HTTP 503" in (restarted.last_error or "")


def test_wrong_ca_and_plain_http_are_refused(https: tuple[str, IntentServer, Path, Path], tmp_path: Path) -> None:
    url, _, _, other = https
    with pytest.raises(IntentSourceError) as err:
        IntentSource(url, "rxe-a", ca_file=other, cache_dir=tmp_path / "c").load()
    assert "CERTIFICATE_VERIFY_FAILED" in err.value.render() and "--ca-file" in err.value.render()
    with pytest.raises(FabricdError, match="only https://"):
        IntentSource(url.replace("https://", "http://"), "rxe-a", cache_dir=tmp_path / "c")
    with pytest.raises(FabricdError, match="no such file"):
        IntentSource(str(tmp_path / "missing.yml"), "rxe-a")


def test_file_source_reloads_on_change(tmp_path: Path) -> None:
    inv = tmp_path / "fabric.yml"
    inv.write_bytes(INVENTORY.read_bytes())
    src = IntentSource(str(inv), "rxe-a")
    mtu_before = src.load().nics[0].mtu_bytes
    text = inv.read_text()
    assert "mtu" in text
    inv.write_text(text.replace("rxe-a", "rxe-q"))
    with pytest.raises(IntentSourceError, match="no host 'rxe-a'"):
        IntentSource(str(inv), "rxe-a").load()
    # the first source keeps its last good intent and reports the problem
    assert src.load().nics[0].mtu_bytes == mtu_before
    assert "no host 'rxe-a'" in (src.last_error or "")
