"""The platform-pack contract: every spec in the registry is complete, and dispatch is exhaustive.

For each :class:`~fabricd.nos.spec.PlatformSpec` this proves: every field is set; the intent class is the
platform's; each show role has a parser, and the show and running-config parsers read the pack's captures under
tests/golden/ (the files the parser-role registry links to the pack's roles); the watchdog codec's inverse undoes
its forward on timers the platform can express exactly (no render warning) and reads back what it rounded
otherwise; the output file names are unique; the templates folder has ``main.j2``; the driver class loads and has
every :class:`~fabricd.platforms.base.SwitchDriver` verb. An unknown platform is an error everywhere, never a
default platform. A new pack passes this file before anything else (docs/ARCHITECTURE.md, "Adding a fifth NOS").
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import subprocess
import sys
from pathlib import Path

import pytest

from fabricd.errors import FabricdError
from fabricd.model import Platform, Watchdog, WatchdogAction
from fabricd.nos.registry import SPECS, UnknownPlatformError, spec_of
from fabricd.nos.roles import all_roles, captures_of
from fabricd.nos.spec import PlatformSpec
from fabricd.nos.templates import pack_templates
from fabricd.readers.switch.empty import parsed_nothing
from fabricd.readers.switch.model import SwitchCounters

GOLDEN = Path(__file__).parents[1] / "golden"
PLATFORMS = [p.value for p in SPECS]
ROLES = all_roles()

SAMPLE_TIMERS = [
    (200, 200, 100),
    (400, 600, 200),
    (1000, 2000, 100),
    (300, 300, 150),
    (1500, 1000, 250),
    (600, 200, 200),
]
"""(detection, restoration, poll) ms samples for the codec round trip, actions drop and alert alike."""


def spec(platform: str) -> PlatformSpec:
    return SPECS[Platform(platform)]


def capture_text(path: Path) -> str:
    text = path.read_text()
    first, _, rest = text.partition("\n")
    return rest if first.startswith("# source:") else text


def test_every_platform_has_exactly_one_spec() -> None:
    assert set(Platform.BUILTIN) <= set(SPECS)
    for platform, s in SPECS.items():
        assert s.platform is platform


@pytest.mark.parametrize("platform", PLATFORMS)
def test_every_field_is_set(platform: str) -> None:
    s = spec(platform)
    optional = {"document", "template_suffix"}
    for f in dataclasses.fields(s):
        value = getattr(s, f.name)
        if f.name in optional:
            continue
        if f.name == "checks":
            assert isinstance(value, tuple), f.name  # a platform may have no checks of its own
            continue
        assert value is not None and value not in ("", {}), f"{platform}: {f.name} is not set"
    assert (s.document is None) == (s.template_suffix is None), "document and template_suffix go together"
    for field in ("title", "running_config", "suffix", "templates", "driver"):
        assert isinstance(getattr(s, field), str) and getattr(s, field).strip()


@pytest.mark.parametrize("platform", PLATFORMS)
def test_intent_shaping_is_the_platforms(platform: str) -> None:
    s = spec(platform)
    assert s.intent_class.model_fields["platform"].default is s.platform
    assert s.intent.watchdog is s.watchdog.forward, "the builder and the audit must use the same codec"
    assert s.watchdog.model.__name__ in str(s.intent_class.model_fields["watchdog"].annotation)
    for hook in (s.intent.finish, s.intent.ecn, s.intent.headroom_name):
        assert callable(hook)
    assert s.intent.dscp_per_line >= 1 and s.intent.classifier_sep in (" ", ",")


@pytest.mark.parametrize("platform", PLATFORMS)
def test_show_table_is_complete(platform: str) -> None:
    show = spec(platform).show
    assert show.commands, "the exporter polls at least one command"
    assert not set(show.commands) & set(show.optional), "a role is polled or optional, not both"
    roles = {*show.commands, *show.optional}
    assert set(show.parsers) == roles, f"roles without a parser or parsers without a role: {roles ^ set(show.parsers)}"
    for role, parser in show.parsers.items():
        pack = show.module.rpartition(".")[0]  # a parser may live in a sibling module of show.py (sonic/watermark.py)
        assert parser.__module__.rpartition(".")[0] == pack, f"{role}: the parser lives outside the pack"
        assert getattr(importlib.import_module(show.module), parser.__name__) is parser, (
            f"{role}: show.py re-exports its parsers (roles name them as {show.module}.<parser>)"
        )
        command = {**show.optional, **show.commands}[role]
        params = list(inspect.signature(parser).parameters.values())
        required = [p for p in params if p.default is inspect.Parameter.empty]
        if "{interface}" in command:
            assert len(params) == 2, f"{role}: {command!r} is per interface, its parser takes (text, interface)"
        else:
            assert len(required) == 1, f"{role}: {command!r} is run once, its parser takes (text)"
    assert "pfcwd" in roles, "the audit reads the watchdog counters through the pfcwd role"


def _show_captures(platform: str) -> list[tuple[str, Path]]:
    s = spec(platform)
    by_name = {f"{s.show.module}.{getattr(p, '__name__', '')}": p for p in s.show.parsers.values()}
    out = []
    for role in ROLES:
        if role.platform == platform and role.parser in by_name:
            out.extend((role.parser, p) for p in captures_of(role, GOLDEN) if p.is_file())
    return out


@pytest.mark.parametrize("platform", PLATFORMS)
def test_show_parsers_read_the_packs_captures(platform: str) -> None:
    s = spec(platform)
    parsers = {f"{s.show.module}.{getattr(p, '__name__', '')}": p for p in s.show.parsers.values()}
    found = _show_captures(platform)
    assert found, f"{platform}: no capture under tests/golden is linked to a role of its show parsers"
    read = 0
    for dotted, path in found:
        parser = parsers[dotted]
        text = capture_text(path)
        required = [p for p in inspect.signature(parser).parameters.values() if p.default is inspect.Parameter.empty]
        # a per-interface command's parser gets the interface it was run for; it only labels the counters
        got = parser(text, "swp1") if len(required) == 2 else parser(text)
        assert isinstance(got, SwitchCounters)
        if got.problems:
            continue  # a capture kept to prove a shape is refused (its golden test checks the problem)
        assert not parsed_nothing(text, got), f"{path.relative_to(GOLDEN)}: {dotted} read nothing"
        read += 1
    assert read, f"{platform}: no capture parsed to counters"


@pytest.mark.parametrize("platform", PLATFORMS)
def test_running_config_parser_reads_the_packs_captures(platform: str) -> None:
    s = spec(platform)
    folder = GOLDEN / "switch_config" / platform
    paths = sorted(folder.glob("*.txt"))
    assert paths, f"no running-config capture in {folder}"
    ported = 0
    for path in paths:
        config = s.parse_running_config(capture_text(path))
        ported += bool(config.ports)
    assert ported, f"{platform}: the running-config parser read no port from any capture in {folder}"


@pytest.mark.parametrize("platform", PLATFORMS)
def test_version_parser_reads_the_packs_captures(platform: str) -> None:
    s = spec(platform)
    paths = sorted((GOLDEN / "readers" / "switch_version" / platform).glob("*.txt"))
    assert paths, f"no version capture for {platform}"
    for path in paths:
        assert s.parse_version(capture_text(path)), f"{path.relative_to(GOLDEN)}: no version read"
    assert s.parse_version("% Invalid command at '^' marker.") is None


@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize("action", [WatchdogAction.DROP, WatchdogAction.ALERT])
def test_watchdog_codec_round_trips(platform: str, action: WatchdogAction) -> None:
    codec = spec(platform).watchdog
    exact = 0
    for det, rest, poll in SAMPLE_TIMERS:
        wd = Watchdog(detection_ms=det, restoration_ms=rest, poll_ms=poll, action=action)
        notes: list[tuple[str, ...]] = []

        def warn(*note: str, notes: list[tuple[str, ...]] = notes) -> None:
            notes.append(note)

        rendered = codec.forward(wd, warn)
        assert isinstance(rendered, codec.model)
        back = codec.to_ms(rendered)
        # inverse o forward is a fixed point: re-encoding what the device does gives the same watchdog
        again = codec.forward(
            Watchdog(
                detection_ms=back.detection_ms, restoration_ms=back.restoration_ms, poll_ms=back.poll_ms, action=action
            ),
            lambda *n: None,
        )
        assert again == rendered, (platform, wd, back)
        timer_notes = [n for n in notes if n[0] != "watchdog.action" and "restoration" not in n[0]]
        if not timer_notes:
            exact += 1
            assert (back.detection_ms, back.poll_ms) == (det, poll), (platform, wd, back)
            if not any("restoration" in n[0] for n in notes):
                assert back.restoration_ms == rest, (platform, wd, back)
    assert exact, f"{platform}: no sample timer is expressed exactly; pick samples the platform can express"


def test_watchdog_codec_refuses_another_platforms_watchdog() -> None:
    sonic, eos = SPECS[Platform.SONIC].watchdog, SPECS[Platform.ARISTA_EOS].watchdog
    wd = eos.forward(Watchdog(detection_ms=200, restoration_ms=200, poll_ms=100), lambda *n: None)
    with pytest.raises(TypeError):
        sonic.to_ms(wd)


def test_output_file_names_are_unique() -> None:
    """Within a pack the files differ, and no pack writes a host's files; two packs may share a suffix (EOS and
    NX-OS both write ``.cfg``) because files are named by switch, and switch names are unique in a fabric."""
    for s in SPECS.values():
        names = [s.suffix] + ([s.template_suffix] if s.template_suffix else [])
        assert len(names) == len(set(names)), s.platform
        assert not {"sh", "plan.json"} & set(names), s.platform


@pytest.mark.parametrize("platform", PLATFORMS)
def test_templates_folder_has_main(platform: str) -> None:
    s = spec(platform)
    assert pack_templates(s).root.joinpath("main.j2").is_file()  # templates/<id>/ or the pack's own folder


@pytest.mark.parametrize("platform", PLATFORMS)
def test_driver_loads_and_has_every_verb(platform: str) -> None:
    from fabricd.platforms.base import SwitchDriver
    from fabricd.platforms.registry import driver_class

    cls = spec(platform).driver_class()
    assert driver_class(Platform(platform)) is cls
    assert cls.platform is Platform(platform)
    verbs = [n for n in dir(SwitchDriver) if not n.startswith("_") and callable(getattr(SwitchDriver, n, None))]
    assert {"open", "close", "get_config", "load_candidate", "commit", "rollback", "run"} <= set(verbs)
    missing = [v for v in verbs if not callable(getattr(cls, v, None))]
    assert not missing, f"{cls.__name__} lacks {missing}"
    assert hasattr(cls, "capabilities") and hasattr(cls, "rollback_token")
    assert isinstance(cls.connected, property)


@pytest.mark.parametrize("bad", ["junos", "", "SONIC", "linux_host"])
def test_unknown_platform_is_an_error(bad: str) -> None:
    with pytest.raises(UnknownPlatformError) as exc:
        spec_of(bad)
    assert isinstance(exc.value, FabricdError)
    assert exc.value.hint is not None and "arista_eos" in exc.value.hint


@pytest.mark.integration  # a fresh interpreter, as a process
def test_validate_and_render_load_no_driver_library() -> None:
    """The specs name their drivers by path: the registry, render and validate import no netmiko."""
    code = (
        "import sys\n"
        "import fabricd.nos.registry, fabricd.render, fabricd.intent.checks, fabricd.cli.render, fabricd.cli.validate\n"
        "bad = sorted(m for m in ('netmiko', 'paramiko', 'fabricd.platforms.netmiko_base') if m in sys.modules)\n"
        "bad += sorted(m for m in sys.modules if m.startswith('fabricd.nos.') and m.endswith('.driver'))\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
