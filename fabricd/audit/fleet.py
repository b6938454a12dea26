"""``fabricd audit fleet``: every host's compliance as its ``fabricd agent`` reported it to Prometheus.

The agents export ``fabricd_host_check_compliant{host,interface,check}``, ``fabricd_agent_info{host,mode}``,
``fabricd_agent_last_success_timestamp_seconds{host}`` and ``fabricd_agent_reconcile_interval_seconds{host}``
(:mod:`fabricd.service.agent`). A handful of instant queries (``/api/v1/query``, aggregated by Prometheus so that
only failures travel in full) turn them into one :class:`~fabricd.audit.report.AuditReport` per host:

- ``FLEET-AGENT``: an agent reports for the host now. The hosts expected are the inventory's (when given) and every
  host that had an agent within ``lookback``; one without an agent is named, with nothing else checked;
- ``FLEET-RECONCILE``: its last successful reconcile is within two intervals plus 5 minutes (the
  FabricAgentReconcileStale rule);
- one check per audit check code the agent ran (``HOST-MTU``, ``HOST-PFC``, ...): failed on the NICs whose series
  is 0 in the agent's last reconcile;
- ``FLEET-INVENTORY`` (with an inventory): a host that reports but is not in the inventory.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from pydantic import JsonValue

from fabricd.errors import FabricdError, Fix
from fabricd.model.checks import by_code

from .host import CHECK_BY_CODE as HOST_BY_CODE
from .report import AuditReport, CheckResult, CheckSpec, Finding, Status, result_of

STALE_GRACE_S = 300.0

Q_AGENTS = "max by (host, mode) (fabricd_agent_info)"
Q_SEEN = "max by (host) (max_over_time(fabricd_agent_info[{lookback}]))"
Q_CHECKS = "count by (host, check) (fabricd_host_check_compliant)"
Q_FAILED = "max by (host, interface, check) (fabricd_host_check_compliant) == 0"
LAST_OK = "fabricd_agent_last_success_timestamp_seconds"
Q_LAST_OK = f"max by (host) ({LAST_OK})"
Q_INTERVAL = "max by (host) (fabricd_agent_reconcile_interval_seconds)"


class FleetQueryError(FabricdError):
    """Prometheus could not be queried (exit 3: the fleet view is a target that failed)."""

    exit_code = 3


Sample = tuple[dict[str, str], float, float]
"""(labels, value, evaluation timestamp)."""

Query = Callable[[str], list[Sample]]


def prometheus_query(base_url: str, *, timeout_s: float = 30.0, headers: dict[str, str] | None = None) -> Query:
    """An instant-query function against ``base_url`` (standard library only)."""
    base = base_url.rstrip("/")

    def query(expr: str) -> list[Sample]:
        url = f"{base}/api/v1/query?" + urllib.parse.urlencode({"query": expr})
        req = urllib.request.Request(url, headers=headers or {})
        try:
            with urllib.request.urlopen(req, timeout=timeout_s) as resp:
                body = json.loads(resp.read())
        except urllib.error.HTTPError as exc:
            try:
                detail = json.loads(exc.read()).get("error", exc.reason)
            except (ValueError, AttributeError):
                detail = exc.reason
            raise FleetQueryError(
                f"{base}: Prometheus rejected {expr!r}: HTTP {exc.code} {detail}",
                hint="check the --prometheus URL (the server's base, e.g. http://prom:9090)",
            ) from None
        except (urllib.error.URLError, OSError, ValueError) as exc:
            raise FleetQueryError(
                f"{base}: Prometheus query failed: {getattr(exc, 'reason', exc)}",
                hint="check the --prometheus URL and that the server is up",
            ) from None
        if body.get("status") != "success":
            raise FleetQueryError(f"{base}: Prometheus rejected {expr!r}: {body.get('error', 'unknown error')}")
        data = body.get("data", {})
        if data.get("resultType") != "vector":
            raise FleetQueryError(f"{base}: {expr!r} returned {data.get('resultType')}, expected a vector")
        out: list[Sample] = []
        for item in data.get("result", []):
            ts, value = item["value"]
            out.append((dict(item.get("metric", {})), float(value), float(ts)))
        return out

    return query


@dataclass
class HostView:
    host: str
    mode: str | None = None
    checks: set[str] = field(default_factory=set)
    failed: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    last_ok: float | None = None
    interval_s: float | None = None


@dataclass
class FleetResult:
    reports: list[AuditReport]
    absent: list[str]
    stale: list[str]
    noncompliant: list[str]
    unknown: list[str]
    evaluated_at: float | None

    @property
    def compliant(self) -> bool:
        return all(r.compliant for r in self.reports)

    def summary(self) -> dict[str, int]:
        return {
            "hosts": len(self.reports),
            "compliant": sum(1 for r in self.reports if r.compliant),
            "absent": len(self.absent),
            "stale": len(self.stale),
            "noncompliant": len(self.noncompliant),
            "unknown": len(self.unknown),
        }


def _fleet(code: str, title: str, hint: str) -> CheckSpec:
    return CheckSpec(code=code, title=title, subject="fleet", hint=hint)


FLEET_CHECKS: tuple[CheckSpec, ...] = (
    _fleet(
        "FLEET-INVENTORY",
        "host is in the inventory",
        "fix the agent's --host (FABRICD_HOST), or add the host to the inventory",
    ),
    _fleet(
        "FLEET-AGENT",
        "fabricd agent reports",
        "start it: `systemctl enable --now fabricd-agent` or the DaemonSet (exporters/agent/); check that "
        "Prometheus scrapes it (job fabricd-agent)",
    ),
    _fleet(
        "FLEET-RECONCILE",
        "last successful reconcile is recent",
        "`journalctl -u fabricd-agent` or the pod's log names the error",
    ),
)
"""The fleet's own checks; the per-host checks are the agents' ``HOST-*`` (:data:`fabricd.audit.host.HOST_CHECKS`)."""
FLEET = by_code(FLEET_CHECKS)


def _title(code: str) -> str:
    """A check the agent ran: its declared title (the agent's code when this fabricd does not know it)."""
    spec = HOST_BY_CODE.get(code)
    return spec.title if spec is not None else code


def _views(query: Query, lookback: str) -> tuple[dict[str, HostView], set[str], float | None]:
    """Every host with an agent now (its mode, checks, failures, last success and interval), the hosts seen
    within ``lookback``, and the evaluation time."""
    views: dict[str, HostView] = {}
    now: float | None = None
    for labels, _, ts in query(Q_AGENTS):
        if host := labels.get("host"):
            views[host] = HostView(host, mode=labels.get("mode"))
            now = ts
    seen = {labels["host"] for labels, _, _ in query(Q_SEEN.format(lookback=lookback)) if labels.get("host")}
    for labels, _, _ in query(Q_CHECKS):
        if (v := views.get(labels.get("host", ""))) is not None and labels.get("check"):
            v.checks.add(labels["check"])
    for labels, _, _ in query(Q_FAILED):
        if (v := views.get(labels.get("host", ""))) is not None and labels.get("check"):
            v.failed[labels["check"]].append(labels.get("interface", ""))
    for labels, value, ts in query(Q_LAST_OK):
        if (v := views.get(labels.get("host", ""))) is not None:
            v.last_ok = value
            now = ts
    for labels, value, _ in query(Q_INTERVAL):
        if (v := views.get(labels.get("host", ""))) is not None:
            v.interval_s = value
    return views, seen, now


def audit_fleet(
    query: Query,
    inventory_hosts: Iterable[str] | None = None,
    *,
    lookback: str = "1d",
    host_filter: Callable[[str], bool] | None = None,
) -> FleetResult:
    """Query the agents' series and judge every host; ``inventory_hosts`` are expected even if never seen."""
    views, seen, now = _views(query, lookback)
    expected = set(inventory_hosts) if inventory_hosts is not None else None
    hosts = sorted((expected or set()) | seen | set(views))
    if host_filter is not None:
        hosts = [h for h in hosts if host_filter(h)]
    result = FleetResult([], [], [], [], [], now)
    for host in hosts:
        checks: list[CheckResult] = []
        if expected is not None:
            checks.append(_inventory_check(host, expected, result))
        v = views.get(host)
        if v is None:
            result.absent.append(host)
            why = "had an agent within " + lookback if host in seen else "never reported"
            checks.append(
                result_of(
                    FLEET["FLEET-AGENT"],
                    Status.FAIL,
                    [
                        FLEET["FLEET-AGENT"].finding(
                            obj=host,
                            path="fabricd_agent_info{host}",
                            message=f"no fabricd agent reports for this host ({why})",
                            expected="an agent",
                            got=None,
                        )
                    ],
                )
            )
        else:
            checks += _agent_checks(v, now, result)
        result.reports.append(AuditReport(kind="host", target=host, checks=checks))
    return result


def _inventory_check(host: str, expected: set[str], result: FleetResult) -> CheckResult:
    spec = FLEET["FLEET-INVENTORY"]
    if host in expected:
        return result_of(spec, Status.PASS)
    result.unknown.append(host)
    return result_of(
        spec,
        Status.FAIL,
        [
            spec.finding(
                obj=host,
                path="fabricd_agent_info{host}",
                message="an agent reports for a host the inventory does not have",
                expected="an inventory host",
                got=host,
            )
        ],
    )


def _agent_checks(v: HostView, now: float | None, result: FleetResult) -> list[CheckResult]:
    """FLEET-AGENT passed, FLEET-RECONCILE, and one check per audit check code the agent ran."""
    checks = [
        result_of(FLEET["FLEET-AGENT"], Status.PASS, note=f"mode {v.mode}"),
        _reconcile_check(v, now, result.stale),
    ]
    for code in sorted(v.checks):
        bad = sorted(v.failed.get(code, []))
        findings = [
            Finding(
                code=code,
                object=iface,
                path=f"fabricd_host_check_compliant{{check={code}}}",
                message="fails in the agent's last reconcile",
                expected=1,
                got=0,
                fixes=[Fix(("audit", "host"), {"host": v.host}, "on the host shows expected and actual values")],
            )
            for iface in bad
        ]
        checks.append(
            CheckResult(code=code, title=_title(code), status=Status.FAIL if bad else Status.PASS, findings=findings)
        )
    if v.failed:
        result.noncompliant.append(v.host)
    return checks


def _reconcile_check(v: HostView, now: float | None, stale: list[str]) -> CheckResult:
    if v.last_ok is None:
        return _stale(
            v.host,
            stale,
            message="the agent has not reconciled successfully yet",
            expected="a successful reconcile",
            got=None,
            hint="`curl HOST:9863/status` shows the agent's last error",
        )
    interval = v.interval_s or 300.0
    limit = 2 * interval + STALE_GRACE_S
    age = (now - v.last_ok) if now is not None else 0.0
    if age > limit:
        return _stale(
            v.host,
            stale,
            message=f"last successful reconcile {age:.0f} s ago",
            expected=f"<= {limit:.0f} s",
            got=round(age),
        )
    return result_of(FLEET["FLEET-RECONCILE"], Status.PASS, note=f"{age:.0f} s ago, interval {interval:g} s")


def _stale(
    host: str, stale: list[str], *, message: str, expected: str, got: JsonValue, hint: str | None = None
) -> CheckResult:
    """A failed FLEET-RECONCILE: ``host`` joins ``stale``, the finding is on its last-success timestamp."""
    spec = FLEET["FLEET-RECONCILE"]
    stale.append(host)
    finding = spec.finding(obj=host, path=LAST_OK, message=message, expected=expected, got=got, hint=hint)
    return result_of(spec, Status.FAIL, [finding])
