"""Web-config values that were accepted and silently ignored (issue 15 probes), against the exporter's own server on
127.0.0.1 with real sockets.

Before: ``http_server_config`` was an allowed key whose content was never read (its security headers were not
sent, and any key or value passed); a ``client_ca_file`` without ``client_auth_type`` loaded the CA and asked no
client for a certificate (exporter-toolkit refuses that); a malformed bcrypt hash passed the prefix check and then
refused every request. The header rules are exporter-toolkit's (web/handler.go, extraHTTPHeaders).
"""

from __future__ import annotations

import threading
import urllib.request
from pathlib import Path

import pytest
from test_export_http import self_signed

from fabricd.collectors.server import ExporterServer
from fabricd.collectors.webconfig import load_web_config
from fabricd.errors import UsageError

pytestmark = pytest.mark.integration


def _load(tmp: Path, text: str) -> tuple[Path, UsageError | None]:
    path = tmp / "web.yml"
    path.write_text(text)
    try:
        load_web_config(path)
    except UsageError as exc:
        return path, exc
    return path, None


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("http_server_config:\n  headers:\n    X-Powered-By: fabricd\n", "cannot be configured"),
        ("http_server_config:\n  headers:\n    X-Frame-Options: allow-from-anywhere\n", "invalid value"),
        ("http_server_config:\n  headers:\n    X-Content-Type-Options: sniff\n", "invalid value"),
        ('http_server_config:\n  headers:\n    Content-Security-Policy: "a\\nSet-Cookie: x=1"\n', "invalid value"),
        ("http_server_config:\n  headerz:\n    X-Frame-Options: deny\n", "unknown key"),
        ("http_server_config:\n  http2: true\n", "HTTP/1.1 only"),
        ("http_server_config: [headers]\n", "expected a mapping"),
        ("basic_auth_users:\n  prometheus: $2y$10$not-a-real-hash\n", "expected a bcrypt hash"),
        ("basic_auth_users: []\n", "expected a mapping"),
        ("basic_auth_users: ''\n", "expected a mapping"),
        ("tls_server_config: []\n", "expected a mapping"),
        ("tls_server_config: ''\n", "expected a mapping"),
    ],
)
def test_web_config_refuses_what_it_would_have_ignored(tmp_path: Path, text: str, needle: str) -> None:
    path, exc = _load(tmp_path, text)
    assert exc is not None, text
    assert needle in exc.render() and str(path) in exc.render()


def test_a_client_ca_without_client_auth_type_is_refused(tmp_path: Path) -> None:
    crt, key = self_signed(tmp_path)
    _path, exc = _load(
        tmp_path, f"tls_server_config:\n  cert_file: {crt}\n  key_file: {key}\n  client_ca_file: {crt}\n"
    )
    assert exc is not None and "tls_server_config.client_ca_file" in exc.render()
    assert "client_auth_type" in exc.render()


def test_configured_headers_are_sent_on_every_response(tmp_path: Path) -> None:
    path = tmp_path / "web.yml"
    path.write_text(
        "http_server_config:\n  http2: false\n  headers:\n    X-Frame-Options: deny\n"
        "    Strict-Transport-Security: max-age=31536000; includeSubDomains\n"
        "    Content-Security-Policy: \"default-src 'self'\"\n"
    )
    srv = ExporterServer(("127.0.0.1", 0), lambda: "fabricd_up 1\n", load_web_config(path))
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        for url in (srv.url, srv.url.replace("/metrics", "/nothing-here")):
            try:
                resp = urllib.request.urlopen(url, timeout=5)
            except urllib.error.HTTPError as err:
                resp = err
            with resp:
                assert resp.headers["X-Frame-Options"] == "deny"
                assert resp.headers["Strict-Transport-Security"] == "max-age=31536000; includeSubDomains"
                assert resp.headers["Content-Security-Policy"] == "default-src 'self'"
    finally:
        srv.shutdown()
        srv.server_close()


@pytest.mark.parametrize(
    ("raw", "needle"),
    [
        (b"\xff\xfe: x\n", "not UTF-8"),
        (b"basic_auth_users:\n  a: [\n", "web.yml:3: not valid YAML"),
        (b"basic_auth_users: !!bool x\n", "not valid YAML"),
    ],
)
def test_an_unreadable_web_config_is_one_located_line(tmp_path: Path, raw: bytes, needle: str) -> None:
    """A non-UTF-8 file was ``internal error: UnicodeDecodeError``; a syntax error printed PyYAML's five-line
    message without the line in front."""
    path = tmp_path / "web.yml"
    path.write_bytes(raw)
    with pytest.raises(UsageError) as info:
        load_web_config(path)
    text = info.value.render()
    assert needle in text and str(path) in text and "\n" not in text


def test_a_client_that_resets_mid_request_prints_no_traceback(
    tmp_path: Path, capfd: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    """socketserver's default handle_error printed a full traceback to stderr for every client that reset its
    connection (``ConnectionResetError`` in the handler): a neighbour could fill the journal with tracebacks. Also a
    render that raises is one ERROR log line, not a stderr traceback."""
    import socket
    import struct
    import time

    calls = {"n": 0}

    def render() -> str:
        calls["n"] += 1
        if calls["n"] == 1:
            raise RuntimeError("collector blew up")
        return "fabricd_up 1\n" * 100_000

    srv = ExporterServer(("127.0.0.1", 0), render, None)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        port = int(srv.server_address[1])
        for _ in range(4):
            s = socket.create_connection(("127.0.0.1", port), timeout=5)
            s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
            time.sleep(0.05)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # RST on close
            s.close()
        time.sleep(0.5)
        with urllib.request.urlopen(srv.url, timeout=5) as resp:  # still serving
            assert resp.status == 200
    finally:
        srv.shutdown()
        srv.server_close()
    err = capfd.readouterr().err
    assert "Traceback" not in err and "Exception occurred" not in err, err
    assert any("collector blew up" in r.getMessage() for r in caplog.records if r.levelname == "ERROR")


def test_an_unknown_user_costs_a_bcrypt_like_a_known_one(tmp_path: Path) -> None:
    """An unknown user name was refused at once and a known one after a bcrypt (~100 ms at cost 10): a neighbour
    could tell valid user names apart by timing. Now an unknown name is checked against a decoy hash of the
    configured cost, as exporter-toolkit does (white-box: the decoy exists and has that cost; no timing here)."""
    import base64

    import bcrypt

    path = tmp_path / "web.yml"
    path.write_text(f"basic_auth_users:\n  prometheus: '{bcrypt.hashpw(b'right', bcrypt.gensalt(5)).decode()}'\n")
    cfg = load_web_config(path)

    def header(user: str, pw: str) -> str:
        return "Basic " + base64.b64encode(f"{user}:{pw}".encode()).decode()

    assert cfg.authorized(header("prometheus", "right"))
    assert not cfg.authorized(header("prometheus", "wrong"))
    assert not cfg.authorized(header("admin", "right"))
    decoy = cfg._decoy
    assert decoy is not None and decoy.startswith(b"$2b$05$")
