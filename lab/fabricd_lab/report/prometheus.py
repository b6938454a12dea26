"""Fetch dashboard panels from a Prometheus server's HTTP API (``/api/v1/query_range``), standard library only."""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request

from .record import Panel, ReportError, Series

# The same panels as exporters/dashboards (fabric overview): title, unit, PromQL.
DASHBOARD_PANELS: tuple[tuple[str, str, str], ...] = (
    (
        "NIC PFC pause ratio (time paused per second)",
        "ratio",
        "sum by (interface, priority, direction) (rate(fabricd_nic_pfc_pause_duration_seconds_total[5s]))",
    ),
    (
        "Switch PFC pause frames/s",
        "frames/s",
        "sum by (switch, interface, priority, direction) (rate(fabricd_switch_pfc_pause_frames_total[5s]))",
    ),
    (
        "ECN marks and CNPs/s",
        "packets/s",
        "sum by (switch) (rate(fabricd_switch_queue_ecn_marked_packets_total[5s]))"
        " or sum by (device) (rate(fabricd_rdma_cnp_handled_total[5s]))",
    ),
    (
        "Queue drops/s",
        "packets/s",
        "sum by (switch, interface, queue) (rate(fabricd_switch_queue_dropped_packets_total[5s]))",
    ),
    ("PFC storms active (watchdog)", "active", "max by (device, interface, priority) (fabricd_pfc_storm_active)"),
)


def query_range(
    base_url: str, query: str, start: float, end: float, *, step_s: float = 1.0, timeout_s: float = 10.0
) -> list[Series]:
    """Run one range query; return its series. Raises ReportError on HTTP or API errors."""
    params = urllib.parse.urlencode(
        {"query": query, "start": f"{start:.3f}", "end": f"{end:.3f}", "step": f"{step_s:g}"}
    )
    url = f"{base_url.rstrip('/')}/api/v1/query_range?{params}"
    try:
        with urllib.request.urlopen(url, timeout=timeout_s) as resp:
            body = json.loads(resp.read().decode("utf-8"))
    except (urllib.error.URLError, OSError, json.JSONDecodeError) as exc:
        raise ReportError(
            f"{base_url}: Prometheus query failed: {exc}",
            hint="check the URL (`fabricd demo --keep-running` prints it) and that it is up",
        ) from None
    if body.get("status") != "success":
        raise ReportError(f"{base_url}: Prometheus rejected {query!r}: {body.get('error', 'unknown error')}")
    out = []
    for item in body["data"]["result"]:
        metric = dict(item.get("metric", {}))
        name = metric.pop("__name__", query)
        points = [(float(t), float(v)) for t, v in item.get("values", [])]
        out.append(Series(name=name, labels=metric, points=points))
    return out


def fetch_panels(base_url: str, start: float, end: float, *, step_s: float = 1.0) -> list[Panel]:
    return [
        Panel(title=title, unit=unit, query=q, series=query_range(base_url, q, start, end, step_s=step_s))
        for title, unit, q in DASHBOARD_PANELS
    ]
