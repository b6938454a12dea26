"""The platform id is a registry-checked name (issue 24, part 6): a plain string the model checks against the ids the
registry serves, with a located error that lists them and a hint, so a pack can come from an entry point."""

from __future__ import annotations

import copy
import pickle

import pytest
from pydantic import ValidationError

from fabricd.model import Platform, Switch
from fabricd.model.platform import known_platforms


def _switch(platform: str, **context: object) -> Switch:
    return Switch.model_validate({"name": "s1", "platform": platform, "mgmt": {"host": "h"}}, context=context or None)


def test_an_id_is_one_object_and_a_plain_string() -> None:
    sw = _switch("sonic")
    assert sw.platform is Platform.SONIC and sw.platform == "sonic" and sw.platform.value == "sonic"
    assert pickle.loads(pickle.dumps(sw.platform)) is Platform.SONIC and copy.deepcopy(sw.platform) is Platform.SONIC
    assert f"{sw.platform}" == "sonic" and sw.model_dump(mode="json")["platform"] == "sonic"
    assert tuple(Platform(p) for p in ("sonic", "arista_eos", "cisco_nxos", "cumulus_nvue")) == Platform.BUILTIN


@pytest.mark.parametrize(
    ("given", "hint"),
    [
        ("eos", "did you mean 'arista_eos'?"),
        ("Sonic", "did you mean 'sonic'?"),
        ("sonic-vs", "did you mean 'sonic'?"),
        ("qfx", "entry point group"),
        ("Q F X", "lower case letters"),
    ],
)
def test_an_unknown_id_is_refused_with_the_known_ones_and_a_hint(given: str, hint: str) -> None:
    with pytest.raises(ValidationError) as exc:
        _switch(given)
    (err,) = exc.value.errors()
    assert err["type"] == "fabricd_rule" and err["loc"] == ("platform",)
    assert err["ctx"]["expected"] == "one of " + ", ".join(known_platforms())
    assert hint in err["ctx"]["hint"]


def test_a_validation_context_checks_against_its_own_registry() -> None:
    """How a caller with another registry (a test's, a plugin host's) checks an inventory."""
    assert _switch("qfx", platforms=["qfx"]).platform is Platform("qfx")
    with pytest.raises(ValidationError):
        _switch("sonic", platforms=["qfx"])


def test_the_schema_lists_the_known_ids() -> None:
    schema = Switch.model_json_schema()["properties"]["platform"]
    assert schema["type"] == "string" and schema["enum"] == list(known_platforms())
