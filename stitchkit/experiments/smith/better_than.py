"""Stitching calls a model "better" than one it is not better than: S-4.2 (Colour-only models
stitched into greyscale-MNIST models beat MNIST's own accuracy) and S-TC1 (Table C1: Digit and
Colour-only each "better" than the other at layer 1).

Claim kinds (:data:`stitchkit.verdicts.controls.KINDS`): S-4.2's ``colour_only_into_mnist`` and S-TC1's
``contradiction`` say a sender's stitch beats the receiver: *improves* (positive, negative and
training-length controls, :func:`mnist_controls`, :func:`tc1_controls`). S-TC1's
``self_stitch_gain`` is the paper's own finding about the self-stitch, a statistic of trained
stitches: *stitch_other* (positive and training-length controls); the gain is a claim here and
a gate nowhere. At the paper's settings (:attr:`.config.StitchConfig.paper_numbers`)
``table_numbers`` (stitched accuracies against the paper's) is *stitch_other* too."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...base.store import Store
from ...data.datasets import DataSpec
from ...stitching.grid import stitch_grid
from ...stitching.longer import replace_cells
from ...verdicts import controls, noise
from ...verdicts.claims import ClaimSpec
from ...verdicts.results import Control, at_least
from .config import CUT_LABELS, CUTS, LONGER, LONGER_CELLS, PAPER_TOL, RECEIVER, SETS, TC1_MODELS, StitchConfig
from .measured import ACC, accuracy_on, per_layer, recipe_net
from .stitch_controls import (gain_numbers_over_inits, late_rows, negative_control_over_inits, not_run,
                              positive_control_over_inits, self_rows)

# The paper's numbers (Table C1, Sec. 4.2), for the pages' side-by-side tables.
PAPER_TC1 = pd.DataFrame({"base": [0.999, 0.978, 1.000, 0.686], "digit_receiver": [0.999, 0.995, 0.999, 0.999],
                          "digit_sender": [0.981, 0.996, 1.000, 0.985]}, index=list(TC1_MODELS))
PAPER_MNIST_BASELINE = (0.990, 0.001)  # Sec. 4.2: the MNIST models on MNIST, mean ± sd
PAPER_COLOUR_ONLY_STITCHED = 1.0  # Sec. 4.2: Colour-only stitched into MNIST, at every layer
TC1_HEADINGS = {"base": "base accuracy", "digit_receiver": "'Digit' is receiver", "digit_sender": "'Digit' is sender"}


# --------------------------------------------------------------------------------------------
# S-4.2: Colour-only into greyscale MNIST


def colour_only_into_mnist(cfg: StitchConfig, *, store: Store | None = None, device=None,
                           factor: float = 1, cuts=CUTS) -> tuple[pd.DataFrame, pd.Series]:
    """S-4.2: Colour-only models stitched into greyscale-MNIST models at every cut, the stitch
    trained and tested on Colour-only data; and the MNIST models' accuracy on MNIST. The table
    keeps each row's per-image results (``correct``, on Colour-only test images) and its MNIST
    model's (``baseline_correct``, on MNIST test images). ``factor``: stitches trained at this
    many times the epochs, at ``cuts`` (the training-length control)."""
    store = store or Store()
    data = DataSpec(SETS["Colour-only"])
    frames, baselines = [], []
    for k in range(cfg.inits):
        mnist = recipe_net(cfg, "MNIST", k)
        recipe = cfg.recipe(k) if factor == 1 else cfg.recipe(k).longer(factor)
        t = stitch_grid([recipe_net(cfg, "Colour-only", k)], [mnist], [(c, c) for c in cuts], recipe, data,
                        store=store, device=device)
        base = accuracy_on(mnist, DataSpec(SETS["MNIST"]), cfg.test_size, store=store, device=device, per_image=True)
        frames.append(t.assign(init=k, baseline=float(base.mean()), baseline_correct=[base] * len(t)))
        baselines.append(float(base.mean()))
    table = pd.concat(frames, ignore_index=True).rename(columns={"cut_i": "cut"})
    table["layer"] = table.cut.map(CUT_LABELS)
    return (table[["init", "sender", "cut", "layer", "accuracy", "baseline", "correct", "baseline_correct"]],
            pd.Series(baselines, name="mnist_accuracy"))


def mnist_controls(cfg: StitchConfig, *, store: Store | None = None, device=None) -> pd.DataFrame:
    """S-4.2's controls' stitches, in the long form of :mod:`.stitch_controls` with a ``data``
    column: the MNIST models stitched into themselves at every cut on MNIST, their own task (the
    positive control: the recipe reaches an exact stitch), and an untrained ResNet-18 and the
    MNIST model each stitched into the MNIST model at the last two cuts on Colour-only data, the
    claim's data (the negative control)."""
    pos = self_rows(cfg, "MNIST", "MNIST", store=store, device=device).assign(data="MNIST")
    neg = late_rows(cfg, "MNIST", "Colour-only", store=store, device=device).assign(data="Colour-only")
    return pd.concat([pos, neg], ignore_index=True)


