# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # S-F1B · Senders stitched into the Digit receiver
#
# **Paper.** Smith & Marcu (2024), Figure 1b and Section 4.1.
#
# **Overview.** Three ResNet-18s are trained on versions of colour MNIST that push them towards
# different shortcuts ({doc}`S-F1A` shows the images): *Correlated* (the background colour
# gives the digit away), *Digit* (random colour, the target is the digit: the model must use
# shape) and *Colour* (random digit, the target is the colour: shape is useless). Each is
# stitched into the **Digit** model at five points (before layer 1 ... before the classifier)
# with a BatchNorm → 1×1 conv → BatchNorm stitch, trained and tested on the Correlated set: the
# data a practitioner would have. If stitching measured whether two networks use the same
# information, the Colour sender (which ignores shape) should not be able to drive a receiver
# that classifies by shape. The paper finds that every sender, at every layer, beats the
# Digit model's own accuracy on Correlated data.
#
# **Prerequisites.** MNIST in the data root (the coloured sets are generated from it). Its times, as
# run and from an empty cache, are measured and given in the rerun box above.

# %% tags=["parameters"]
scale = "smoke"  # smoke | demo | gpu | paper
inits = None  # independent initialisations (models of seed k, stitch seed k); paper 5
width = None  # base width of the ResNet-18 (paper 64); None: the recipe's width
model_epochs = None  # passes over the training set per model (paper 4); None: the recipe's
model_train_size = None  # training images per model (paper 60000); None: the recipe's
stitch_init = None  # stitch initialisation: default (random, as the paper) or dm
stitch_epochs = None  # passes over the stitch training set (paper 10)
stitch_lr = None  # SGD learning rate of the stitch (paper 1e-4)
stitch_train_size = None  # training images per stitch (paper: all 60000); None: all
frozen_bn = None  # frozen halves' BatchNorm: eval, or train (the authors' code quirk)
test_size = None  # test images for every accuracy and rank; None: all 10000

# %%
from stitchkit.pagekit import plotting
from stitchkit.experiments.smith import config, digit_receiver, measured
from stitchkit.pagekit.page import open_page
from stitchkit.registry.scales import as_table

run, cfg = open_page("S-F1B", globals())

# %% [markdown]
# ## Stitch every sender into the Digit receiver
#
# One row per initialisation, sender and stitch point: test accuracy on Correlated data of the
# stitched model, and the Digit model's own accuracy on the same data (the baseline). The Digit
# model stitched into itself is included: the paper reports it in Table C1 ({doc}`S-TC1`), and
# here it is the positive control, that the stitch recipe reaches the receiver. Label-free noise
# stitched into Digit at the last two stitch points is the negative control (an untrained
# ResNet-18 there is reported beside it).

# %%
table = digit_receiver.into_digit(cfg, senders=config.FIG1_SENDERS, with_rank=False)
longer = digit_receiver.into_digit_longer(cfg, table, digit_receiver.deciding_cells(table, config.FIG1_SENDERS))
negative = digit_receiver.untrained_into_digit(cfg)
numbers, claim = digit_receiver.compatibility_summary(
    table, config.FIG1_SENDERS, "compatible",
    "Every sender beats the Digit baseline at every layer (stitch trained and tested on Correlated)",
    "all senders above the baseline at all 5 layers (Fig. 1b)", longer=longer, negative=negative)
run.record(numbers, [claim])
stats = measured.per_layer(table)
stats.assign(**{c: (100 * stats[c]).round(2) for c in ("mean", "min", "max", "sd")}).pivot_table(
    index="sender", columns="layer", values="mean", sort=False)

# %% [markdown]
# ## Stitched accuracy per layer
#
# The Digit model alone scores {glue:text}`digit_baseline:.3f` on Correlated test data. The
# lowest mean stitched accuracy of the other senders over layers is
# {glue:text}`compatible_worst_accuracy:.3f`, {glue:text}`compatible_worst_margin:.2f` points
# from the baseline (95% interval {glue:text}`compatible_worst_margin_low:.2f` to
# {glue:text}`compatible_worst_margin_high:.2f`).
#
# **The stitch adds accuracy by itself.** The Digit model stitched into itself, where the
# identity is an exact stitch, differs from the Digit model alone by
# {glue:text}`self_penalty:.2f` points at its worst cut and gains up to
# {glue:text}`self_stitch_gain:.2f` points at its best (the *self-stitch gain*, reported and gated
# nowhere; a negative penalty is a gain): a stitch
# trained on Correlated data can pick up the colour shortcut that the Digit model never used.
# "Beats the unstitched Digit model" therefore does not isolate how compatible a sender is.
# Compared like with like, against the Digit self-stitch at the same cut, the other senders'
# lowest mean is {glue:text}`compatible_vs_self:.2f` points (95% interval
# {glue:text}`compatible_vs_self_low:.2f` to {glue:text}`compatible_vs_self_high:.2f`): a
# number shown for the reader, not a criterion fixed before the run.

# %%
run.figure("accuracy", plotting.spread_per_layer(
    [{"stats": stats, "band": "range", "scale": 100, "ylabel": "test accuracy on Correlated (%)",
      "baseline": table.groupby("init").baseline.first().mean(), "baseline_label": "Digit alone",
      "panel": "senders stitched into the Digit receiver", "legend": "lower right"}],
    title=f"ResNet-18 (ImageNet stem) on colour MNIST, {cfg.inits} initialisation(s), scale '{scale}'"))

