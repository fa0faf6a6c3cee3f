"""X-3, each paper's conclusion on another paper's networks: the networks are the zoos' (so the
cache's), the shortcut probe's claims on synthetic notions, the presets."""

from __future__ import annotations

import numpy as np
import pytest

from stitchkit.experiments import across, across_conclusions as conclusions, across_identify
from stitchkit.experiments.bansal import common
from stitchkit.experiments.smith import config as smith_config
from stitchkit.results import Run
from stitchkit.scales import preset

from test_across import synthetic


@pytest.mark.parametrize("scale", ["smoke", "demo"])
def test_the_networks_are_the_zoos(scale):
    """Same specs as the pages that trained them, so the same cache entries."""
    s = smith_config.PRESETS[scale]
    digit = across.zoo_pair("smith", scale)
    assert digit.specs == (s.model(scale, "Digit", 0), s.model(scale, "Digit", 1))
    assert conclusions.zoo.smith_resnet18(scale, "cmnist_colour", 0) == s.model(scale, "Colour", 0)
    c = common.PRESETS[scale]
    assert across.zoo_pair("bansal", scale).specs == (c.model(scale, 0), c.model(scale, 1))
    assert across_identify.zoo_pair("hernandez", scale).specs[0] == across.zoo_pair("hernandez", scale).specs[0]


def test_presets_use_x1s_notions_and_settings():
    for scale in ("smoke", "demo", "paper"):
        assert isinstance(preset(conclusions.PRESETS_X3, scale), conclusions.ConclusionsConfig)
    x1, x3 = across.PRESETS_X1["demo"], conclusions.PRESETS_X3["demo"]
    assert (x1.measures, x1.test_images, x1.dm_images) == (x3.measures, x3.test_images, x3.dm_images)


def _probe(colour_like_digit: bool) -> dict:
    """Synthetic notions: the Colour model as similar to the receiver as a second Digit model, or
    much less (every similarity of its diagonal pairs lowered)."""
    digit = synthetic(measures=("cka", "dm"))
    colour = synthetic(measures=("cka", "dm"), seed=1)
    if not colour_like_digit:
        for m in ("cka", "dm"):
            pairs = colour["between"]["pairs"]
            diag = [k for k, (a, b) in enumerate(pairs) if a == b]
            colour["between"]["reps"][m][:, diag] -= across.SIGN[m] * 0.5
    return {"digit": digit, "colour": colour}


def test_a_notion_that_sees_the_shortcut_reproduces_and_one_that_does_not_fails():
    seen = {c.key: c for c in _judged(_probe(colour_like_digit=False))}
    assert seen["cka_sees_shortcut_smith"].verdict == "reproduced"
    assert seen["dm_sees_shortcut_smith"].verdict == "reproduced"
    blind = {c.key: c for c in _judged(_probe(colour_like_digit=True))}
    assert all(c.verdict != "reproduced" for c in blind.values())
    assert all(abs(c.value) < 0.05 for c in blind.values())


def _judged(probe):
    numbers, claims = conclusions.shortcut_claims(probe)
    run = Run("X-3", "demo", {})
    run.record(numbers, claims)
    assert np.isfinite(numbers["smith_cka_gap"])
    return run.claims
