"""Hypothesis over NIC families: any driver, transport and cc: knobs on a host of the mixed-NIC example either
fails `fabricd validate` with located errors, or validates and plans only files of the NIC's own family (no mlx5
path on another family, nothing outside the profile's knobs), and never raises."""

from __future__ import annotations

from pathlib import Path

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fabricd.intent.host import desired_plan, host_intent
from fabricd.intent.nics import BY_FAMILY, PROFILES, profile_for
from fabricd.inventory import load_inventory
from fabricd.nos.validate import run_checks

MIXED = Path(__file__).resolve().parents[2] / "inventory" / "examples" / "mixed-nics.yml"
DRIVERS = sorted({d for p in PROFILES for d in (*p.drivers, *p.rdma_drivers)} | {"banana", "virtio_net"})
KNOBS = sorted({k for p in PROFILES for k in p.tunables} | {"nope"})
TRANSPORTS = [None, "roce_v2_lossless", "roce_v2_lossy", "iwarp", "infiniband"]


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
@given(
    driver=st.sampled_from(DRIVERS),
    transport=st.sampled_from(TRANSPORTS),
    cc=st.dictionaries(st.sampled_from(KNOBS), st.integers(-2, 70000), max_size=3),
)
def test_validate_or_plan_own_family(
    tmp_path_factory: object, driver: str, transport: str | None, cc: dict[str, int]
) -> None:
    data = yaml.safe_load(MIXED.read_text())
    nic = data["hosts"][3]["nics"][0]  # gpu2
    nic["driver"] = driver
    nic["cc"] = cc
    if transport is not None:
        nic["transport"] = transport
    tmp = Path(tmp_path_factory.mktemp("inv"))  # type: ignore[attr-defined]
    path = tmp / "mixed.yml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    inv = load_inventory(path)
    errors = [p for p in run_checks(inv) if p.severity == "error"]
    for p in errors:
        assert p.location is not None and p.location.line > 0, p.render()
    intent = host_intent(inv.fabric, "gpu2")
    paths = [s.path for s in desired_plan(intent).steps if s.path.startswith("/sys/")]
    if errors:
        return
    profile = profile_for(driver)
    assert profile is not None
    allowed = {k.path.split("{")[0] for k in (*profile.roles.values(), *profile.tunables.values())}
    allowed |= {"/sys/kernel/config/rdma_cm/"}
    if profile.cc_commit:
        allowed.add(profile.cc_commit.split("{")[0])
    for p in paths:
        mlnx_tc = profile.traffic_class and p.startswith("/sys/class/infiniband/") and p.endswith("/traffic_class")
        assert mlnx_tc or any(p.startswith(a) for a in allowed), (profile.family, p)
        if profile is not BY_FAMILY["mlx5"]:
            assert "/ecn/" not in p and not p.endswith("/traffic_class")
