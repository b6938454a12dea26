"""iproute2 ``rdma statistic show`` (and ``rdma statistic qp show``), text and ``-j`` JSON, into counters per link.

Text grammar (iproute2 rdma/stat.c, res_counter_line/res_get_hwcounters, print_link in rdma/utils.c): a record
starts with ``link <dev>/<port>`` and continues with ``name value`` pairs, on the same line or wrapped onto the
next lines; ``-p`` puts one pair per indented line. ``qp show`` records add ``cntn N``, ``qp-type T``, ``pid N``,
``comm NAME`` and a ``LQPN: <a,b,...>`` line. JSON (``-j``): a list of objects with ``ifname``, ``port`` (and
``ifindex``), each counter as a key with an integer value; qp records add ``cntn``, ``qp-type``, ``pid``, ``comm``
and an ``lqpn`` list.

Captures: tests/golden/readers/rdma/ (iproute2 commit messages, ceems test data, MLNX_OFED iproute2 notes; headers
name each). The JSON shape is from the source above and a public test's ``rdma statistic -j`` fixture: no raw
``-j`` capture from a device was found, so the JSON reader is **unverified** against real output.
Counter names are the driver's ``hw_counters`` names, normalised with :data:`fabricd.readers.rdma.HW_COUNTER_MAP`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from .framing import framed
from .rdma import HW_COUNTER_MAP
from .textparse import TextParseError, content_lines, to_int

_LINK = re.compile(r"^link\s+(?P<dev>[^\s/]+)/(?P<port>\S+)(?P<rest>.*)$")
_LQPN = re.compile(r"^LQPN:\s*<(?P<list>[0-9,\s]*)>$")
STRING_FIELDS = frozenset({"comm", "qp-type"})
INT_FIELDS = frozenset({"cntn", "pid"})


@dataclass(frozen=True, slots=True)
class RdmaStatRecord:
    """One ``link dev/port`` record: the hw counters, and for ``qp show`` the counter id, QP type, pid, comm and
    the QPs bound to it. ``port`` is None for a device-level record (``dev/-``)."""

    device: str
    port: int | None
    counters: dict[str, int]
    cntn: int | None = None
    qp_type: str | None = None
    pid: int | None = None
    comm: str | None = None
    lqpn: tuple[int, ...] = field(default=())

    def normalised(self) -> dict[tuple[str, str | None], int]:
        """Counters with a fabricd meaning (HW_COUNTER_MAP), keyed ``(name, direction)``."""
        out: dict[tuple[str, str | None], int] = {}
        for name, value in self.counters.items():
            meaning = HW_COUNTER_MAP.get(name)
            if meaning is not None:
                out[(meaning[0], meaning[1])] = value
        return out


def _port(text: str, source: str, line: int) -> int | None:
    if text == "-":
        return None
    return to_int(text, source, line, "port")


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*")


class _StatText:
    """The text form read line by line: a ``link`` line opens a record, an ``LQPN:`` line gives its QPs, and every
    other line continues its ``name value`` pairs (a name at the end of a line takes its value from the next)."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.records: list[RdmaStatRecord] = []
        self.cur: dict[str, object] | None = None
        self.pending: str | None = None  # a counter name whose value is on the next line
        self.pending_line = 0

    def close(self) -> None:
        if self.cur is not None:
            self.records.append(RdmaStatRecord(**self.cur))  # type: ignore[arg-type]
        self.cur = None

    def feed(self, n: int, line: str) -> None:
        m = _LINK.match(line)
        if m is not None:
            self._no_pending("end of record")
            self.close()
            self.cur = {"device": m.group("dev"), "port": _port(m.group("port"), self.source, n), "counters": {}}
            self._pairs(n, self.cur, m.group("rest").split())
            return
        if self.cur is None:
            raise TextParseError(
                self.source, n, "output before the first record", expected="'link <dev>/<port>'", got=line
            )
        lq = _LQPN.match(line)
        if lq is not None:
            nums = [x for x in re.split(r"[,\s]+", lq.group("list")) if x]
            self.cur["lqpn"] = tuple(to_int(x, self.source, n, "LQPN") for x in nums)
            return
        self._pairs(n, self.cur, line.split())

    def _no_pending(self, got: str, why: str = "") -> None:
        if self.pending is not None:
            raise TextParseError(
                self.source,
                self.pending_line,
                f"counter {self.pending} has no value{why}",
                expected="a number",
                got=got,
            )

    def _pairs(self, n: int, cur: dict[str, object], tokens: list[str]) -> None:
        """``name value`` pairs: the record's fields (``comm``, ``qp-type``, ``cntn``, ``pid``) and counters."""
        if self.pending is not None:
            tokens = [self.pending, *tokens]
            self.pending = None
        for i in range(0, len(tokens), 2):
            name = tokens[i]
            if i + 1 >= len(tokens):
                self.pending, self.pending_line = name, n
                return
            value = tokens[i + 1]
            if not _NAME.fullmatch(name):
                raise TextParseError(
                    self.source, n, "not a counter name", expected="a name like rx_write_requests", got=name
                )
            if name in STRING_FIELDS:
                cur["qp_type" if name == "qp-type" else name] = value
            elif name in INT_FIELDS:
                cur[name] = to_int(value, self.source, n, name)
            else:
                counters = cur["counters"]
                assert isinstance(counters, dict)
                counters[name] = to_int(value, self.source, n, name)

    def finish(self, text: str) -> list[RdmaStatRecord]:
        self._no_pending("end of output", " (truncated output?)")
        self.close()
        if not self.records:
            raise TextParseError(
                self.source,
                1,
                "no 'link <dev>/<port>' record",
                expected="at least one record",
                got=text.strip()[:80] or "empty output",
            )
        for r in self.records:
            if not r.counters and r.cntn is None:
                raise TextParseError(
                    self.source,
                    1,
                    f"record link {r.device}/{r.port} has no counters",
                    expected="name value pairs",
                    got="nothing",
                )
        return self.records


