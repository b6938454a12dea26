"""``RenderWarning``: a value of the intent that a platform cannot express exactly.

The switch intent records one whenever it rounds, clamps or drops a value for a platform (a timer rounded to a
multiple of the poll, a threshold rounded to whole kbytes, headroom a NOS computes itself). Each names the device,
the field (dotted path in the per-platform switch intent), what was intended and what is rendered.
"""

from __future__ import annotations

from pydantic import Field

from fabricd.model import Platform
from fabricd.model.types import Model


class RenderWarning(Model):
    """One value a platform cannot express exactly. ``rendered`` is what the config says instead ("-" = nothing)."""

    device: str = Field(description="switch name")
    platform: Platform
    field: str = Field(description="dotted path of the value in the switch intent, e.g. watchdog.detection_ms")
    intended: str = Field(description="the value the policy asks for, with its unit")
    rendered: str = Field(description="what the rendered config expresses instead, with its unit; '-' = nothing")
    reason: str = Field(description="why the platform cannot express it")

    def render(self) -> str:
        return (
            f"{self.device} ({self.platform.value}): {self.field}: intended {self.intended}, rendered "
            f"{self.rendered}: {self.reason}"
        )


class WarningSink:
    """Collects the warnings of one device while its intent is being decided."""

    __slots__ = ("device", "items", "platform")

    def __init__(self, device: str, platform: Platform) -> None:
        self.device = device
        self.platform = platform
        self.items: list[RenderWarning] = []

    def __call__(self, field: str, intended: str, rendered: str, reason: str) -> None:
        self.items.append(
            RenderWarning(
                device=self.device,
                platform=self.platform,
                field=field,
                intended=intended,
                rendered=rendered,
                reason=reason,
            )
        )
