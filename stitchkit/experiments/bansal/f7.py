"""B-F7 (Bansal et al. 2021, Section 6): CKA for "more is better", the per-layer linear CKA between the
weaker and stronger networks of B-F2C, B-F3B and B-F3C (no stitching). Those pages' networks and
recipes are :mod:`.f2c_f3ab` and :mod:`.f3c_f6`, on the sweeps' machinery in :mod:`.bottoms`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from ...networks import network, zoo
from ...registry.scales import MIN_TEST_IMAGES, param
from ...verdicts import controls, noise, results
from ...verdicts.claims import ClaimSpec
from ...verdicts.results import at_least, at_most, within
from .bottoms import cka_per_cut, own_correct
from .common import cka_estimate, cka_reps_of
from .f2c_f3ab import PRESETS_F2C, thousands_label
from .f3c_f6 import width_name

__all__ = ["CKA_SAMPLES_NEAR_ZERO", "CKA_SIMILAR_MIN", "CKA_WIDTH_RANGE", "PAPER_WIDTH_CKA", "PRESETS_F7", "MoreCKAConfig",
           "SEED_CLAIMS_F7", "more_cka", "more_cka_summary"]


# --------------------------------------------------------------------------------------------
# B-F7: CKA for "more is better" (the models of B-F2C, B-F3B and B-F3C; no stitching)


@dataclass(frozen=True)
class MoreCKAConfig:
    """B-F7: per-layer linear CKA between the weaker and stronger networks of B-F2C/F3B/F3C."""

    width: int | None = param(None, "base width k of the ResNet-18 (paper 64); None: the recipe's width", ge=1)
    model_epochs: float | None = param(None, "passes over the training set per model; None: the recipe's", ge=0)
    final_bn: bool = param(True, "BN-ReLU before pooling (standard pre-activation net; absent in the authors' code)")
    samples_pair: tuple[int, ...] = param((5_000, 25_000), "training images of the two networks compared "
                                          "(paper 5k vs 25k; seed 1, as B-F2C's bottoms)", length=2,
                                          items={"ge": 128, "le": 50_000})
    width_pair: tuple[float, ...] = param((0.25, 2.0), "widths compared (paper x0.25 vs x2; seed 0, as B-F3C)",
                                          length=2, items={"gt": 0, "le": 16})
    length_pair: tuple[float, ...] = param((0.5, 1.0), "snapshots compared, as fractions of one run (paper "
                                           "epoch 80 vs 160; seed 0, as B-F3B)", length=2, items={"gt": 0, "le": 1})
    cka_images: int = param(2000, "test images for the per-layer CKA", ge=10, le=10_000)
    test_size: int | None = param(None, "test images of each network's own accuracy (the premises; B-F2C's grid's "
                                        "images); None: all 10k", ge=MIN_TEST_IMAGES, le=10_000)
    net: zoo.Recipe = zoo.recipe_field("the ResNet-18s' recipe (zoo.BANSAL_RESNET18 at the preset's scale)")

    def variant(self, seed: int, **changes) -> network.ModelSpec:
        return zoo.bansal_resnet18(self.net, seed, width=self.width, epochs=self.model_epochs, final_bn=self.final_bn,
                                   **changes)

    def pairs(self) -> dict[str, tuple[network.ModelSpec, network.ModelSpec]]:
        (n1, n2), (w1, w2), (l1, l2) = self.samples_pair, self.width_pair, self.length_pair
        return {f"{thousands_label(n1)} vs {thousands_label(n2)} samples": (self.variant(1, train_size=n1),
                                                  self.variant(1, train_size=n2)),
                f"x{w1:g} vs x{w2:g} width": (self.variant(0, width_factor=w1),
                                              self.variant(0, width_factor=w2)),
                f"epoch {160 * l1:g} vs {160 * l2:g} of 160": (self.variant(0, stop=l1),
                                                              self.variant(0, stop=l2))}


PRESETS_F7 = zoo.at_scale({
              "smoke": MoreCKAConfig(samples_pair=(512, 2048), width_pair=(0.5, 1.0), cka_images=500,
                                     test_size=PRESETS_F2C["smoke"].test_size),
              "demo": MoreCKAConfig(),
              # One GPU: the gpu networks of the pages whose "more is better" this page measures by CKA: B-F2C's
              # 5k and 25k bottoms, B-F3B's snapshots (half and all of the seed-0 run) and B-F3C's x0.25 and x2,
              # widths 8 and 64 (B-F3C's gpu base width is 32): here x0.125 and x1 of the base 64, the paper's
              # ratio of 8 (its x0.25 and x2 are 16 and 128; the width-128 network alone would be ~210 s).
              "gpu": MoreCKAConfig(width_pair=(0.125, 1.0)),
              "paper": MoreCKAConfig()}, net=zoo.BANSAL_RESNET18)
# B-F7's CKAs judged with the CKA's seed-variance component (.seeds.cka_seed_component, .seeds.widen):
# each is between two networks trained differently, both of whose seeds vary, so each is widened as a
# difference of two networks
SEED_CLAIMS_F7: dict[str, int] = {"samples_far": 2, "width_range": 2, "length_similar": 2}

CKA_SAMPLES_NEAR_ZERO = 0.2  # "CKA can go as low as 0" for 5k vs 25k samples
CKA_WIDTH_RANGE = (0.7, 0.9)  # "CKA between x0.25 and x2 is in the range 0.7-0.9"
# ... drawn on B-F3C's CKA panels, on the line of that pair of widths (absent at smoke's widths)
PAPER_WIDTH_CKA = {frozenset((width_name(0.25), width_name(2.0))): (*CKA_WIDTH_RANGE,
                                                                      "paper: x0.25 vs x2, 0.7-0.9 (App. B.2)")}
CKA_SIMILAR_MIN = 0.5  # "CKA finds the representations similar" (epochs); B-F5's bound for high CKA
# the premise of "width_range" (issue 46): the paper compares trained networks of two widths (its x0.25 and
# x2 ResNet-18s differ by a few points), so the thinner one's test accuracy is within this of the wider one's
WIDTH_TRAINED_GAP = 10.0


def more_cka(cfg: MoreCKAConfig, *, device=None, store=None, progress: bool = True) -> pd.DataFrame:
    """Linear CKA per cut (every cut) for each pair of :meth:`MoreCKAConfig.pairs`; columns
    pair, cut, cka, and cka_reps / cka_n (its bootstrap replicates over the CKA images, the same
    resamples for every pair and cut)."""
    rows = []
    recipe = replace(PRESETS_F2C["demo"].recipe(), test_size=cfg.test_size)  # B-F2C's grids' test images
    for name, (a, b) in cfg.pairs().items():
        model = network.build(a, num_classes=10, in_channels=3)
        # each network's own per-image results on the test set: the width premise compares them
        own = [own_correct(network.load_or_train(s, device=device, store=store, progress=progress)[0], s, recipe, device)
               for s in (a, b)]
        for cut, reps in cka_per_cut(a, b, list(model.cuts), cfg.cka_images, device=device, store=store,
                                     progress=progress, replicates=True).items():
            rows.append({"pair": name, "cut": cut, "cka": float(reps[0]), "cka_reps": reps,
                         "cka_n": cfg.cka_images, "a_correct": own[0], "b_correct": own[1]})
    return pd.DataFrame(rows)


def _pair_premise(t: pd.DataFrame, pair: str, text: str, threshold: float, direction: str,
                  what: str) -> tuple[results.Control, noise.Estimate | None]:
    """A premise on the accuracy gap of ``pair``'s two networks (the second's test accuracy minus
    the first's, in points, compared image by image on its bootstrap interval): ``direction``
    ``threshold``; not measured (a failed control) where the table has no per-image results."""
    row = t[t.pair == pair].iloc[0]
    if "a_correct" not in t or row.a_correct is None:
        return results.Control(text, f"accuracy gap {'≤' if direction == '<=' else '≥'} {threshold:g} points",
                                "not measured", False), None
    two = pd.DataFrame({"net": ["first", "second"], "correct": [row.a_correct, row.b_correct]})
    gap = noise.bootstrap_table(two, lambda x: 100 * float(x.accuracy.iloc[1] - x.accuracy.iloc[0]),
                                columns={"correct": "accuracy"})
    return controls.premise(gap, threshold, text, direction=direction, what=what), gap


def _width_premise(t: pd.DataFrame, pair: str) -> tuple[results.Control, noise.Estimate | None]:
    """The premise of "width_range": both networks are trained, the thinner one's test accuracy
    within :data:`WIDTH_TRAINED_GAP` points of the wider one's (the two compared image by image)."""
    return _pair_premise(t, pair, f"both networks are trained: the thinner one's test accuracy is within "
                         f"{WIDTH_TRAINED_GAP:g} points of the wider one's (the paper compares trained networks of two "
                         "widths)", WIDTH_TRAINED_GAP, "<=", "wider network's test accuracy minus the thinner one's")