def worst_cuts(table: pd.DataFrame, k: int = LONGER_CELLS) -> list[str]:
    """The ``k`` cuts of lowest mean accuracy (those that decide an 'at every layer' claim)."""
    return list(table.groupby("cut").accuracy.mean().sort_values().index[:k])


def _mnist_margin(t: pd.DataFrame) -> float:
    """Lowest mean stitched accuracy over cuts minus the MNIST models' mean accuracy (points)."""
    return 100 * float(t.groupby("cut").accuracy.mean().min() - t.groupby("init").baseline.first().mean())


def _boot_mnist(t: pd.DataFrame) -> noise.Estimate:
    return noise.bootstrap_table(t.assign(stitch_set="Colour-only", base_set="MNIST"), _mnist_margin, groups="init",
                                 columns=ACC, column_samples={"correct": "stitch_set", "baseline_correct": "base_set"})


def colour_only_summary(table: pd.DataFrame, baselines: pd.Series, longer: pd.DataFrame | None = None,
                        checks: pd.DataFrame | None = None) -> tuple[dict, list[ClaimSpec]]:
    """S-4.2's claim (*improves*), judged on the interval of the worst margin (Colour-only test
    images and MNIST test images resampled independently, and the initialisations: a t interval
    over few); ``longer``: the table with the deciding cuts retrained at ``LONGER``x
    (:func:`colour_only_into_mnist`), for the training-length control; ``checks``:
    :func:`mnist_controls`, for the positive and negative controls. A control not run fails."""
    stats = per_layer(table)
    base = float(baselines.mean())
    worst = stats.loc[stats["mean"].idxmin()]
    margin = _boot_mnist(table)
    # accuracies in percent, as the book states them (the paper writes fractions: 0.990 ± 0.001)
    numbers = {"mnist_baseline": 100 * base,
               "mnist_baseline_sd": 100 * float(baselines.std(ddof=1)) if len(baselines) > 1 else 0.0,
               "colour_only_worst": 100 * float(worst["mean"]), "colour_only_mean": 100 * float(stats["mean"].mean()),
               "colour_only_margin": margin.value, "colour_only_margin_low": margin.low,
               "colour_only_margin_high": margin.high, "longer_factor": LONGER, "n_seeds": int(table.init.nunique())}
    what = "lowest mean stitched accuracy (Colour-only test) minus the MNIST models' accuracy on MNIST"
    crit = at_least(margin, 0.0, what)
    ctrl: list[Control] = []
    if checks is not None:
        pos, pos_e = positive_control_over_inits(checks[checks.data == "MNIST"], ["MNIST"],
                                                 what="the MNIST model stitched into itself on MNIST at every cut")
        neg, neg_numbers = negative_control_over_inits(checks[checks.data == "Colour-only"], ["MNIST"],
                                                       what="label-free noise stitched into the MNIST model at the "
                                                            "last two cuts (trained on noise, as the noise sender "
                                                            "is; tested on it)")
        ctrl += [pos, neg]
        numbers.update(mnist_self_penalty=pos_e.value, mnist_self_penalty_high=pos_e.high,
                       **gain_numbers_over_inits("mnist_self_stitch", checks[checks.data == "MNIST"], ["MNIST"]),
                       **neg_numbers)
    else:
        ctrl += [not_run(controls.POSITIVE, "the MNIST model stitched into itself"),
                 not_run(controls.NEGATIVE, "an untrained sender stitched into the MNIST model")]
    if longer is not None:
        merged = replace_cells(table, longer, ["init", "cut"], ["accuracy", "correct"])
        ctrl.append(controls.training_length(crit, at_least(_boot_mnist(merged), 0.0, what), LONGER))
    else:
        ctrl.append(not_run(controls.LENGTH, f"the verdict re-judged at {LONGER}x the stitch epochs"))
    claim = ClaimSpec(key="colour_only_into_mnist",
                      text="Colour-only stitched into greyscale MNIST beats MNIST's own accuracy at every layer",
                      criterion=crit, paper="MNIST 99.0 ± 0.1%; stitched 100% at every layer",
                      ours=f"MNIST {100 * base:.1f}%; stitched lowest {100 * worst['mean']:.1f}% ({worst['layer']}); "
                           f"margin {margin.text(2, 'points')}", controls=ctrl, n=int(table.init.nunique()),
                      kind="improves")
    return numbers, [claim]


