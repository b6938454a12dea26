"""Basic auth answers a wrong password in the same time whoever the user is (issue 23, part 5): an unknown user, a
user whose hash has a cheap bcrypt cost and one with a costly hash. Real bcrypt; the test compares medians of
interleaved measurements (a ratio, not absolute times).

Under load: each check is measured in CPU time of the checking thread (``time.thread_time``: bcrypt runs on it),
which is what a wrong password costs the server and what an idle server's answer time follows. Wall time on a loaded
machine is mostly the scheduler's: at a load average of 7 on 2 cores the wall-time medians of 7 checks were 69, 95
and 160 ms for three checks of the same cost. The equalising is work done (a decoy bcrypt), so CPU time sees it."""

from __future__ import annotations

import base64
import statistics
import time

import bcrypt

from fabricd.collectors.webconfig import WebConfig

CHEAP, COSTLY = 4, 10


def _header(user: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


def _time(cfg: WebConfig, header: str) -> float:
    t0 = time.thread_time()
    assert not cfg.authorized(header)
    return time.thread_time() - t0


def test_a_wrong_password_takes_as_long_for_every_user_name() -> None:
    cfg = WebConfig(
        users={
            "cheap": bcrypt.hashpw(b"right-1", bcrypt.gensalt(CHEAP)),
            "costly": bcrypt.hashpw(b"right-2", bcrypt.gensalt(COSTLY)),
        }
    )
    who = {
        "unknown": _header("nobody", "wrong"),
        "cheap": _header("cheap", "wrong"),
        "costly": _header("costly", "wrong"),
    }
    for header in who.values():  # warm up (the decoy hash is made on first use)
        _time(cfg, header)
    samples: dict[str, list[float]] = {k: [] for k in who}
    for _ in range(7):
        for k, header in who.items():
            samples[k].append(_time(cfg, header))
    medians = {k: statistics.median(v) for k, v in samples.items()}
    slowest = max(medians.values())
    shown = ", ".join(f"{n} {v * 1000:.1f} ms" for n, v in medians.items())
    for k, m in medians.items():
        # cost 4 is 64 times cheaper than cost 10: a cheap user's name would show as a ratio near 0.02
        assert m / slowest > 0.5, f"a wrong password for {k} answers sooner than for the others: {shown}"


def test_the_right_password_still_passes_for_every_cost() -> None:
    cfg = WebConfig(
        users={
            "cheap": bcrypt.hashpw(b"right-1", bcrypt.gensalt(CHEAP)),
            "costly": bcrypt.hashpw(b"right-2", bcrypt.gensalt(COSTLY)),
        }
    )
    assert cfg.authorized(_header("cheap", "right-1")) and cfg.authorized(_header("costly", "right-2"))
    assert not cfg.authorized(_header("cheap", "right-2")) and not cfg.authorized(_header("costly", "right-1"))