# %% [markdown]
# ```{glue:figure} accuracy
# :name: fig-s-f1b
# :alt: Line plot over the five stitch points Layer 1 to Linear of the test accuracy in percent on Correlated data of the Correlated, Digit and Colour models stitched into the Digit receiver, with shaded ranges over initialisations and a dashed line for the Digit model alone.
#
# Test accuracy on Correlated data when each model is stitched into the Digit receiver (mean
# over initialisations; shading covers every initialisation, as in the paper). Dashed: the
# Digit model's own accuracy on the same data. Compare with the paper's Figure 1b.
# ```

# %% [markdown]
# ## Claims
#
# Every judged number carries a 95% interval (`stitchkit.verdicts.noise`, see {term}`interval`): the test
# images are resampled once and every accuracy is recomputed on the same resample (a stitched
# model and its receiver image by image); over the {glue:text}`n_seeds` initialisations, too few to
# resample, the interval is a t interval with one degree of freedom fewer than initialisations,
# its variance the images' plus the initialisations' (jackknife): wide with 3. A claim is
# *reproduced* only when its whole interval lies on the claim's side of the threshold, *not
# reproduced* only when it lies wholly on the other side, and *inconclusive (within noise)*
# otherwise.
#
# **Controls.** The claim says stitches work (kind *compatible*, `stitchkit.verdicts.controls`), so it
# carries three controls, each passing only when shown on its interval; a failed one makes the
# verdict *inconclusive at this scale*. *Positive*: the Digit model stitched into itself loses at
# most 1 point at its worst stitch point (the upper end of the basic bootstrap interval over the
# test images), else the recipe is too weak to judge; a self-stitch that gains accuracy passes,
# its gain reported above, not gated (the like-for-like comparison shows what it does).
# *Negative*: label-free noise (the clustered noise around one base for every class: it carries no label
# information) stitched into Digit before layer 4 and before the classifier, with the noise
# sender's recipe, stays at least 20 points below Digit's self-stitch there (measured
# {glue:text}`label_free_beyond_self:.1f` points), else the stitch does the task without the
# sender's information. Since the amendment of 2026-12-02 (before any run on the new networks);
# until then the gate was an untrained ResNet-18, which on this data passes the colour to the
# receiver like any sender, the shortcut the paper is about, so it could never pass where the
# paper's thesis holds. Its result is now a finding, not a gate: the untrained sender stays
# {glue:text}`untrained_beyond_self:.1f` points below the self-stitch
# (each initialisation's seed, BatchNorm statistics recalibrated). *Training length*: the cell that decides the claim and the
# self-stitch at its stitch point are retrained at {glue:text}`longer_factor` × the epochs and the
# claim re-judged there, for every verdict, decided or not: it passes when the result is the
# same. The bounds were set in issue 46, after earlier runs had been seen (see "Changes after a
# run").
#
# The verdict is computed from the criterion in its row, fixed in `stitchkit.experiments.smith`
# before the page's first run (a criterion changed after a run is listed, dated, under *Changes after a run*): "beats the baseline" means the mean stitched accuracy over initialisations is
# at least the Digit model's own at every one of the 2 × 5 sender-layer points (the Digit
# sender's own stitches are the positive control).

# %%
run.save()
run.claims_table()

# %% [markdown]
# ## Deviations from the paper
#
# - **Networks.** At this run's scale the ResNet-18s are {glue:text}`recipe_net`. The paper's:
#   width 64, all 60,000 images, 4 epochs at batch 128, SGD (momentum 0.9) at lr 0.1 with a
#   constant learning rate (the paper names no schedule), weight decay 1e-4, no augmentation.
#   `demo`'s differ in width (16) and length (3 epochs), and decay the rate by a cosine after a 5%
#   linear warm-up instead of keeping it constant, chosen by measured accuracy per CPU minute
#   (benchmarks/cpu-recipes.md); `gpu` and `paper` train the paper's. Each network's accuracy is
#   on the {doc}`../networks` page.
# - **Scale (`demo`).** 3 initialisations (paper 5); stitches trained 2 epochs on all 60,000
#   images at SGD learning rate 1e-2 (paper: 10 epochs at 1e-4, five times the steps at a
#   hundredth of the rate; at 1e-4 our shorter run leaves the stitch untrained). A first demo run,
#   before 2026-12-07 and on the networks of then, trained stitches 4 epochs on 15,000 images: the
#   Layer-1 stitches were still improving (the Colour sender reached 0.77 in one initialisation,
#   0.97 with the longer run), so the stitch recipe was lengthened before any verdict was kept.
#   The `paper` preset restores the paper's settings.
# - **Scale (`gpu`).** The paper's networks: width-64 ResNet-18s trained 4 epochs on all 60,000
#   images. The stitches keep `demo`'s recipe (2 epochs on all 60,000 images at SGD learning rate
#   1e-2; paper 10 epochs at 1e-4) and 3 initialisations (paper 5): at the paper's length these
#   pages' stitches would take several times the minutes a lent GPU gives. The training-length
#   control retrains the deciding cells at 2× the epochs. Chosen before any `gpu` run (2026-11-27).
# - **Data.** The coloured sets are generated here from MNIST following the paper's Appendix A
#   and the authors' `colour_MNIST` code (colour map, white digits, ±10% colour jitter); the
#   random draws differ from the authors'.
# - **`paper` on 2 CPU cores** does not fit: a width-64 model trains at about 300 images/s here
#   (13 minutes per model, about 5.5 hours for the 25 models), and each of the ~125 paper-length
#   stitches (10 epochs on 60,000 images) takes tens of minutes more. It needs a GPU.
# - **Frozen BatchNorm** runs in eval mode (the paper's described setting); the authors' code
#   leaves it in train mode (`frozen_bn = "train"` reproduces that).
# - **Initialisations.** Initialisation k pairs the models of seed k with stitch seed k; the
#   paper does not say how its five initialisations were paired.

# %% [markdown]
# ## Configuration

# %%
as_table(cfg)
