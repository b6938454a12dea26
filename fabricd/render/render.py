"""Render per-device configs from intents: switch configs for four NOSes, host scripts and host plans.

Output files (relative to ``--out DIR``):

=============  ==========================================  =====================================================
Device         Files                                       What
=============  ==========================================  =====================================================
sonic          ``switches/<name>.json``                    CONFIG_DB tables, ``json.dumps`` of the intent model
               ``switches/<name>.cli``                     the equivalent ``sudo config ...`` / ``sonic-cfggen``
                                                           lines the push driver sends (templates/sonic)
arista_eos     ``switches/<name>.cfg``                     EOS running-config text (templates/arista_eos)
cisco_nxos     ``switches/<name>.cfg``                     NX-OS running-config text (templates/cisco_nxos)
cumulus_nvue   ``switches/<name>.nvue``                    ``nv set`` commands (templates/cumulus_nvue)
host           ``hosts/<name>.sh``                         idempotent bash (templates/linux_host)
               ``hosts/<name>.plan.json``                  the host plan (fabricd.intent.host.desired_plan)
=============  ==========================================  =====================================================

Nothing here prints or exits; a template error is a :class:`~fabricd.errors.RenderError` naming the device and
the template.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import jinja2

from fabricd.errors import RenderError
from fabricd.intent.host import HostIntent, desired_plan, host_intent
from fabricd.intent.render_warnings import RenderWarning
from fabricd.model import Fabric
from fabricd.nos.registry import AnySwitchIntent, SwitchIntentBuilder, spec_of
from fabricd.nos.templates import pack_templates
from fabricd.safepath import inside, write_inside

from .env import environment, searched
from .host_script import host_script

log = logging.getLogger(__name__)

HOST_TEMPLATES = "linux_host"


@dataclass(frozen=True)
class RenderedFile:
    """One output file: its path relative to the output directory and its text."""

    relpath: str
    text: str

    @property
    def lines(self) -> int:
        return self.text.count("\n")

    @property
    def size_bytes(self) -> int:
        return len(self.text.encode())


@dataclass(frozen=True)
class DeviceRender:
    """Everything rendered for one device. ``files[0]`` is what ``fabricd render --device`` prints."""

    device: str
    kind: str  # "switch" | "host"
    platform: str  # a Platform value, or "linux_host"
    files: tuple[RenderedFile, ...]
    warnings: tuple[RenderWarning, ...] = field(default=())

    @property
    def primary(self) -> RenderedFile:
        return self.files[0]


def _render(env: jinja2.Environment, template: str, device: str, **context: object) -> str:
    try:
        return env.get_template(template).render(**context)
    except jinja2.TemplateNotFound as exc:
        raise RenderError(
            f"{device}: template {exc.name} not found (searched {', '.join(searched(env.loader))})",
            hint="check --templates-dir: it must hold <platform>/main.j2 and the section templates it includes",
        ) from None
    except jinja2.UndefinedError as exc:
        raise RenderError(
            f"{device}: template {template} used an undefined value: {exc.message}",
            hint="templates may only print fields of the intent (see fabricd/intent/switch.py, "
            "fabricd/nos/<platform>/intent.py or fabricd/intent/host.py)",
        ) from None
    except jinja2.TemplateSyntaxError as exc:
        raise RenderError(
            f"{device}: template {exc.filename or exc.name}:{exc.lineno}: syntax error: {exc.message}",
            hint="fix the template (Jinja2 syntax)",
        ) from None


def render_switch_intent(intent: AnySwitchIntent, env: jinja2.Environment) -> DeviceRender:
    """Render one switch intent into its file(s)."""
    platform = intent.platform
    spec = spec_of(platform)
    name = intent.name
    main = f"switches/{name}.{spec.suffix}"
    template = pack_templates(spec).main  # a pack whose folder is missing or has no main.j2: PackTemplatesError
    if spec.document is not None:
        files: tuple[RenderedFile, ...] = (
            RenderedFile(main, spec.document(intent)),
            RenderedFile(f"switches/{name}.{spec.template_suffix}", _render(env, template, name, sw=intent)),
        )
    else:
        files = (RenderedFile(main, _render(env, template, name, sw=intent)),)
    return DeviceRender(name, "switch", platform.value, files, tuple(intent.warnings))


def render_host_intent(intent: HostIntent, env: jinja2.Environment) -> DeviceRender:
    """Render one host intent into its script and its plan JSON."""
    name = intent.host
    script = _render(env, f"{HOST_TEMPLATES}/main.j2", name, host=host_script(intent))
    plan = desired_plan(intent).to_json()
    return DeviceRender(
        name,
        "host",
        HOST_TEMPLATES,
        (RenderedFile(f"hosts/{name}.sh", script), RenderedFile(f"hosts/{name}.plan.json", plan)),
    )


def device_names(fabric: Fabric) -> list[str]:
    return [s.name for s in fabric.switches] + [h.name for h in fabric.hosts]


def render_devices(
    fabric: Fabric, *, templates_dir: Path | None = None, device: str | None = None
) -> Iterator[DeviceRender]:
    """Render every switch then every host (or only ``device``), lazily, in inventory order.

    Raises RenderError for an unknown ``device`` (with close names as a hint) or a template problem.
    """
    env = environment(templates_dir)
    if device is not None and fabric.switch(device) is None and fabric.host(device) is None:
        import difflib

        close = difflib.get_close_matches(device, device_names(fabric), n=3)
        raise RenderError(
            f"no device named {device!r} in fabric {fabric.name!r}",
            hint=f"did you mean {', '.join(close)}?" if close else "see `fabricd show` for the device names",
        )
    builder = SwitchIntentBuilder(fabric)
    for switch in fabric.switches:
        if device is None or switch.name == device:
            log.debug("rendering switch %s (%s)", switch.name, switch.platform.value)
            yield render_switch_intent(builder.build(switch), env)
    for host in fabric.hosts:
        if device is None or host.name == device:
            log.debug("rendering host %s", host.name)
            yield render_host_intent(host_intent(fabric, host.name), env)


def write_render(render: DeviceRender, out_dir: Path) -> list[Path]:
    """Write one device's files under ``out_dir`` (creating ``switches/`` and ``hosts/``); returns the paths.
    A file name that would resolve outside ``out_dir`` is refused (:class:`fabricd.safepath.PathEscapeError`)."""
    paths = []
    for f in render.files:
        path = inside(out_dir, *f.relpath.split("/"))
        path.parent.mkdir(parents=True, exist_ok=True)
        path = write_inside(path.parent, path.name, f.text)  # no link or FIFO followed at the last component
        if f.relpath.endswith(".sh"):
            path.chmod(0o755)
        paths.append(path)
    return paths