# --------------------------------------------------------------------------------------------
# S-TC1: the contradiction (Table C1)

TC1_COLS = ("base", "digit_receiver", "digit_sender")
TC1_DECIDING = ("Digit", "Colour-only")  # the models whose layer-1 stitches decide S-TC1's two claims
TC1_ACC = {f"{c}_correct": c for c in TC1_COLS}  # per-image column -> accuracy column


def contradiction(cfg: StitchConfig, *, store: Store | None = None, device=None,
                  factor: float = 1, models=TC1_MODELS) -> pd.DataFrame:
    """S-TC1 per initialisation and model: base accuracy on Correlated, the model stitched into
    Digit at layer 1 ('digit_receiver') and Digit stitched into the model at layer 1
    ('digit_sender'), all tested on Correlated, with their per-image results (``*_correct``).
    ``factor``: stitches trained at this many times the epochs, ``models``: of these models
    (the training-length control: :data:`TC1_DECIDING`)."""
    store = store or Store()
    data = DataSpec(SETS["Correlated"])
    rows = []
    for k in range(cfg.inits):
        recipe = cfg.recipe(k) if factor == 1 else cfg.recipe(k).longer(factor)
        nets = {n: recipe_net(cfg, n, k) for n in models}
        into = stitch_grid(list(nets.values()), [nets[RECEIVER]], [("stem", "stem")], recipe, data,
                           store=store, device=device).set_index("sender")
        out = stitch_grid([nets[RECEIVER]], list(nets.values()), [("stem", "stem")], recipe, data,
                          store=store, device=device).set_index("receiver")
        for n, net in nets.items():
            base = accuracy_on(net, data, cfg.test_size, store=store, device=device, per_image=True)
            rows.append({"init": k, "model": n, "base": float(base.mean()),
                         "digit_receiver": into.loc[n, "accuracy"], "digit_sender": out.loc[n, "accuracy"],
                         "base_correct": base, "digit_receiver_correct": into.loc[n, "correct"],
                         "digit_sender_correct": out.loc[n, "correct"]})
    return pd.DataFrame(rows)


def tc1_longer_models(cfg: StitchConfig) -> tuple[str, ...]:
    """The models whose layer-1 stitches the training-length control retrains: those deciding the
    contradiction and the self-stitch gain (:data:`TC1_DECIDING`), and where every Table C1 number
    is judged (``cfg.paper_numbers``: the paper's settings), all of them."""
    return TC1_MODELS if cfg.paper_numbers else TC1_DECIDING


