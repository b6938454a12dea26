"""L1: the jinja2 environment and renderers; templates only print what intent decided.

``render_devices(fabric)`` yields a :class:`~fabricd.render.render.DeviceRender` per switch and host;
``write_render`` writes its files. See docs/platforms.md for what each platform gets.
"""

from __future__ import annotations

from .env import environment, template_dirs
from .render import DeviceRender, RenderedFile, render_devices, render_host_intent, render_switch_intent, write_render

__all__ = [
    "DeviceRender",
    "RenderedFile",
    "environment",
    "render_devices",
    "render_host_intent",
    "render_switch_intent",
    "template_dirs",
    "write_render",
]
