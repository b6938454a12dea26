"""Idle and slow clients cannot stop scrapes (real sockets on 127.0.0.1, the exporter's own server class).

Before: the TLS handshake ran in the accept thread, so one client that connected and never sent a ClientHello
blocked every HTTPS scrape until it went away. Now each connection's thread does its own handshake under a timeout.
Also: the web config refuses what it cannot honour (unknown TLS versions, unknown cipher suites) instead of
falling back silently.
"""

from __future__ import annotations

import socket
import ssl
import threading
import time
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import pytest
from test_export_http import self_signed

from fabricd.collectors import server as server_mod
from fabricd.collectors.server import ExporterServer
from fabricd.collectors.webconfig import load_web_config
from fabricd.errors import UsageError

pytestmark = pytest.mark.integration
IDLE = 200


@contextmanager
def serving(web_yaml: str | None, tmp: Path) -> Iterator[ExporterServer]:
    web = None
    if web_yaml is not None:
        path = tmp / "web.yml"
        path.write_text(web_yaml)
        web = load_web_config(path)
    srv = ExporterServer(("127.0.0.1", 0), lambda: "fabricd_up 1\n", web)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    try:
        yield srv
    finally:
        srv.shutdown()
        srv.server_close()


def idle_clients(stack: ExitStack, port: int, count: int, first_bytes: bytes = b"") -> None:
    for _ in range(count):
        s = stack.enter_context(socket.create_connection(("127.0.0.1", port), timeout=5))
        if first_bytes:
            s.sendall(first_bytes)


def scrape_seconds(url: str, ctx: ssl.SSLContext | None) -> float:
    t0 = time.monotonic()
    with urllib.request.urlopen(url, context=ctx, timeout=5) as resp:
        assert resp.status == 200 and b"fabricd_up 1" in resp.read()
    return time.monotonic() - t0


def test_tls_scrape_succeeds_within_1s_while_200_clients_sit_idle(tmp_path: Path) -> None:
    crt, key = self_signed(tmp_path)
    ctx = ssl.create_default_context(cafile=str(crt))
    with serving(f"tls_server_config:\n  cert_file: {crt}\n  key_file: {key}\n", tmp_path) as srv, ExitStack() as st:
        port = int(srv.server_address[1])
        idle_clients(st, port, IDLE)  # connect, send nothing: no ClientHello
        idle_clients(st, port, 20, b"\x16\x03\x01\x02\x00\x01")  # a ClientHello cut short
        time.sleep(0.2)
        took = [scrape_seconds(srv.url, ctx) for _ in range(5)]
        assert max(took) < 1.0, took


def test_plain_http_scrape_succeeds_within_1s_while_200_clients_sit_idle(tmp_path: Path) -> None:
    with serving(None, tmp_path) as srv, ExitStack() as st:
        idle_clients(st, int(srv.server_address[1]), IDLE)
        idle_clients(st, int(srv.server_address[1]), 20, b"GET /metrics HTTP/1.1\r\nHost: x\r\n")  # never ends
        time.sleep(0.2)
        took = [scrape_seconds(srv.url, None) for _ in range(5)]
        assert max(took) < 1.0, took


def test_a_stalled_handshake_is_dropped_after_the_timeout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(server_mod, "HANDSHAKE_TIMEOUT_S", 0.5)
    crt, key = self_signed(tmp_path)
    web = f"tls_server_config:\n  cert_file: {crt}\n  key_file: {key}\n"
    with (
        serving(web, tmp_path) as srv,
        socket.create_connection(("127.0.0.1", int(srv.server_address[1])), timeout=5) as s,
    ):
        t0 = time.monotonic()
        assert s.recv(1) == b""  # the server closes the connection
        assert 0.3 < time.monotonic() - t0 < 3.0


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        ("  min_version: TLS1.2\n", "unknown TLS version 'TLS1.2'"),
        ("  max_version: tls13\n", "unknown TLS version 'tls13'"),
        ("  min_version: TLS13\n  max_version: TLS12\n", "below min_version"),
        ("  cipher_suites: [TLS_RSA_WITH_RC4_128_SHA]\n", "unknown or unsupported cipher suite"),
        ("  cipher_suites: ECDHE-RSA-AES128-GCM-SHA256\n", "expected a non-empty list"),
        ("  cipher_suites: [TLS_AES_128_GCM_SHA256]\n", "only TLS 1.3 suites"),
        ("  curve_preferences: [CurveP256, X25519]\n", "exactly one"),
        ("  prefer_server_cipher_suites: yes-please\n", "expected true or false"),
    ],
)
def test_web_config_refuses_what_it_cannot_honour(tmp_path: Path, extra: str, needle: str) -> None:
    crt, key = self_signed(tmp_path)
    path = tmp_path / "web.yml"
    path.write_text(f"tls_server_config:\n  cert_file: {crt}\n  key_file: {key}\n{extra}")
    with pytest.raises(UsageError) as info:
        load_web_config(path)
    assert needle in info.value.render() and str(path) in info.value.render()


def test_cipher_suites_and_versions_take_effect(tmp_path: Path) -> None:
    crt, key = self_signed(tmp_path)
    web = (
        f"tls_server_config:\n  cert_file: {crt}\n  key_file: {key}\n  max_version: TLS12\n"
        "  cipher_suites: [TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384]\n  curve_preferences: [CurveP256]\n"
    )
    with serving(web, tmp_path) as srv:
        ctx = ssl.create_default_context(cafile=str(crt))
        with (
            socket.create_connection(("127.0.0.1", int(srv.server_address[1])), timeout=5) as raw,
            ctx.wrap_socket(raw, server_hostname="127.0.0.1") as tls,
        ):
            assert tls.version() == "TLSv1.2"
            assert tls.cipher()[0] == "ECDHE-ECDSA-AES256-GCM-SHA384"
        only13 = ssl.create_default_context(cafile=str(crt))
        only13.minimum_version = ssl.TLSVersion.TLSv1_3
        with (
            socket.create_connection(("127.0.0.1", int(srv.server_address[1])), timeout=5) as raw,
            pytest.raises(ssl.SSLError),
        ):
            only13.wrap_socket(raw, server_hostname="127.0.0.1")