def _samples_premise(t: pd.DataFrame, pair: str) -> tuple[results.Control, noise.Estimate | None]:
    """The premise of "samples_far" (issue 68, finding 2; B-F2C gates its claims on the same networks
    the same way): the ladder separates, the network trained on more images is the more accurate one,
    on the interval of the accuracy difference (the margin is B-F2C's,
    :data:`stitchkit.experiments.bansal.bottoms.PREMISE_MARGIN`). Without it a low CKA would be
    between two networks that learned alike from different data, not the "more is better" pair the
    paper compares."""
    from .bottoms import PREMISE_MARGIN

    return _pair_premise(t, pair, "the sample-size ladder separates: the network trained on more images is the more "
                         "accurate one (the premise of 'more is better', as B-F2C judges it)", PREMISE_MARGIN, ">=",
                         "the more-sample network's test accuracy minus the fewer-sample one's")


def more_cka_summary(table: pd.DataFrame, cfg: MoreCKAConfig) -> tuple[dict, list[ClaimSpec]]:
    """B-F7's claims, each on the minimum CKA over the cuts bootstrapped as a minimum (over the
    CKA images)."""
    t = table.reset_index(drop=True)
    by = {name: g.set_index("cut").cka for name, g in t.groupby("pair", sort=False)}
    samples_, width_, length_ = list(by)
    n = int(t.cka_n.iloc[0]) if "cka_n" in t else cfg.cka_images
    mins = {name: cka_estimate(cka_reps_of(t, np.flatnonzero((t.pair == name).to_numpy())).min(axis=1), n)
            for name in by}
    numbers = {"cka_images_used": n}
    for key, name in (("samples", samples_), ("width", width_), ("length", length_)):
        numbers.update({f"{key}_cka_min": by[name].min(), f"{key}_cka_max": by[name].max(),
                        f"{key}_cka_mean": by[name].mean(), f"{key}_cka_min_low": mins[name].low,
                        f"{key}_cka_min_high": mins[name].high})
        numbers.update({f"{key}_cka_{cut}": v for cut, v in by[name].items()})
    lo, hi = CKA_WIDTH_RANGE
    w = by[width_]
    trained, gap = _width_premise(t, width_)
    if gap is not None:
        numbers.update({"width_accuracy_gap": gap.value, "width_accuracy_gap_low": gap.low,
                        "width_accuracy_gap_high": gap.high})
    ladder, samples_gap = _samples_premise(t, samples_)
    if samples_gap is not None:
        numbers.update({"samples_accuracy_gap": samples_gap.value, "samples_accuracy_gap_low": samples_gap.low,
                        "samples_accuracy_gap_high": samples_gap.high})
    claims = [
        ClaimSpec(key="samples_far", text=f"CKA between networks trained on different numbers of samples ({samples_}) "
                                          "can be close to 0",
                  criterion=at_most(mins[samples_], CKA_SAMPLES_NEAR_ZERO, "min CKA over the cuts", unit=""),
                  paper="can go as low as 0 (App. B.2, Table 1)",
                  ours=f"min {mins[samples_].text(3)} (at {by[samples_].idxmin()}), mean {by[samples_].mean():.3f}"
                       + (f"; the more-sample network's accuracy minus the other's {samples_gap.text(2, 'points')}"
                          if samples_gap else ""),
                  controls=[ladder], kind="no_stitch"),
        ClaimSpec(key="width_range", text=f"CKA between the {width_} networks is in the range 0.7-0.9 at its lowest",
                  criterion=within(mins[width_], (lo + hi) / 2, (hi - lo) / 2, "min CKA over the cuts", unit=""),
                  paper="0.7-0.9; as low as 0.7 for early layers (Sec. 6, App. B.2)",
                  ours=f"min {mins[width_].text(3)} (at {w.idxmin()}), max {w.max():.3f}"
                       + (f"; the wider network's accuracy minus the thinner one's {gap.text(2, 'points')}" if gap else ""),
                  controls=[trained], kind="no_stitch"),
        ClaimSpec(key="length_similar", text=f"CKA finds the {length_} networks similar",
                  criterion=at_least(mins[length_], CKA_SIMILAR_MIN, "min CKA over the cuts", unit=""),
                  paper="CKA finds the representations similar (App. B.2)",
                  ours=f"min {mins[length_].text(3)} (at {by[length_].idxmin()}), mean {by[length_].mean():.3f}",
                  kind="no_stitch"),
    ]
    return numbers, claims