@framed
def parse_rdma_statistic(text: str, source: str = "rdma statistic show") -> list[RdmaStatRecord]:
    """Parse the text form (plain, wrapped or ``-p``). Raises :class:`TextParseError` on anything else."""
    reader = _StatText(source)
    for n, raw in content_lines(text):
        reader.feed(n, raw.strip())
    return reader.finish(text)


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _json_field(where: str, key: str, value: object, source: str) -> tuple[str, object]:
    """One key of a JSON record -> (``counters`` or the :class:`RdmaStatRecord` field it sets, its value)."""
    if key in STRING_FIELDS:
        if not isinstance(value, str):
            raise TextParseError(source, 1, f"{where}: {key}", expected="a string", got=json.dumps(value))
        return "qp_type" if key == "qp-type" else key, value
    if key == "lqpn":
        if not isinstance(value, list) or not all(_is_int(x) for x in value):
            raise TextParseError(source, 1, f"{where}: lqpn", expected="a list of integers", got=json.dumps(value)[:80])
        return "lqpn", tuple(value)
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return key if key in INT_FIELDS else "counters", value
    raise TextParseError(
        source, 1, f"{where}: counter {key}", expected="a non-negative integer", got=json.dumps(value)[:80]
    )


def _json_record(k: int, obj: object, source: str) -> RdmaStatRecord:
    where = f"record {k}"
    if not isinstance(obj, dict) or not isinstance(obj.get("ifname"), str):
        raise TextParseError(
            source, 1, f"{where}: no ifname", expected='an object with "ifname" and "port"', got=json.dumps(obj)[:80]
        )
    port = obj.get("port")
    if port is not None and not _is_int(port):
        raise TextParseError(source, 1, f"{where}: port", expected="an integer", got=json.dumps(port))
    counters: dict[str, int] = {}
    extra: dict[str, object] = {}
    for key, value in obj.items():
        if key in ("ifname", "port", "ifindex"):
            continue
        field_name, got = _json_field(where, key, value, source)
        if field_name == "counters":
            counters[key] = value
        else:
            extra[field_name] = got
    if not counters and "cntn" not in extra:
        raise TextParseError(source, 1, f"{where}: no counters", expected="counter keys", got=json.dumps(obj)[:80])
    return RdmaStatRecord(device=obj["ifname"], port=port, counters=counters, **extra)  # type: ignore[arg-type]


@framed
def parse_rdma_statistic_json(text: str, source: str = "rdma -j statistic show") -> list[RdmaStatRecord]:
    """Parse ``rdma -j statistic [qp] show``. **Unverified** against a device capture (module docstring)."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise TextParseError(
            source, exc.lineno, f"not JSON: {exc.msg}", expected="a JSON list", got=text.strip()[:80] or "empty output"
        ) from None
    if not isinstance(data, list) or not data:
        raise TextParseError(
            source,
            1,
            "not a list of records",
            expected="a non-empty JSON list",
            got=type(data).__name__ if not isinstance(data, list) else "[]",
        )
    return [_json_record(k, obj, source) for k, obj in enumerate(data)]
