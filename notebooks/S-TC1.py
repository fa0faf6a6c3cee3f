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
# # S-TC1 · The contradiction table: Digit as receiver and as sender
#
# **Paper.** Smith & Marcu (2024), Table C1 and Section 4.3.
#
# **Overview.** Bansal et al. read "stitching A's bottom into B's top beats B" as "A's
# representation is better than B's". Smith & Marcu test the reading in both directions at
# layer 1, all on Correlated test data: each model's own accuracy (*base*), each model stitched
# into Digit (*Digit receiver*), and Digit stitched into each model (*Digit sender*). Colour-only
# into Digit beats Digit, so Colour-only is "better"; Digit into Colour-only beats Colour-only,
# so Digit is "better": a contradiction. And Digit stitched into itself beats Digit, so the
# stitch is not a neutral alignment.
#
# **Prerequisites.** MNIST in the data root. Run it after {doc}`S-F1B` (it reuses what it trained,
# from the cache). Its times, as run and from an empty cache, are measured and given in the rerun
# box above.

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
from stitchkit.experiments.smith import better_than, config
from stitchkit.pagekit.page import open_page
from stitchkit.registry.scales import as_table

run, cfg = open_page("S-TC1", globals())

# %% [markdown]
# ## Base accuracy, Digit as receiver, Digit as sender (layer 1)

# %%
table = better_than.contradiction(cfg)
longer = better_than.contradiction(cfg, factor=config.LONGER, models=better_than.tc1_longer_models(cfg))
checks = better_than.tc1_controls(cfg)  # the positive and negative controls' stitches
numbers, claims, side = better_than.contradiction_summary(table, longer, checks, paper_numbers=cfg.paper_numbers)
run.record(numbers, claims)
side

# %% [markdown]
# Ours: mean ± standard deviation over initialisations, in percent (the paper's table gives
# fractions: 0.999 is 99.9%). The Digit row's two stitched columns are the same stitch here
# (Digit into itself); the paper lists two runs of it.
#
# Colour-only into Digit gains {glue:text}`contradiction_a:.2f` points over Digit; Digit into
# Colour-only gains {glue:text}`contradiction_b:.2f` points over Colour-only.

# %%
run.figure("table_c1", better_than.plot_contradiction(
    table, title=f"ResNet-18 (ImageNet stem), {cfg.inits} initialisation(s), scale '{scale}'"))

# %% [markdown]
# ```{glue:figure} table_c1
# :name: fig-s-tc1
# :alt: Three bar charts sharing a y axis of test accuracy in percent on Correlated data, one bar per model (Correlated, Digit, Colour, Colour-only) with error bars, and a black diamond per model for the paper's value: base accuracy, the model stitched into Digit at layer 1, and Digit stitched into the model at layer 1.
#
# Table C1 as bars: ours (mean ± standard deviation over initialisations) and the paper's value
# (diamond). Left, each model alone; middle, the model stitched into Digit; right, Digit stitched
# into the model; all at layer 1 and on Correlated test data.
# ```

# %%
run.figure("gains", better_than.plot_gains(
    table, title=f"ResNet-18 (ImageNet stem), {cfg.inits} initialisation(s), scale '{scale}'"))

# %% [markdown]
# ```{glue:figure} gains
# :name: fig-s-tc1-gains
# :alt: Two bar charts, one bar per model (Correlated, Digit, Colour, Colour-only) with error bars, of the gain in points over the receiver's own accuracy: the model stitched into Digit over Digit, and Digit stitched into the model over the model, with a black diamond per model for the paper's gain and a line at zero.
#
# What the claims are about, on an axis that shows it: the gain in points over the receiver's
# own accuracy of each model stitched into Digit (left) and of Digit stitched into each model
# (right), ours (mean ± standard deviation over initialisations) and the paper's (diamond, from
# its Table C1). The contradiction holds where both Colour-only bars are above zero.
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
# **Controls.** Each claim carries the controls its kind needs (`stitchkit.verdicts.controls`), each
# passing only when shown on its interval; a failed one makes the verdict *inconclusive at this
# scale*. The contradiction says a sender's stitch beats the receiver (kind *improves*): the
# *positive control* (Digit and Colour-only each stitched into itself at layer 1 lose at most 1
# point, the upper end of the basic bootstrap interval over the test images), the *negative
# control* (label-free noise (the clustered noise around one base for every class: it carries no label
# information) stitched into Digit and into Colour-only before layer 4 and before the classifier, with the noise
# sender's recipe, stays at least 20 points below each receiver's self-stitch there (at the closer of the two, measured
# {glue:text}`label_free_beyond_self:.1f` points), else the stitch does the task without the
# sender's information. Since the amendment of 2026-12-02 (before any run on the new networks);
# until then the gate was an untrained ResNet-18, which on this data passes the colour to the
# receiver like any sender, the shortcut the paper is about, so it could never pass where the
# paper's thesis holds. Its result is now a finding, not a gate: the untrained sender stays
# {glue:text}`untrained_beyond_self:.1f` points below the self-stitch) and the *training-length control*. "Digit stitched into itself beats Digit"
# is the paper's own finding about the self-stitch gain, a statistic of trained stitches (kind
# *stitch_other*): a claim here, and a gate nowhere in the book; it carries the positive control
# (Digit into itself loses at most 1 point: a gain passes it) and the training-length control.
# The training-length control retrains the layer-1 stitches of Digit and Colour-only (into each
# other and into themselves; at `paper`, of every model) at {glue:text}`longer_factor` × the
# epochs and re-judges each claim there, for every verdict, decided or not: it passes when the
# result is the same. The controls were matched to the claims in issue 46, after earlier runs
# had been seen (see "Changes after a run").
#
# Criteria fixed before the page's first run (a criterion changed after a run is listed, dated, under *Changes after a run*): the contradiction holds when both gains are non-negative
# (means over initialisations); the self-stitch claim when Digit into itself scores at least
# the Digit model. At `paper` scale a third claim compares all twelve numbers with the paper's
# (each within 2 points); at the other scales the networks or the stitches are not the paper's
# (see the deviations), so the numbers are shown beside the paper's but not judged.

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
#   paper does not say how its initialisations were paired.

# %% [markdown]
# ## Configuration

# %%
as_table(cfg)
