"""X-3, each paper's conclusion on another paper's networks: the networks are the zoos' (so the
cache's), the shortcut probe's claims on synthetic notions, the presets."""

from __future__ import annotations

import numpy as np
import pytest
from test_across import synthetic

from stitchkit.experiments import across
from stitchkit.experiments import across_conclusions as conclusions
from stitchkit.experiments import across_identify
from stitchkit.experiments.bansal import common
from stitchkit.experiments.hernandez import all_layers
from stitchkit.experiments.smith import config as smith_config
from stitchkit.registry.scales import preset
from stitchkit.verdicts import noise
from stitchkit.verdicts.results import Run


@pytest.mark.parametrize("scale", ["smoke", "demo"])
def test_the_networks_are_the_zoos(scale):
    """Same specs as the pages that trained them, so the same cache entries."""
    s = smith_config.PRESETS[scale]
    digit = across.zoo_pair("smith", across.PRESETS_X1[scale])
    assert digit.specs == (s.model("Digit", 0), s.model("Digit", 1))
    assert conclusions.zoo.smith_resnet18(conclusions.PRESETS_X3[scale].smith, "cmnist_colour", 0) == s.model("Colour", 0)
    c = common.PRESETS[scale]
    assert across.zoo_pair("bansal", across.PRESETS_X1[scale]).specs == (c.model(0), c.model(1))
    assert across_identify.one_architecture_pair("hernandez", across_identify.PRESETS_X2[scale]).specs[0] == across.zoo_pair("hernandez", across.PRESETS_X1[scale]).specs[0]
    # X-3 stitches with B-F2A's and H-F2's own configs at its scale (their networks, their stitch recipes)
    x3 = conclusions.PRESETS_X3[scale]
    assert x3.connectivity == common.PRESETS[scale] and x3.triangle == all_layers.PRESETS_F2[scale]


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


def _replicates(means):
    """A crossed replicate table: ``means`` {(receiver seed, sender seed): (lower, upper)}."""
    import pandas as pd

    parts = [_triangle(lo, up, sender=f"ResNet-18 #{s}", controls=False).assign(receiver=f"ResNet-18 #{r}")
             for (r, s), (lo, up) in means.items()]
    return pd.concat(parts, ignore_index=True)


def test_the_triangle_spread_is_the_crossed_spread_of_each_pairs_mean():
    """The component is noise.crossed_spread of the per-pair means (receivers x senders), the
    function the Bansal pages use; its parts are on the page's table."""
    lower = np.array([[95.0, 91.0, 93.0], [85.0, 83.0, 86.0], [90.0, 88.0, 92.0]])
    upper = np.array([[30.0, 35.0, 20.0], [31.0, 33.0, 22.0], [29.0, 36.0, 21.0]])
    means = {(r, s): (lower[a, b] / 100, upper[a, b] / 100)
             for a, r in enumerate(conclusions.RECEIVER_SEEDS) for b, s in enumerate(conclusions.SENDER_SEEDS)}
    spread = conclusions.triangle_spread(_replicates(means))
    assert spread.k == 3
    for col, x in ((conclusions.LOWER_COLUMN, lower), (conclusions.UPPER_COLUMN, upper)):
        want = noise.crossed_spread(x)
        got = spread.spread(col)
        assert np.isclose(got.sd, want.sd, atol=1e-6) and np.isclose(got.df, want.df)
    # receivers dominate the lower mean, senders the upper: each part lands where it belongs
    lo, up = spread.spread(conclusions.LOWER_COLUMN), spread.spread(conclusions.UPPER_COLUMN)
    assert lo.var_receiver > lo.var_sender and up.var_sender > up.var_receiver
    text = spread.text(conclusions.LOWER_COLUMN)
    assert "3 receivers x 3 senders" in text and "ResNet-18 #0, ResNet-18 #3, ResNet-18 #4" in text
    table = conclusions.spread_table(spread)
    assert len(table) == 9 + 5 and table.index[-2][1] == "component: one pair's sd"
    assert np.isclose(table.iloc[-2][conclusions.LOWER_COLUMN], round(lo.sd, 2))


def test_the_triangle_claims_carry_the_network_component_and_can_only_lose_a_verdict():
    """Without the spread the lower triangle (95% of the receiver's, bar 90) is reproduced on the
    images alone; pairs spread by a few points (with few degrees of freedom) make it
    inconclusive; the upper triangle (30%, bar 50) keeps its verdict."""
    table = _triangle()
    fixed = {c.key: c for c in conclusions.triangle_claims(table)[1]}
    lower = np.array([[93.0, 97.0, 95.0], [97.0, 93.0, 95.0], [95.0, 93.0, 97.0]])
    upper = np.array([[30.0, 31.0, 29.0], [30.0, 32.0, 31.0], [29.0, 30.0, 32.0]])
    means = {(r, s): (lower[a, b] / 100, upper[a, b] / 100)
             for a, r in enumerate(conclusions.RECEIVER_SEEDS) for b, s in enumerate(conclusions.SENDER_SEEDS)}
    spread = conclusions.triangle_spread(_replicates(means))
    numbers, claims = conclusions.triangle_claims(table, spread)
    wide = {c.key: c for c in claims}
    assert numbers["bansal_seed_k"] == 3 and numbers["bansal_seed_pairs"] == 9
    assert np.isclose(numbers["bansal_lower_seed_sd"], noise.crossed_spread(lower).sd, atol=1e-6)
    assert np.isclose(numbers["bansal_lower_seed_df"], noise.crossed_spread(lower).df)
    for key in fixed:
        a, b = fixed[key].criterion, wide[key].criterion
        assert b.value == a.value and b.low < a.low and b.high > a.high
        assert "seed-variance component" in b.interval and "3 receivers x 3 senders" in b.interval
    assert fixed["triangle_lower_bansal"].criterion.holds is True
    assert wide["triangle_lower_bansal"].criterion.holds is None
    assert wide["triangle_upper_bansal"].criterion.holds is True