def tc1_controls(cfg: StitchConfig, *, store: Store | None = None, device=None) -> pd.DataFrame:
    """S-TC1's controls' stitches on Correlated, in the long form of :mod:`.stitch_controls`:
    every Table C1 model stitched into itself at layer 1 (the positive control at the claims'
    cut; Digit's is the table's own stitch, read from the cache), and an untrained ResNet-18 and
    the receiver itself stitched into Digit and into Colour-only, the contradiction's receivers,
    at the last two cuts (the negative control; Digit's are S-F1B's, from the cache)."""
    pos = [self_rows(cfg, m, "Correlated", ("stem",), store=store, device=device) for m in TC1_MODELS]
    neg = [late_rows(cfg, m, "Correlated", store=store, device=device) for m in TC1_DECIDING]
    return pd.concat(pos + neg, ignore_index=True)


def _tc1_means(t: pd.DataFrame) -> pd.DataFrame:
    return t.groupby("model", sort=False)[list(TC1_COLS)].mean()


def _contradiction_gain(t: pd.DataFrame) -> float:
    """Smaller of the two gains (points): Colour-only into Digit over Digit, Digit into
    Colour-only over Colour-only (layer 1, means over initialisations)."""
    m = _tc1_means(t)
    return 100 * min(m.loc["Colour-only", "digit_receiver"] - m.loc["Digit", "base"],
                     m.loc["Colour-only", "digit_sender"] - m.loc["Colour-only", "base"])


def _self_gain(t: pd.DataFrame) -> float:
    m = _tc1_means(t)
    return 100 * (m.loc["Digit", "digit_receiver"] - m.loc["Digit", "base"])


