"""The agent's intent over HTTPS: a real TLS server on 127.0.0.1 with a throwaway CA made by openssl. The CA is
verified, the ETag is honoured (304 reuses the cached copy), a failing server keeps the last good intent, and
http:// or a wrong CA are refused with a hint."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import ssl
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from rawhttp import Piece, RawServer, Request, chunked, response, trickle
from wdhelpers import get, wait_for

from fabricd.errors import FabricdError
from fabricd.service.intent_source import IntentSource, IntentSourceError

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
INVENTORY = REPO / "inventory" / "examples" / "softroce.yml"
FABRICD = str(Path(sys.executable).with_name("fabricd"))


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, timeout=60)


def make_pki(d: Path) -> tuple[Path, Path, Path, Path]:
    """A CA, a server certificate for 127.0.0.1 signed by it, and a second, unrelated CA."""
    _openssl(
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-days",
        "2",
        "-subj",
        "/CN=fabricd test CA",
        "-keyout",
        "ca.key",
        "-out",
        "ca.pem",
        cwd=d,
    )
    _openssl(
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-days",
        "2",
        "-subj",
        "/CN=other CA",
        "-keyout",
        "other.key",
        "-out",
        "other.pem",
        cwd=d,
    )
    _openssl(
        "req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1", "-keyout", "srv.key", "-out", "srv.csr", cwd=d
    )
    (d / "ext.cnf").write_text("subjectAltName=IP:127.0.0.1\n")
    _openssl(
        "x509",
        "-req",
        "-in",
        "srv.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-days",
        "2",
        "-extfile",
        "ext.cnf",
        "-out",
        "srv.pem",
        cwd=d,
    )
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


# -- a hostile or broken intent server (issue 23, part 1) ----------------------------------------------------------
# A raw TLS server (tests/integration/rawhttp.py) that answers each request as the test's script says. The agent
# first fetches the good inventory, then the server misbehaves: each way must be a failed fetch that keeps the last
# good intent, counts a failure, and never reaches the cache.

GOOD = INVENTORY.read_bytes()
# the good file's lines up to and including "  - name: rxe-b": valid YAML, and a valid inventory in which rxe-b
# has no NIC (what a connection cut at that line boundary delivers when the body has no length)
CUT = GOOD[: GOOD.index(b"  - name: rxe-b\n") + len(b"  - name: rxe-b\n")]


# bodies that must never reach the cache: one the loader refuses (an MTU out of range), and one that loads but
# fails validate (FAB073: a NIC on a VLAN the policy does not define)
BAD = {
    "unloadable": GOOD.replace(b"mtu: 9000", b"mtu: 90000"),
    "invalid": GOOD.replace(b"vlan: 100, mtu", b"vlan: 200, mtu"),
}


def _etag(body: bytes) -> str:
    return '"' + hashlib.sha256(body).hexdigest()[:16] + '"'


class Hostile:
    """The script's state: ``mode`` picks the answer; ``good`` is served with its ETag and honours If-None-Match."""

    def __init__(self) -> None:
        self.mode = "good"
        self.other_url = ""

    def __call__(self, req: Request) -> Iterator[Piece]:
        m = self.mode
        if m in BAD:  # a body that is not a good inventory; 304 for its own ETag
            yield from _cached(req, BAD[m])
            return
        answer = _ANSWERS.get(m)
        if answer is None:
            raise AssertionError(m)
        yield from answer(self, req)

    def _good(self, req: Request) -> Iterator[Piece]:
        if req.headers.get("if-none-match") == _etag(GOOD):
            yield response("304 Not Modified", {"ETag": _etag(GOOD)})
        elif self.mode == "good":
            yield response("200 OK", {"ETag": _etag(GOOD)}, GOOD)
        else:
            yield response("200 OK", {"ETag": _etag(GOOD), "Transfer-Encoding": "chunked"}, chunked(GOOD))

    def _redirect(self, req: Request) -> Iterator[Piece]:
        yield response("302 Found", {"Location": self.other_url})


def _cached(req: Request, body: bytes) -> Iterator[Piece]:
    if req.headers.get("if-none-match") == _etag(body):
        yield response("304 Not Modified", {"ETag": _etag(body)})
    else:
        yield response("200 OK", {"ETag": _etag(body)}, body)


def _huge_chunked(_h: Hostile, _req: Request) -> Iterator[Piece]:  # no length, endless
    yield response("200 OK", {"Transfer-Encoding": "chunked"})
    while True:
        yield b"10000\r\n" + b"#" * 65536 + b"\r\n"


