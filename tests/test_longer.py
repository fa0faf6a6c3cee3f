"""The one training-length control (:mod:`stitchkit.stitching.longer`): the deciding cells retrained
with the longer recipe through the stitch grid, one call per :class:`Cells`, and the control attached to
the claim with the book's text."""

from __future__ import annotations

import pandas as pd
import pytest

from stitchkit.data.datasets import DataSpec
from stitchkit.stitching import longer
from stitchkit.stitching.grid_spec import LONGER, Net, StitchRecipe
from stitchkit.verdicts.claims import ClaimSpec
from stitchkit.verdicts.noise import Estimate
from stitchkit.verdicts.results import at_most


def test_retrain_makes_one_grid_call_per_cells_with_the_longer_recipe_and_tags_its_rows(monkeypatch):
    calls = []

    def grid(senders, receivers, pairs, recipe, data, **kw):
        calls.append(([s.name for s in senders], [r.name for r in receivers], pairs, recipe.train.epochs))
        return pd.DataFrame({"sender": [s.name for s in senders for _ in pairs], "cut_i": [p[0] for _ in senders
                                                                                           for p in pairs]})

    monkeypatch.setattr(longer, "stitch_grid", grid)
    recipe = StitchRecipe()
    a, b, r = Net("a", None), Net("b", None), Net("r", None)
    cells = [longer.Cells((a, b), (r,), (("c1", "c1"),), recipe, DataSpec("cifar10")),
             longer.Cells((a,), (r,), (("c2", "c2"), ("c3", "c3")), recipe, DataSpec("cifar10"), tags={"init": 1})]
    out = longer.retrain(cells)
    assert calls == [(["a", "b"], ["r"], [("c1", "c1")], LONGER * recipe.train.epochs),
                     (["a"], ["r"], [("c2", "c2"), ("c3", "c3")], LONGER * recipe.train.epochs)]
    assert list(out.sender) == ["a", "b", "a", "a"] and list(out.cut_i) == ["c1", "c1", "c2", "c3"]
    assert out.init.isna().sum() == 2 and list(out.init.iloc[2:]) == [1, 1]
    assert longer.retrain(cells[:1], 2) is not None and calls[-1][-1] == 2 * recipe.train.epochs
    assert longer.retrain([]).empty


def test_with_length_control_attaches_the_control_in_place_with_the_books_text():
    crit = at_most(Estimate(1.0, 0.5, 1.5), 3.0, "x")
    claims = [ClaimSpec(key="c", text="a claim", criterion=crit, paper="p", ours="o")]
    new = longer.with_length_control(claims, "c", at_most(Estimate(5.0, 4.0, 6.0), 3.0, "x"), "the worst cell retrained")
    assert claims[0] is new and not new.controls[-1].passed
    assert new.controls[-1].text == f"the verdict survives {LONGER}x longer stitch training: the worst cell retrained"
    assert longer.length_control(crit, crit, factor=2).passed
    with pytest.raises(KeyError, match="no claim"):
        longer.with_length_control(claims, "missing", crit)