def contradiction_summary(table: pd.DataFrame, longer: pd.DataFrame | None = None,
                          checks: pd.DataFrame | None = None, *,
                          paper_numbers: bool = False) -> tuple[dict, list[ClaimSpec], pd.DataFrame]:
    """The side-by-side table (ours mean ± sd beside the paper's) and the claims: the
    contradiction (*improves*: Colour-only into Digit beats Digit, and Digit into Colour-only
    beats Colour-only), Digit into itself beats Digit (*stitch_other*: the paper's finding about
    the self-stitch, a claim and no gate), and with ``paper_numbers`` (the paper's settings,
    :attr:`StitchConfig.paper_numbers`) every number within 2 points (*stitch_other*). Each judged
    on its paired-bootstrap interval (Correlated test images and initialisations: a t interval
    over few); ``longer`` (:func:`contradiction` at ``factor=LONGER``, models
    :func:`tc1_longer_models`): the training-length control; ``checks`` (:func:`tc1_controls`):
    the positive and negative controls. A control not run fails."""
    g = table.groupby("model", sort=False)
    mean, sd = g[list(TC1_COLS)].mean(), g[list(TC1_COLS)].std(ddof=1)
    side = pd.DataFrame(index=list(TC1_MODELS))
    for col in TC1_COLS:
        side[(TC1_HEADINGS[col], "paper (%)")] = (100 * PAPER_TC1[col]).round(1)
        side[(TC1_HEADINGS[col], "ours (%)")] = [
            f"{100 * mean.loc[m, col]:.1f} ± {0 if np.isnan(sd.loc[m, col]) else 100 * sd.loc[m, col]:.1f}"
            for m in TC1_MODELS]
    side.columns = pd.MultiIndex.from_tuples(side.columns)
    n = int(table.init.nunique())

    def boot(t, stat):
        return noise.bootstrap_table(t, stat, groups="init", columns=TC1_ACC)

    a = mean.loc["Colour-only", "digit_receiver"] - mean.loc["Digit", "base"]
    b = mean.loc["Colour-only", "digit_sender"] - mean.loc["Colour-only", "base"]
    gain, self_gain = boot(table, _contradiction_gain), boot(table, _self_gain)
    numbers = {f"{col}_{m.lower().replace('-', '_')}": float(mean.loc[m, col])
               for m in TC1_MODELS for col in TC1_COLS}
    numbers.update(contradiction_a=100 * a, contradiction_b=100 * b, contradiction_low=gain.low,
                   contradiction_high=gain.high, self_gain=self_gain.value, self_gain_low=self_gain.low,
                   self_gain_high=self_gain.high, longer_factor=LONGER, n_seeds=n)
    what_c = "smaller of the two gains over the receiver's own accuracy on Correlated"
    what_s = "self-stitch minus Digit on Correlated, layer 1"
    crit_c, crit_s = at_least(gain, 0.0, what_c), at_least(self_gain, 0.0, what_s)
    ctrl_c: list[Control] = []
    ctrl_s: list[Control] = []
    ctrl_t: list[Control] = []
    if checks is not None:
        at_stem = checks[checks.cut == "stem"]
        pos_c, _ = positive_control_over_inits(at_stem, TC1_DECIDING,
                                               what="Digit and Colour-only stitched into themselves at layer 1")
        pos_s, pos_e = positive_control_over_inits(at_stem, [RECEIVER], what="Digit stitched into itself at layer 1")
        pos_t, _ = positive_control_over_inits(at_stem, TC1_MODELS,
                                               what="every Table C1 model stitched into itself at layer 1")
        neg_c, neg_numbers = negative_control_over_inits(checks, TC1_DECIDING)
        ctrl_c += [pos_c, neg_c]
        ctrl_s.append(pos_s)
        ctrl_t.append(pos_t)
        numbers.update(gain_numbers_over_inits("tc1_self_stitch", at_stem, TC1_MODELS), **neg_numbers)
    else:
        pos = not_run(controls.POSITIVE, "the receivers stitched into themselves at layer 1")
        ctrl_c += [pos, not_run(controls.NEGATIVE, "an untrained sender stitched into Digit and Colour-only")]
        ctrl_s.append(pos)
        ctrl_t.append(pos)
    if longer is not None:
        ctrl_c.append(controls.training_length(crit_c, at_least(boot(longer, _contradiction_gain), 0.0, what_c), LONGER))
        ctrl_s.append(controls.training_length(crit_s, at_least(boot(longer, _self_gain), 0.0, what_s), LONGER))
    else:
        for ctrl in (ctrl_c, ctrl_s):
            ctrl.append(not_run(controls.LENGTH, f"the verdict re-judged at {LONGER}x the stitch epochs"))
    claims = [ClaimSpec(key="contradiction",
                        text="Each of Digit and Colour-only is 'better' than the other: Colour-only into Digit beats "
                             "Digit, and Digit into Colour-only beats Colour-only (layer 1)",
                        criterion=crit_c, paper=_vs(PAPER_TC1, "Colour-only"),
                        ours=_vs(mean, "Colour-only"),
                        controls=ctrl_c, n=n, kind="improves"),
              ClaimSpec(key="self_stitch_gain", text="Digit stitched into itself is more accurate than Digit",
                        criterion=crit_s, paper=_vs(PAPER_TC1, "Digit", both=False),
                        ours=_vs(mean, "Digit", both=False),
                        controls=ctrl_s, n=n, kind="stitch_other")]
    if paper_numbers:  # the table's numbers are only comparable at the paper's settings
        def worst_diff(t):
            return -100 * float((_tc1_means(t) - PAPER_TC1).abs().to_numpy().max())
        diffs = (mean - PAPER_TC1).abs()
        worst = diffs.stack().idxmax()
        what_t = "minus the largest |ours - paper| over the 12 numbers"
        crit_t = at_least(boot(table, worst_diff), -100 * PAPER_TOL, what_t)
        if longer is not None and set(TC1_MODELS) <= set(longer.model):
            ctrl_t.append(controls.training_length(crit_t, at_least(boot(longer, worst_diff), -100 * PAPER_TOL, what_t),
                                                   LONGER))
        else:
            ctrl_t.append(not_run(controls.LENGTH, f"every Table C1 stitch re-judged at {LONGER}x the stitch epochs"))
        claims.append(ClaimSpec(key="table_numbers", text="Every Table C1 number matches the paper's",
                                criterion=crit_t, paper="Table C1",
                                ours=f"largest difference {100 * diffs.to_numpy().max():.2f} points "
                                     f"({worst[0]}, {worst[1]})", controls=ctrl_t, n=n, kind="stitch_other"))
    return numbers, claims, side


