"""SONiC buffer watermarks (sonic-utilities ``watermarkstat``), as pure parsers.

``show priority-group watermark shared|headroom`` and ``show queue watermark unicast|multicast|all`` (and their
``persistent-watermark`` forms) print a title line, then a ``tabulate`` table of one row per port and one column per
priority group (``PG0``..``PG7``, up to ``PG15`` on some ASICs) or queue (``UC<n>``, ``MC<n>``, ``ALL<n>``; SONiC's
queue index, whose numbering differs per ASIC), in bytes, ``N/A`` where the ASIC has no value::

    Ingress shared pool occupancy per PG:
         Port    PG0    PG1    PG2    PG3    PG4    PG5    PG6    PG7
    ---------  -----  -----  -----  -----  -----  -----  -----  -----
    Ethernet0    100    101    102    103    104    105    106    107

A multi-ASIC switch prints one titled table per namespace (``... per PG: (Namespace asic0)``). The title says what
the numbers are (shared pool or headroom); the command only says which watermark (periodic or persistent), so each
role has its own function. Real shapes: sonic-utilities tests/wm_input/wm_test_vectors.py (the tool's own output
over its mock COUNTERS_DB), captures in tests/golden/readers/switch/sonic/ (``<role>--<source>.txt``).
"""

from __future__ import annotations

import re

from fabricd.readers.framing import framed
from fabricd.readers.switch.model import BufferWatermark, SwitchCounters, WatermarkKind
from fabricd.readers.switch.tables import dashed_tables, is_prompt, keyed_rows, to_int

_TITLE = re.compile(
    r"^\s*(?P<title>Ingress shared pool occupancy per PG|Ingress headroom per PG|"
    r"Egress shared pool occupancy per (?P<qtype>unicast|multicast|all) queues?)\s*:"
)
_PG = re.compile(r"^PG(\d+)$")
_QUEUE = re.compile(r"^(UC|MC|ALL)(\d+)$")
_QKIND: dict[str, WatermarkKind] = {"UC": "unicast", "MC": "multicast", "ALL": "all"}


def _blocks(text: str) -> list[tuple[str | None, str]]:
    """The text cut at each title line: ``(kind the title names, the lines after it)``; lines before the first
    title belong to kind None (a table there is not a watermark table)."""
    out: list[tuple[str | None, list[str]]] = [(None, [])]
    for line in text.splitlines():
        m = _TITLE.match(line)
        if m is None:
            out[-1][1].append(line)
            continue
        title = m.group("title")
        kind = "headroom" if "headroom" in title else "shared" if "PG" in title else m.group("qtype")
        out.append((kind, []))
    return [(kind, "\n".join(lines)) for kind, lines in out]


def parse_watermarks(text: str, command: str, *, persistent: bool = False) -> SwitchCounters:
    """Every titled watermark table in ``text`` (several namespaces, or several commands' outputs in one capture).
    A non-empty text without one is a problem naming the command and the first line (an empty parse is never a
    success); a cell that is not a number (``N/A``) is kept as None."""
    out: list[BufferWatermark] = []
    found = False
    for kind, block in _blocks(text):
        if kind is None:
            continue
        rows, seen = keyed_rows(dashed_tables(block), "Port")
        found = found or seen
        for port, row in rows:
            for col in row:
                pg, queue = _PG.match(col), _QUEUE.match(col)
                if pg is not None and kind in ("shared", "headroom"):
                    out.append(
                        BufferWatermark(
                            port,
                            "pg",
                            int(pg.group(1)),
                            "shared" if kind == "shared" else "headroom",
                            to_int(row.get(col)),
                            persistent,
                        )
                    )
                elif queue is not None and kind not in ("shared", "headroom"):
                    out.append(
                        BufferWatermark(
                            port, "queue", int(queue.group(2)), _QKIND[queue.group(1)], to_int(row.get(col)), persistent
                        )
                    )
    return SwitchCounters(watermarks=tuple(out), problems=_unread(text, found, command))


def _unread(text: str, found: bool, command: str) -> tuple[str, ...]:
    lines = [
        (n, line.strip())
        for n, line in enumerate(text.splitlines(), 1)
        if line.strip() and not is_prompt(line) and not line.lstrip().startswith("#")
    ]
    if found or not lines:
        return ()
    n, first = lines[0]
    return (
        f"sonic: {command!r}: no watermark table read from a non-empty output (expected a title such as "
        f"'Ingress headroom per PG:' above a Port, PG0.. or UC0.. table; line {n}: {first[:80]!r})",
    )


@framed
def parse_pg_watermark_shared(text: str) -> SwitchCounters:
    """``show priority-group watermark shared``: peak shared-pool bytes per port and ingress PG."""
    return parse_watermarks(text, "show priority-group watermark shared")


@framed
def parse_pg_watermark_headroom(text: str) -> SwitchCounters:
    """``show priority-group watermark headroom``: peak headroom (xoff room) bytes per port and ingress PG: how
    much of a lossless PG's headroom the in-flight data after a pause used."""
    return parse_watermarks(text, "show priority-group watermark headroom")


@framed
def parse_queue_watermark_unicast(text: str) -> SwitchCounters:
    """``show queue watermark unicast``: peak shared-pool bytes per port and unicast egress queue."""
    return parse_watermarks(text, "show queue watermark unicast")


@framed
def parse_queue_watermark_multicast(text: str) -> SwitchCounters:
    """``show queue watermark multicast``: peak shared-pool bytes per port and multicast egress queue (a switch
    without multicast queues says so in one sentence, which is nothing to report)."""
    return parse_watermarks(text, "show queue watermark multicast")


@framed
def parse_pg_persistent_watermark(text: str) -> SwitchCounters:
    """``show priority-group persistent-watermark shared|headroom``: as the periodic watermark, but cleared only by
    ``sonic-clear priority-group persistent-watermark``."""
    return parse_watermarks(text, "show priority-group persistent-watermark", persistent=True)


@framed
def parse_queue_persistent_watermark(text: str) -> SwitchCounters:
    """``show queue persistent-watermark unicast|multicast|all``."""
    return parse_watermarks(text, "show queue persistent-watermark", persistent=True)
