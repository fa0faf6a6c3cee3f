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


# --------------------------------------------------------------------------------------------
# The triangle's network-to-network component

N = 2000
BASE = np.arange(N) % 5 != 0  # the receiver: 80% correct


def _cell(sender: str, i: int, j: int, rel: float) -> dict:
    """A stitch keeping ``rel`` of the receiver's correct images (the first ones dropped)."""
    c = BASE.copy()
    c[np.flatnonzero(BASE)[:int(round((1 - rel) * BASE.sum()))]] = False
    s = conclusions.STAGES
    return {"sender": sender, "receiver": "ResNet-18 #0", "cut_i": s[i], "cut_j": s[j], "i": i, "j": j,
            "accuracy": c.mean(), "receiver_accuracy": BASE.mean(), "penalty": BASE.mean() - c.mean(), "correct": c,
            "receiver_correct": BASE}


def _triangle(lower: float = 0.95, upper: float = 0.30, sender: str = "ResNet-18 #1", controls: bool = True):
    import pandas as pd

    k = len(conclusions.STAGES)
    rows = [_cell(sender, i, j, lower if j <= i else upper) for i in range(k) for j in range(k)]
    if controls:
        rows += [_cell(conclusions.SELF, i, i, 1.0) for i in range(k)]
        rows += [_cell(conclusions.RANDOM, i, i, 0.1) for i in range(k - 2, k)]
    return pd.DataFrame(rows)


def _replicates(senders, receivers):
    """A replicate table: ``senders`` {seed: (lower, upper)} into #0, ``receivers`` {seed: ...} of #1."""
    import pandas as pd

    parts = []
    for varies, group in (("sender", senders), ("receiver", receivers)):
        for seed, (lo, up) in group.items():
            t = _triangle(lo, up, sender=f"ResNet-18 #{seed if varies == 'sender' else 1}", controls=False)
            parts.append(t.assign(receiver=f"ResNet-18 #{0 if varies == 'sender' else seed}", varies=varies))
    return pd.concat(parts, ignore_index=True)


def test_the_triangle_spread_adds_the_senders_and_the_receivers_sd():
    reps = _replicates({1: (0.95, 0.30), 3: (0.91, 0.35), 4: (0.93, 0.20)},
                       {0: (0.95, 0.30), 3: (0.85, 0.30), 4: (0.90, 0.30)})
    spread = conclusions.triangle_spread(reps)
    assert spread.k == 3
    s, r = np.std([95, 91, 93], ddof=1), np.std([95, 85, 90], ddof=1)
    assert np.isclose(spread.part(conclusions.LOWER_COLUMN, "sender"), s, atol=0.01)
    assert np.isclose(spread.part(conclusions.LOWER_COLUMN, "receiver"), r, atol=0.01)
    assert np.isclose(spread.sd(conclusions.LOWER_COLUMN), np.hypot(s, r), atol=0.01)
    assert np.isclose(spread.sd(conclusions.UPPER_COLUMN), np.std([30, 35, 20], ddof=1), atol=0.01)
    text = spread.text(conclusions.LOWER_COLUMN)
    assert "3 senders (ResNet-18 #1, ResNet-18 #3, ResNet-18 #4) into ResNet-18 #0" in text
    assert "3 receivers (ResNet-18 #0, ResNet-18 #3, ResNet-18 #4) of ResNet-18 #1" in text
    table = conclusions.spread_table(spread)
    assert table.index[-1][1] == "component (in quadrature)" and len(table) == 3 + 1 + 3 + 1 + 1


def test_the_triangle_claims_carry_the_network_component_and_can_only_lose_a_verdict():
    """Without the spread the lower triangle (95% of the receiver's, bar 90) is reproduced on the
    images alone; senders and receivers each spread by about 2 points (t(4) x 2.8 = 7.8 points)
    make it inconclusive; the upper triangle (30%, bar 50) keeps its verdict."""
    table = _triangle()
    fixed = {c.key: c for c in conclusions.triangle_claims(table)[1]}
    lows = {s: v for s, v in zip((1, 3, 4, 5, 6), (0.93, 0.97, 0.95, 0.93, 0.97))}
    ups = (0.30, 0.31, 0.29, 0.30, 0.32)
    spread = conclusions.triangle_spread(_replicates({s: (v, u) for (s, v), u in zip(lows.items(), ups)},
                                                     {s: (v, u) for s, v, u in zip((0, 3, 4, 5, 6), lows.values(), ups)}))
    numbers, claims = conclusions.triangle_claims(table, spread)
    wide = {c.key: c for c in claims}
    assert numbers["bansal_seed_k"] == 5
    assert np.isclose(numbers["bansal_lower_seed_sd"], np.hypot(*[np.std([93, 97, 95, 93, 97], ddof=1)] * 2), atol=0.02)
    for key in fixed:
        a, b = fixed[key].criterion, wide[key].criterion
        assert b.value == a.value and b.low < a.low and b.high > a.high
        assert "seed-variance component" in b.interval and "5 senders" in b.interval and "5 receivers" in b.interval
    assert fixed["triangle_lower_bansal"].criterion.holds is True
    assert wide["triangle_lower_bansal"].criterion.holds is None
    assert wide["triangle_upper_bansal"].criterion.holds is True