def _vs(m: pd.DataFrame, model: str, both: bool = True) -> str:
    """A claim's accuracies in percent: ``model`` into Digit against Digit's own accuracy and
    (``both``) Digit into ``model`` against ``model``'s own ("92.6% vs 95.0% and 91.5% vs 77.0%")."""
    text = f"{100 * m.loc[model, 'digit_receiver']:.1f}% vs {100 * m.loc['Digit', 'base']:.1f}%"
    if both:
        text += f" and {100 * m.loc[model, 'digit_sender']:.1f}% vs {100 * m.loc[model, 'base']:.1f}%"
    return text


def tc1_gains(t: pd.DataFrame) -> pd.DataFrame:
    """Per initialisation and model, the two gains S-TC1's claims are about (fractions): the
    model stitched into Digit over Digit's own accuracy ('into_digit'), and Digit stitched into
    the model over the model's own ('from_digit'), both at layer 1 on Correlated."""
    digit = t[t.model == RECEIVER].set_index("init").base
    return t.assign(into_digit=t.digit_receiver - t.init.map(digit), from_digit=t.digit_sender - t.base)


def plot_gains(table: pd.DataFrame, title: str = ""):
    """S-TC1's claims as a figure: the two gains over the receiver's own accuracy (points) per
    model, ours (mean ± sd over initialisations) beside the paper's (from its Table C1)."""
    from ...pagekit import plotting

    g = tc1_gains(table).groupby("model", sort=False)[["into_digit", "from_digit"]]
    paper = pd.DataFrame({"into_digit": PAPER_TC1.digit_receiver - PAPER_TC1.loc[RECEIVER, "base"],
                          "from_digit": PAPER_TC1.digit_sender - PAPER_TC1.base})
    fig = plotting.ours_vs_paper_bars(
        g.mean().loc[list(TC1_MODELS)], g.std(ddof=1).loc[list(TC1_MODELS)], paper,
        columns={"into_digit": "model into Digit, over Digit", "from_digit": "Digit into model, over the model"},
        ylabel="gain over the receiver's own\naccuracy (points)", title=title, sharey=False)
    for ax in fig.axes:
        ax.axhline(0, color="0.3", lw=0.8)
    return fig


def plot_colour_only(stats: pd.DataFrame, baselines: pd.Series, title: str = ""):
    """S-4.2: Colour-only stitched into the MNIST models per layer (spread over initialisations),
    the MNIST models' own accuracy on MNIST (dashed), and the paper's two values."""
    from ...pagekit import plotting

    mean, sd = PAPER_MNIST_BASELINE
    paper = [(PAPER_COLOUR_ONLY_STITCHED, None, f"paper: stitched {PAPER_COLOUR_ONLY_STITCHED:.1f} at every layer"),
             (mean - sd, mean + sd, f"paper: MNIST model on MNIST {mean:.3f} ± {sd:.3f}")]
    return plotting.spread_per_layer(
        [{"stats": stats, "band": "range", "scale": 100, "ylabel": "test accuracy (%)", "baseline": baselines.mean(),
          "baseline_label": "MNIST model on MNIST (ours)", "panel": "Colour-only stitched into MNIST",
          "legend": "lower right", "paper": paper}], title=title)


def plot_contradiction(table: pd.DataFrame, title: str = ""):
    """Table C1 as bars (ours: mean ± sd over initialisations) with the paper's values."""
    from ...pagekit import plotting

    cols = ["base", "digit_receiver", "digit_sender"]
    g = table.groupby("model", sort=False)[cols]
    return plotting.ours_vs_paper_bars(g.mean().loc[list(TC1_MODELS)], g.std(ddof=1).loc[list(TC1_MODELS)], PAPER_TC1,
                                       columns={"base": "base accuracy", "digit_receiver": "model into Digit (layer 1)",
                                                "digit_sender": "Digit into model (layer 1)"},
                                       ylabel="test accuracy on Correlated (%)", title=title)