def _pieces(*pieces: bytes) -> Callable[[Hostile, Request], Iterator[Piece]]:
    """An answer that sends ``pieces`` in order, the same for every request."""

    def answer(_h: Hostile, _req: Request) -> Iterator[Piece]:
        yield from pieces

    return answer


_ANSWERS: dict[str, Callable[[Hostile, Request], Iterator[Piece]]] = {
    "good": Hostile._good,
    "good-chunked": Hostile._good,
    "changed": _pieces(response("200 OK", {"ETag": '"changed"'}, GOOD.replace(b"mtu: 9000", b"mtu: 4200"))),
    "redirect": Hostile._redirect,
    # Content-Length says more than arrives, then the connection ends
    "short": _pieces(response("200 OK", {"ETag": '"short"', "Content-Length": str(len(GOOD))}, GOOD[: len(CUT)])),
    "bad-status": _pieces(b"HTTP/1.1 OK\r\n\r\n" + GOOD),
    "long-header": _pieces(b"HTTP/1.1 200 OK\r\nX-Padding: " + b"a" * 70000 + b"\r\n\r\n"),
    "bad-chunk": _pieces(response("200 OK", {"Transfer-Encoding": "chunked"}, b"zz\r\n" + GOOD[:100])),
    # chunked, but the last chunk never comes
    "cut-chunked": _pieces(response("200 OK", {"Transfer-Encoding": "chunked"}, chunked(CUT)[:-5])),
    "no-answer": _pieces(),
    # no Content-Length, not chunked: the body ends where the connection does
    "close-delimited": _pieces(response("200 OK", {"ETag": '"cut"', "Connection": "close"}, CUT, length=False)),
    "trickle-body": lambda _h, _r: _chain(response("200 OK", {"Content-Length": str(len(GOOD))}), trickle(GOOD, 0.1)),
    "trickle-head": lambda _h, _r: trickle(response("200 OK", {}, GOOD), 0.1),
    # announces 64 MiB
    "huge": lambda _h, _r: _chain(
        response("200 OK", {"Content-Length": str(64 << 20)}), (b"#" * 65536 for _ in range(1024))
    ),
    "huge-chunked": _huge_chunked,
}
"""What the hostile server answers in each mode (the BAD bodies aside)."""


def _chain(head: bytes, rest: Iterator[Piece]) -> Iterator[Piece]:
    yield head
    yield from rest


@pytest.fixture()
def hostile(tmp_path: Path) -> Iterator[tuple[RawServer, Hostile, Path]]:
    if shutil.which("openssl") is None:
        pytest.skip("needs openssl to make a test CA")
    ca, cert, key, _ = make_pki(tmp_path)
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(cert, key)
    script = Hostile()
    server = RawServer(script, context=ctx)
    try:
        yield server, script, ca
    finally:
        server.close()


def _source(server: RawServer, ca: Path, tmp_path: Path, host: str = "rxe-a", **kw: Any) -> IntentSource:
    return IntentSource(server.url + "/fabric.yml", host, ca_file=ca, cache_dir=tmp_path / "cache", **kw)


def test_a_redirect_is_never_followed(hostile: tuple[RawServer, Hostile, Path], tmp_path: Path) -> None:
    """A 302 from the HTTPS server to plain http:// (or anywhere) is a failed fetch: the body there, a valid
    inventory that changes the MTU, is never fetched nor applied."""
    server, script, ca = hostile
    evil_body = GOOD.replace(b"mtu: 9000", b"mtu: 1500")
    evil = RawServer(lambda req: [response("200 OK", {}, evil_body)])
    try:
        src = _source(server, ca, tmp_path)
        good = src.load()
        assert good.nics[0].mtu_bytes == 9000
        for target in (evil.url + "/evil.yml", server.url + "/elsewhere.yml"):
            script.other_url = target
            script.mode = "redirect"
            before = src.stats.failed
            assert src.load() == good
            assert src.stats.failed == before + 1
            assert "redirect" in (src.last_error or "") and target in (src.last_error or "")
        assert evil.requests == []
        # a fresh agent (no cache) told to go elsewhere has no intent at all, rather than the other one
        script.other_url = evil.url + "/evil.yml"
        with pytest.raises(IntentSourceError, match="redirect"):
            IntentSource(server.url + "/fabric.yml", "rxe-a", ca_file=ca, cache_dir=tmp_path / "fresh").load()
        assert evil.requests == []
    finally:
        evil.close()


