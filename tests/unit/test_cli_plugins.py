"""Commands from other distributions (entry point group ``fabricd.commands``): fabricd-lab's rows are listed and
load on first use; without the lab, its commands name the distribution to install; a broken plugin is reported and
left out, and never replaces one of fabricd's own commands."""

from __future__ import annotations

from importlib.metadata import EntryPoint

import pytest
from typer.testing import CliRunner

from fabricd.cli import main, plugins


@pytest.fixture
def no_cache() -> object:
    plugins.plugin_commands.cache_clear()
    yield None
    plugins.plugin_commands.cache_clear()


def test_the_lab_plugs_in_its_commands(no_cache: object) -> None:
    table = main.command_table()
    assert [n for n in table if n in ("lab", "demo", "report")] == ["demo", "report", "lab"]
    assert table["demo"][0] == "fabricd_lab.cli.demo" and table["validate"][0] == "fabricd.cli.validate"
    assert list(table)[: len(main.COMMANDS)] == list(main.COMMANDS)  # fabricd's own first


@pytest.mark.parametrize("name", ["demo", "lab", "report"])
def test_without_the_lab_its_commands_say_what_to_install(
    name: str, no_cache: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(plugins, "entry_points", lambda group: [])
    result = CliRunner().invoke(main.build_app(), [name, "--help"])
    assert result.exit_code == 2, result.output
    text = " ".join(result.output.split())
    assert f"'fabricd {name}' comes with the fabricd-lab distribution" in text and "pip install ./lab" in text
    listing = CliRunner().invoke(main.build_app(), ["--help"])
    assert listing.exit_code == 0 and f"│ {name} " not in listing.output and "│ validate " in listing.output


def test_a_broken_or_greedy_plugin_is_reported_and_cannot_replace_a_command(
    no_cache: object, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    greedy = {"validate": ("fabricd_lab.cli.demo", "not the real validate"), "extra": ("fabricd_lab.cli.demo", "x")}
    monkeypatch.setattr("fabricd_lab.plugin.GREEDY", greedy, raising=False)
    eps = [
        EntryPoint("broken", "no_such_module_anywhere:TABLE", plugins.GROUP),
        EntryPoint("shape", "fabricd_lab.plugin:VM_RUNNERS", plugins.GROUP),
        EntryPoint("greedy", "fabricd_lab.plugin:GREEDY", plugins.GROUP),
    ]
    monkeypatch.setattr(plugins, "entry_points", lambda group: eps)
    table = main.command_table()
    err = " ".join(capsys.readouterr().err.split())
    assert "plugin broken (no_such_module_anywhere:TABLE) failed to load" in err
    assert "plugin shape (fabricd_lab.plugin:VM_RUNNERS) is not a table" in err
    assert table["validate"][0] == "fabricd.cli.validate" and table["extra"][0] == "fabricd_lab.cli.demo"


def test_runner_sources_come_from_entry_points(monkeypatch: pytest.MonkeyPatch, tmp_path: object) -> None:
    """fabricd-lab's lab VMs are the installed runner source; without any, the reason names what to install."""
    from fabricd.errors import UsageError
    from fabricd.traffic import plugins as runners

    monkeypatch.setenv("FABRICD_STATE_DIR", str(tmp_path))
    assert list(runners.runner_sources()) == ["lab-vm"]
    pool, why = runners.running_pool("lab")
    assert pool is None and why == "no runner pool 'lab' is running ('fabricd lab vm up INVENTORY' starts one)"
    monkeypatch.setattr(runners, "entry_points", lambda group: [])
    pool, why = runners.running_pool("lab")
    assert pool is None and "no traffic runner source is installed" in why and "pip install ./lab" in why
    with pytest.raises(UsageError) as info:
        runners.require_pool("lab")
    assert "--via ssh" in (info.value.hint or "")
