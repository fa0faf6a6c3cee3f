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
# # S-4.2 · Colour-only stitched into greyscale MNIST
#
# **Paper.** Smith & Marcu (2024), Section 4.2.
#
# **Overview.** Perhaps the Colour sender in {doc}`S-F1B` leaks some digit shape that the Digit
# receiver can use. To rule that out the paper removes shape from everything: a *Colour-only*
# model (trained on flat coloured squares) is stitched into a model trained on ordinary
# greyscale MNIST, and the stitch is trained and tested on Colour-only data, whose target is the
# colour. Nothing in the data looks like a digit. In the paper the MNIST models score 99.0 ± 0.1%
# on MNIST (its 0.990 ± 0.001); stitched, they score 100% at every layer.
#
# **Prerequisites.** MNIST in the data root. Its times, as run and from an empty cache, are measured
# and given in the rerun box above.

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
from stitchkit.experiments.smith import better_than, config, measured
from stitchkit.pagekit.page import open_page
from stitchkit.registry.scales import as_table

run, cfg = open_page("S-4.2", globals())

# %% [markdown]
# ## Stitch Colour-only into MNIST at every layer

# %%
table, baselines = better_than.colour_only_into_mnist(cfg)
longer, _ = better_than.colour_only_into_mnist(cfg, factor=config.LONGER, cuts=better_than.worst_cuts(table))
checks = better_than.mnist_controls(cfg)  # the positive and negative controls' stitches
numbers, claims = better_than.colour_only_summary(table, baselines, longer, checks)
run.record(numbers, claims)
stats = measured.per_layer(table)
stats.assign(**{c: stats[c].round(4) for c in ("mean", "min", "max", "sd")})[["layer", "mean", "min", "max", "sd"]]

# %% [markdown]
# The MNIST models score {glue:text}`mnist_baseline:.1f`% ± {glue:text}`mnist_baseline_sd:.1f`
# points on MNIST (paper 99.0 ± 0.1%). Stitched, on Colour-only test data, the lowest mean over
# layers is {glue:text}`colour_only_worst:.1f`%.

# %%
run.figure("accuracy", better_than.plot_colour_only(
    stats, baselines, title=f"ResNet-18 (ImageNet stem), {cfg.inits} initialisation(s), scale '{scale}'"))

# %% [markdown]
# ```{glue:figure} accuracy
# :name: fig-s-4-2
# :alt: Line plot over the five stitch points Layer 1 to Linear of the test accuracy in percent of Colour-only models stitched into greyscale-MNIST models on Colour-only data, shaded over initialisations, with a dashed black line for the MNIST models' accuracy on MNIST, a dashed grey line at the paper's 100% and a grey band at the paper's 99.0 ± 0.1% MNIST baseline.
#
# Test accuracy on Colour-only data of the Colour-only sender stitched into the greyscale-MNIST
# receiver (mean, shading over every initialisation). Dashed black: the MNIST models' own accuracy
# on MNIST. Grey: the paper's values, which it states in the text (no figure): the stitched
# models at 100% at every layer (dashed), the MNIST models at 99.0 ± 0.1% (band).
# ```

# %% [markdown]
# ## Claims
#
# Every judged number carries a 95% interval (`stitchkit.verdicts.noise`, see {term}`interval`): the test
# images are resampled once and every accuracy is recomputed on the same resample (the Colour-only
# and the MNIST test images each on their own); over the {glue:text}`n_seeds` initialisations, too few to
# resample, the interval is a t interval with one degree of freedom fewer than initialisations,
# its variance the images' plus the initialisations' (jackknife): wide with 3. A claim is
# *reproduced* only when its whole interval lies on the claim's side of the threshold, *not
# reproduced* only when it lies wholly on the other side, and *inconclusive (within noise)*
# otherwise.
#
# **Controls.** The claim says a sender's stitch beats the receiver (kind *improves*,
# `stitchkit.verdicts.controls`), so it carries three controls, each passing only when shown on its
# interval; a failed one makes the verdict *inconclusive at this scale*. *Positive*: the MNIST
# model stitched into itself at every stitch point, trained and tested on MNIST (its own task,
# where the identity is an exact stitch), loses at most 1 point at its worst (the upper end of the
# basic bootstrap interval over the test images); a gain passes and is reported (up to
# {glue:text}`mnist_self_stitch_gain:.2f` points), not gated. *Negative*: label-free noise (the clustered noise around one base for every class: it carries no label
# information) stitched into the MNIST model (on Colour-only data, as the claim's
# stitches) before layer 4 and before the classifier, with the noise
# sender's recipe, stays at least 20 points below the MNIST model's self-stitch on the same data (measured
# {glue:text}`label_free_beyond_self:.1f` points), else the stitch does the task without the
# sender's information. Since the amendment of 2026-12-02 (before any run on the new networks);
# until then the gate was an untrained ResNet-18, which on this data passes the colour to the
# receiver like any sender, the shortcut the paper is about, so it could never pass where the
# paper's thesis holds. Its result is now a finding, not a gate: the untrained sender stays
# {glue:text}`untrained_beyond_self:.1f` points below the self-stitch (trained and tested on Colour-only data, where the colour reaches
# the receiver through any sender).
# *Training length*: the worst stitch point retrained at {glue:text}`longer_factor` × the epochs,
# the claim re-judged for every verdict, decided or not; it passes when the result is the same.
# The controls were matched to the claim in issue 46, after earlier runs had been seen (see
# "Changes after a run").
#
# Criterion fixed before the page's first run (a criterion changed after a run is listed, dated, under *Changes after a run*): at every layer the mean stitched accuracy is at least the
# MNIST models' accuracy on MNIST.

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
# - **Frozen BatchNorm** runs in eval mode (the paper's described setting); the authors' code
#   leaves it in train mode (`frozen_bn = "train"` reproduces that).
# - **Initialisations.** Initialisation k pairs the models of seed k with stitch seed k; the
#   paper does not say how its initialisations were paired.
# - **Greyscale MNIST** is MNIST copied to three channels, normalised with MNIST's mean and
#   standard deviation on each channel (as the catalogue specifies).

# %% [markdown]
# ## Configuration

# %%
as_table(cfg)