@pytest.mark.parametrize("mode", ["short", "bad-status", "long-header", "bad-chunk", "cut-chunked", "no-answer"])
def test_a_broken_answer_keeps_the_last_good_intent(
    hostile: tuple[RawServer, Hostile, Path], tmp_path: Path, mode: str
) -> None:
    """Each http.client failure (IncompleteRead, BadStatusLine, LineTooLong, a bad or missing chunk,
    RemoteDisconnected) is a counted, reported failure, not an exception out of load(); the next good fetch
    clears it."""
    server, script, ca = hostile
    src = _source(server, ca, tmp_path)
    good = src.load()
    cached = src.cache_body.read_bytes()
    script.mode = mode
    assert src.load() == good
    assert src.stats.failed == 1 and src.last_error
    assert src.cache_body.read_bytes() == cached
    script.mode = "good"
    assert src.load() == good
    assert src.last_error is None and src.stats.failed == 1


def test_a_body_without_length_is_refused(hostile: tuple[RawServer, Hostile, Path], tmp_path: Path) -> None:
    """A close-delimited body cut at a line boundary is a valid inventory in which rxe-b has no NIC: it must not
    replace the intent (it would be reported compliant with nothing to check). Chunked bodies are fine."""
    server, script, ca = hostile
    src = _source(server, ca, tmp_path, host="rxe-b")
    script.mode = "good-chunked"
    good = src.load()
    assert len(good.nics) == 1
    script.mode = "close-delimited"
    assert src.load() == good
    assert src.stats.failed == 1 and "Content-Length" in (src.last_error or "")
    restarted = _source(server, ca, tmp_path, host="rxe-b")
    assert len(restarted.load().nics) == 1  # from the cache: the cut body never reached it


@pytest.mark.parametrize(("mode", "problem"), [("unloadable", "mtu"), ("invalid", "FAB073")])
def test_a_rejected_body_never_reaches_the_cache_and_its_304_clears_nothing(
    hostile: tuple[RawServer, Hostile, Path], tmp_path: Path, mode: str, problem: str
) -> None:
    server, script, ca = hostile
    src = _source(server, ca, tmp_path)
    good = src.load()
    script.mode = mode
    for _ in range(3):  # the server would answer 304 to the bad body's ETag: the agent must never send it
        assert src.load() == good
        assert src.last_error and problem in src.last_error
    assert src.stats.failed == 3
    assert server.requests[-1].headers.get("if-none-match") == _etag(GOOD)
    # restarted while the server still serves the bad body: the cached copy is the good one
    restarted = _source(server, ca, tmp_path)
    assert restarted.load() == good and restarted.last_error
    script.mode = "good"
    assert src.load() == good and src.last_error is None


@pytest.mark.parametrize("mode", ["trickle-body", "trickle-head"])
def test_a_trickling_server_is_cut_at_the_deadline(
    hostile: tuple[RawServer, Hostile, Path], tmp_path: Path, mode: str
) -> None:
    server, script, ca = hostile
    src = _source(server, ca, tmp_path, deadline_s=1.5)
    good = src.load()
    script.mode = mode
    t0 = time.monotonic()
    assert src.load() == good
    took = time.monotonic() - t0
    assert took < 5.0, f"the fetch took {took:.1f} s with a 1.5 s deadline"
    assert src.stats.failed == 1 and "deadline" in (src.last_error or "")


@pytest.mark.parametrize("mode", ["huge", "huge-chunked"])
def test_a_body_over_the_size_limit_is_refused(
    hostile: tuple[RawServer, Hostile, Path], tmp_path: Path, mode: str
) -> None:
    server, script, ca = hostile
    src = _source(server, ca, tmp_path, max_body_bytes=1 << 20)
    good = src.load()
    script.mode = mode
    assert src.load() == good
    assert src.stats.failed == 1 and "limit" in (src.last_error or "")


def test_a_pinned_digest_refuses_any_other_body(hostile: tuple[RawServer, Hostile, Path], tmp_path: Path) -> None:
    """--intent-sha256: the pinned file loads; a valid inventory with any other content is refused and never
    cached, even from the trusted server."""
    server, script, ca = hostile
    src = _source(server, ca, tmp_path, sha256=hashlib.sha256(GOOD).hexdigest())
    good = src.load()
    script.mode = "changed"  # the server now serves a valid inventory that is not the pinned one
    assert src.load() == good
    assert src.stats.failed == 1 and "sha256" in (src.last_error or "")
    fresh = _source(server, ca, tmp_path / "other", sha256=hashlib.sha256(GOOD).hexdigest())
    with pytest.raises(IntentSourceError, match="sha256"):
        fresh.load()
    assert not fresh.cache_body.exists()
    with pytest.raises(IntentSourceError, match="64 hex digits"):
        _source(server, ca, tmp_path, sha256="abc")


