"""The conformance corpus itself: it finds every shipped inventory's switch renders, and the intent space yields
fabrics that validate accepts (so the per-OS property tests check something)."""

from __future__ import annotations

from conformance_corpus import PLATFORMS, accepted, corpus, intent_space
from hypothesis import HealthCheck, given, settings

from fabricd.model import Platform


def test_corpus_covers_every_platform() -> None:
    """Every registered pack has renders in the corpus (its render goldens at least); the built-in four are in the
    lab fabric too (the demo simulates them; a pack without a lab simulator is judged on its goldens and examples,
    and by the whole-model test, which draws every registered platform)."""
    for platform in PLATFORMS:
        labels = [label for label, _ in corpus(platform)]
        assert len(labels) >= 3, (platform, labels)
        if platform in Platform.BUILTIN:
            assert any(label.startswith("inventory/lab:") for label in labels), platform


@settings(max_examples=60, deadline=None, derandomize=True, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(doc=intent_space())
def _draw(seen: list[bool], doc: dict[str, object]) -> None:
    seen.append(accepted(doc) is not None)


def test_intent_space_reaches_accepted_fabrics() -> None:
    """The draws and their count in one test, with the count's state local (two tests sharing a module-level list
    passed only in file order)."""
    seen: list[bool] = []
    _draw(seen)
    assert len(seen) >= 10, "hypothesis drew almost nothing"
    assert sum(seen) >= 5, (
        f"{sum(seen)} of {len(seen)} drawn fabrics accepted by validate: the property tests would check almost nothing"
    )
