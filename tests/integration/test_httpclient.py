"""fabricd.httpclient against a raw HTTP server on 127.0.0.1 (tests/integration/rawhttp.py): the checks the intent
and webhook tests do not reach on their own (conflicting or bad Content-Length, a length over the limit refused
before the body is read, cancellation, no body read for a non-2xx)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest
from rawhttp import Piece, RawServer, Request, response

from fabricd.httpclient import HttpError, Reading, request

pytestmark = pytest.mark.integration


@pytest.fixture()
def serve() -> Iterator[list[RawServer]]:
    made: list[RawServer] = []
    yield made
    for s in made:
        s.close()


def _server(made: list[RawServer], pieces: list[Piece], *, hold: bool = False) -> RawServer:
    def script(req: Request) -> list[Piece]:
        return pieces

    s = RawServer(script, hold=hold)
    made.append(s)
    return s


def test_good_answers(serve: list[RawServer]) -> None:
    s = _server(serve, [response("200 OK", {"ETag": '"x"'}, b"hello")])
    r = request(s.url + "/a?b=1", deadline_s=5)
    assert (r.status, r.body, r.headers["ETag"]) == (200, b"hello", '"x"')
    assert s.requests[0].path == "/a?b=1" and s.requests[0].headers["connection"] == "close"
    post = request(s.url + "/p", method="POST", body=b"{}", deadline_s=5, read=Reading(body=False))
    assert post.status == 200 and post.body == b"" and s.requests[1].body == b"{}"


@pytest.mark.parametrize(
    ("head", "kind"),
    [
        ({"Content-Length": "5", "X": "y"}, None),
        ({"Content-Length": "abc"}, "length"),
        ({"Content-Length": "5, 6"}, "length"),
    ],
)
def test_content_length_forms(serve: list[RawServer], head: dict[str, str], kind: str | None) -> None:
    s = _server(serve, [response("200 OK", head, b"hello")])
    if kind is None:
        assert request(s.url, deadline_s=5).body == b"hello"
    else:
        with pytest.raises(HttpError) as err:
            request(s.url, deadline_s=5)
        assert err.value.kind == kind


def test_conflicting_content_lengths_are_refused(serve: list[RawServer]) -> None:
    raw = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 3\r\n\r\nhello"
    s = _server(serve, [raw])
    with pytest.raises(HttpError, match="conflicting") as err:
        request(s.url, deadline_s=5)
    assert err.value.kind == "length"


def test_a_length_over_the_limit_is_refused_before_the_body(serve: list[RawServer]) -> None:
    s = _server(serve, [response("200 OK", {"Content-Length": str(1 << 30)}), 3600.0], hold=True)
    t0 = time.monotonic()
    with pytest.raises(HttpError) as err:
        request(s.url, deadline_s=30, read=Reading(max_bytes=1000))
    assert err.value.kind == "too_large" and time.monotonic() - t0 < 5


def test_a_non_2xx_body_is_not_read(serve: list[RawServer]) -> None:
    s = _server(serve, [b"HTTP/1.1 503 Busy\r\nContent-Length: 100000\r\n\r\n", 3600.0], hold=True)
    t0 = time.monotonic()
    r = request(s.url, deadline_s=30)
    assert (r.status, r.body) == (503, b"") and time.monotonic() - t0 < 5


def test_abort_cuts_a_request_at_once(serve: list[RawServer]) -> None:
    s = _server(serve, [3600.0], hold=True)
    abort = threading.Event()
    threading.Timer(0.5, abort.set).start()
    t0 = time.monotonic()
    with pytest.raises(HttpError, match="cancelled"):
        request(s.url, deadline_s=60, abort=abort)
    assert time.monotonic() - t0 < 3


def test_a_refused_connection_and_a_bad_url(serve: list[RawServer]) -> None:
    s = _server(serve, [])
    port = s.port
    s.close()
    with pytest.raises(HttpError) as err:
        request(f"http://127.0.0.1:{port}/", deadline_s=5)
    assert err.value.kind == "transport" and "refused" in err.value.message.lower()
    for bad in ("ftp://x/", "http:///nohost", "http://h:99999/"):
        with pytest.raises(HttpError) as err:
            request(bad, deadline_s=1)
        assert err.value.kind == "url"