def _agent(args: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen([FABRICD, "agent", *args], env=env, stdout=subprocess.DEVNULL, stderr=log.open("w"))


def test_the_agent_starts_from_its_cache_when_the_server_is_bad(
    hostile: tuple[RawServer, Hostile, Path], tmp_path: Path, reserve_port: Callable[[], int]
) -> None:
    """The real CLI: one good fetch fills the cache; then the server sends a cut body. The agent starts from its
    cache (no exit 70 crash loop), and /healthz and /status say what is wrong until the server is good again."""
    server, script, ca = hostile
    root = tmp_path / "root"
    root.mkdir()
    env = dict(os.environ, FABRICD_STATE_DIR=str(tmp_path / "state"), FABRICD_APPLY_LOCK_DIR=str(tmp_path / "lk"))
    common = [server.url + "/fabric.yml", "--host", "rxe-a", "--ca-file", str(ca), "--root", str(root)]
    once = subprocess.run([FABRICD, "agent", *common, "--once"], env=env, capture_output=True, timeout=120, check=False)
    assert once.returncode in (0, 1, 3), once.stderr.decode()[-2000:]
    assert list((tmp_path / "state" / "agent" / "rxe-a").glob("intent-*.yml"))
    script.mode = "short"
    again = subprocess.run(
        [FABRICD, "agent", *common, "--once"], env=env, capture_output=True, timeout=120, check=False
    )
    assert again.returncode == once.returncode, again.stderr.decode()[-2000:]
    assert "used the last good intent" in again.stderr.decode() and "Content-Length" in again.stderr.decode()
    port = reserve_port()
    proc = _agent([*common, "--listen", f"127.0.0.1:{port}", "--interval", "1"], env, tmp_path / "agent.log")
    try:
        status = wait_for(lambda: (st := _json(f"http://127.0.0.1:{port}/status")) and st["last"] and st, 60)
        assert proc.poll() is None, (tmp_path / "agent.log").read_text()[-2000:]
        assert status and status["intent_error"] and "Content-Length" in status["intent_error"]
        code, text = get(f"http://127.0.0.1:{port}/healthz")
        assert code == 503 and "intent" in text and "last good intent" in text
        # the reconcile ran on the cached intent: whatever it found on this empty root, the intent was not what failed
        assert status["last"] is not None and "fabric.yml" not in (status["last"]["error"] or "")
        _, metrics = get(f"http://127.0.0.1:{port}/metrics")
        assert 'fabricd_agent_intent_ok{host="rxe-a"} 0' in metrics
        script.mode = "good"
        assert wait_for(lambda: (_json(f"http://127.0.0.1:{port}/status") or {}).get("intent_error", 1) is None, 30)
        assert wait_for(lambda: get(f"http://127.0.0.1:{port}/healthz")[0] == 200, 10)
        assert 'fabricd_agent_intent_ok{host="rxe-a"} 1' in get(f"http://127.0.0.1:{port}/metrics")[1]
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
    assert proc.returncode != 70, (tmp_path / "agent.log").read_text()[-2000:]


def _json(url: str) -> Any:
    try:
        code, text = get(url, timeout=2)
    except OSError:
        return None
    return json.loads(text) if code == 200 else None


def test_a_device_reconcile_does_not_wait_for_a_slow_server(
    hostile: tuple[RawServer, Hostile, Path], tmp_path: Path
) -> None:
    """The repair after a driver reload (a device event) uses the intent in hand; the periodic reconcile fetches,
    and a server that trickles costs it the fetch deadline, no more."""
    from fabricd.service.agent import Agent, AgentOptions

    server, script, ca = hostile
    root = tmp_path / "root"
    root.mkdir()
    agent = Agent(
        AgentOptions(
            host="rxe-a",
            source=server.url + "/fabric.yml",
            ca_file=ca,
            cache_dir=tmp_path / "cache",
            root=str(root),
            watch_devices=False,
            intent_deadline_s=2.0,
        )
    )
    agent.reconcile("start", "test")
    assert agent.intent is not None and agent.source.last_error is None
    script.mode = "trickle-body"
    t0 = time.monotonic()
    agent.reconcile("device", "eth0 appeared again")
    assert time.monotonic() - t0 < 1.5
    assert agent.source.stats.failed == 0
    t0 = time.monotonic()
    agent.reconcile("interval", "every 300 s")
    took = time.monotonic() - t0
    assert 1.9 < took < 5.0, took
    assert agent.source.stats.failed == 1 and "deadline" in (agent.status()["intent_error"] or "")
