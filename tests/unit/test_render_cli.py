"""`fabricd render` end to end through the Typer app (in-process), and the shipped templates stay logic-free."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fabricd import settings
from fabricd.cli.main import build_app
from fabricd.inventory import load_inventory
from fabricd.nos.registry import SPECS
from fabricd.nos.templates import pack_templates, template_logic

runner = CliRunner()


def _run(*args: str) -> tuple[int, str, str]:
    """In-process run of the Typer app (fast); wide console so tables do not wrap."""
    result = runner.invoke(build_app(), list(args), env={"COLUMNS": "250"})
    return result.exit_code, result.stdout, result.stderr


Runner = Callable[..., tuple[int, str, str]]


def test_render_out_writes_every_device(tmp_path: Path) -> None:
    code, out, _ = _run("render", "--out", str(tmp_path), "--output", "json")
    assert code == 0
    data = json.loads(out)
    fabric = load_inventory(settings.default_inventory()).fabric
    assert data["totals"]["devices"] == len(fabric.switches) + len(fabric.hosts)
    for sw in fabric.switches:
        suffix = {"sonic": "json", "arista_eos": "cfg", "cisco_nxos": "cfg", "cumulus_nvue": "nvue"}[sw.platform.value]
        assert (tmp_path / "switches" / f"{sw.name}.{suffix}").is_file()
    assert (tmp_path / "switches" / "leaf1-sonic.cli").read_text().startswith("# fabricd: leaf1-sonic")
    for host in fabric.hosts:
        script = tmp_path / "hosts" / f"{host.name}.sh"
        assert script.stat().st_mode & 0o111
        assert json.loads((tmp_path / "hosts" / f"{host.name}.plan.json").read_text())["host"] == host.name
    by_name = {d["device"]: d for d in data["devices"]}
    assert {w["field"] for w in by_name["leaf2-eos"]["warnings"]} == {"ports.headroom"}
    assert by_name["leaf1-sonic"]["files"][0]["bytes"] == len((tmp_path / "switches/leaf1-sonic.json").read_bytes())


def test_render_text_summary_lists_devices_and_warnings(tmp_path: Path) -> None:
    code, out, _ = _run("render", "--out", str(tmp_path))
    assert code == 0
    assert "leaf3-nxos" in out and "cisco_nxos" in out and "gpu8" in out
    assert "cannot express exactly" in out and "ports.headroom" in out


def test_render_device_prints_one_config() -> None:
    code, out, err = _run("render", "--device", "leaf2-eos")
    assert code == 0
    assert out.startswith("! fabricd: leaf2-eos (arista_eos)") and out.rstrip().endswith("end")
    assert "ports.headroom" in err  # warnings go to stderr
    code, out, _ = _run("render", "--device", "leaf1-sonic")
    assert code == 0 and json.loads(out)["PFC_WD"]["GLOBAL"] == {"POLL_INTERVAL": "100"}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "give --out DIR"),
        (("--device", "leaf9-eos"), "no device named 'leaf9-eos'"),
        (("--device", "leaf2-eos", "--templates-dir", "/nonexistent/fabricd"), "does not exist"),
    ],
)
def test_render_bad_usage_exits_2_with_a_message(args: tuple[str, ...], message: str, run_main: Runner) -> None:
    code, _, err = run_main("render", *args)
    assert code == 2
    assert message in err and "Traceback" not in err


def test_templates_dir_overrides_one_section(tmp_path: Path) -> None:
    (tmp_path / "arista_eos").mkdir()
    (tmp_path / "arista_eos" / "vlans.j2").write_text(
        "{% for v in sw.vlans %}\nvlan {{ v.id }}\n   name site-{{ v.name }}\n!\n{% endfor %}\n"
    )
    code, out, _ = _run("render", "--device", "leaf2-eos", "--templates-dir", str(tmp_path))
    assert code == 0
    assert "   name site-rdma" in out and "qos profile FABRICD_ROCE" in out  # the rest comes from the shipped set


def test_a_broken_override_is_a_render_error(tmp_path: Path, run_main: Runner) -> None:
    (tmp_path / "arista_eos").mkdir()
    (tmp_path / "arista_eos" / "vlans.j2").write_text("{{ sw.no_such_field }}\n")
    code, _, err = run_main("render", "--device", "leaf2-eos", "--templates-dir", str(tmp_path))
    assert code == 2 and "undefined value" in err and "no_such_field" in err


# --- dumb templates ---------------------------------------------------------------------------------------------


def test_shipped_templates_only_print_loop_and_test_flags() -> None:
    """DESIGN §2: no arithmetic, filters, comparisons or calls in templates; intent decides everything. The shipped
    templates and every registered pack's own (a pack may carry them in its package: fabricd.nos.templates) are held
    to the one rule, :func:`~fabricd.nos.templates.template_logic`."""
    root = settings.data_dir("templates")
    packs = [pack_templates(s) for s in SPECS.values()]
    assert {p.parent.name for p in root.rglob("*.j2")} == {*(p.namespace for p in packs if not p.own), "linux_host"}
    sources = [*root.rglob("*.j2"), *(t for p in packs if p.own for t in p.sources())]
    logic = [f"{path}:{line}: {tag}" for path in sources for line, tag in template_logic(path.read_text())]
    assert logic == [], "templates that compute; print a field of the intent instead"
    for pack in packs:
        assert pack.root.joinpath("main.j2").is_file()
        assert len(pack.sources()) >= 6, f"{pack.platform}: one template per section"
    assert (root / "linux_host" / "main.j2").is_file() and len(list((root / "linux_host").glob("*.j2"))) >= 6


def test_template_logic_names_what_computes() -> None:
    text = (
        "{# {{ a | b }} #}\n{{ sw.name }}\n{% if sw.x or not sw.y %}\n{{ sw.mtu * 2 }}\n{% if sw.n > 1 %}{% endif %}\n"
    )
    assert template_logic(text) == [(4, "{{ sw.mtu * 2 }}"), (5, "{% if sw.n > 1 %}")]  # comments skipped, lines kept


@pytest.mark.integration  # runs shellcheck
def test_lab_host_scripts_pass_shellcheck(tmp_path: Path) -> None:
    if shutil.which("shellcheck") is None:
        pytest.skip("shellcheck is not installed (Debian package shellcheck)")
    code, _, _ = _run("render", "--out", str(tmp_path))
    assert code == 0
    scripts = sorted(str(p) for p in (tmp_path / "hosts").glob("*.sh"))
    sc = subprocess.run(["shellcheck", "--severity=style", *scripts], capture_output=True, text=True, check=False)
    assert sc.returncode == 0, sc.stdout


GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "render"


def test_an_inventory_with_check_errors_is_refused_unless_forced(tmp_path: Path, run_main: Runner) -> None:
    """pcp_odd_values is deliberately invalid (DWRR shares sum to 120 %, ...): render says so, --force renders."""
    inv = str(GOLDEN / "sonic" / "pcp_odd_values" / "inventory.yml")
    code, out, err = run_main("render", inv, "--out", str(tmp_path / "a"))
    assert code == 2 and out == ""
    assert "DWRR weights do not sum to 100 %" in err and "--force" in err
    assert not (tmp_path / "a").exists()
    code, out, err = run_main("render", inv, "--out", str(tmp_path / "b"), "--force")
    assert code == 0 and "warning:" in err and "hosts[gpu2].nics[ens1f0np0]" in err
    assert (tmp_path / "b" / "switches" / "leaf1.json").is_file()
    assert "ports[Ethernet48].headroom.cable_m" in out  # the render warnings table, brackets intact
