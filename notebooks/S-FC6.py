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
# # S-FC6 · VGG19 with clustered noise
#
# **Paper.** Smith & Marcu (2024), Figure C6, Table C2 and Appendix C.2.
#
# **Overview.** Are ResNets easy to stitch because of their skip connections? The paper repeats
# the clustered-noise experiment of {doc}`S-FC5` on VGG19 (no BatchNorm, no skips): a VGG19 is
# trained on each colour-MNIST set (resized to 32×32), and clustered noise in the shape the
# model expects is stitched into it before `features.2`, `.10`, `.23`, `.30` and before
# `classifier.0`, trained and tested on the noise. The paper finds that Digit *improves* with
# noise stitched in, Correlated holds its accuracy, and Colour and Colour-only vary widely
# between initialisations (40-80% in a follow-up); the rank after the stitch differs from the
# rank the Digit model's own data produces.
#
# **Prerequisites.** MNIST in the data root. Its times, as run and from an empty cache, are measured
# and given in the rerun box above.

# %% tags=["parameters"]
scale = "smoke"  # smoke | demo | gpu | paper
inits = None  # independent initialisations (models of seed k, noise and stitch seed k); paper 3
width = None  # base width of the VGG19 (paper 64); None: the recipe's width
model_epochs = None  # passes over the training set per model (paper 50); None: the recipe's
model_train_size = None  # training images per model (paper 60000); None: the recipe's
stitch_epochs = None  # passes over the noise training set per stitch (paper 50)
stitch_lr = None  # SGD learning rate of the stitch (paper 1e-2)
noise_per_class = None  # clustered-noise training examples per class (paper 6000)
test_size = None  # test images for the whole models' accuracy; None: all 10000
rank_images = None  # test examples behind each rank (the paper's: its 10000)

# %%
from stitchkit.experiments.smith import vgg
from stitchkit.pagekit.page import open_page
from stitchkit.registry.scales import as_table

run, cfg = open_page("S-FC6", globals())

# %% [markdown]
# ## Stitch clustered noise into every VGG19 at five points
#
# Per model: its whole accuracy on its own test set (Table C2) beside the paper's, and the mean
# noise-stitched accuracy at each cut.

# %%
table = vgg.vgg_noise(cfg)
# the training-length control: the cells that decide each claim, their stitches retrained longer
longer = vgg.vgg_longer(cfg, table, vgg.vgg_deciding_cells(table))
checks = vgg.vgg_controls(cfg)  # the positive and negative controls' stitches
numbers, claims = vgg.vgg_summary(table, longer, checks)
run.record(numbers, claims)
vgg.vgg_accuracy_table(table)

# %% [markdown]
# ## Accuracy and rank per cut
#
# Digit's worst cut is {glue:text}`vgg_digit_gap:.2f` points from the whole Digit model,
# Correlated's {glue:text}`vgg_correlated_gap:.2f`; the largest spread over initialisations is
# {glue:text}`vgg_colour_spread:.1f` points for Colour and {glue:text}`vgg_colour_only_spread:.1f`
# for Colour-only.

# %%
run.figure("vgg", vgg.plot_vgg(table, cfg))

# %% [markdown]
# ```{glue:figure} vgg
# :name: fig-s-fc6
# :alt: Two line plots over the five VGG19 stitch points features.2, features.10, features.23, features.30 and classifier.0. Left, the test accuracy in percent of clustered noise stitched into the Correlated, Digit, Colour and Colour-only VGG19 models, shaded over initialisations. Right, the numerical rank after the stitch for the same models, with a dashed line for the Digit model on its own data.
#
# (a) Accuracy on the noise test set when clustered noise is stitched into each VGG19 (mean,
# shading over every initialisation); the table above gives each model's whole accuracy. (b)
# Numerical rank of the first layer after the stitch on noise (mean ± 1 sd), and dashed, the
# same layer of the whole Digit model on Digit test data. Compare with the paper's Figure C6.
# ```

# %% [markdown]
# ## Claims
#
# Every judged number carries a 95% interval (`stitchkit.verdicts.noise`, see {term}`interval`): the test
# images are resampled once and every accuracy is recomputed on the same resample (each noise test set
# and each model's own test images on their own); over the {glue:text}`n_seeds` initialisations, too few to
# resample, the interval is a t interval with one degree of freedom fewer than initialisations,
# its variance the images' plus the initialisations' (jackknife): wide with 3. A claim is
# *reproduced* only when its whole interval lies on the claim's side of the threshold, *not
# reproduced* only when it lies wholly on the other side, and *inconclusive (within noise)*
# otherwise. The
# spread over initialisations is a statistic of the initialisations themselves: only its test
# examples are resampled.
#
# **Controls.** Each claim carries the controls its kind needs (`stitchkit.verdicts.controls`), each
# passing only when shown on its interval; a failed one makes the verdict *inconclusive at this
# scale*. Digit "improves" (kind *improves*) and Correlated "holds" (kind *compatible*) carry
# three: the *positive control* (the model stitched into itself at every cut on its own images,
# with the page's recipe on as many training examples as the noise stitches see, loses at most 1
# point at its worst cut, the upper end of the basic bootstrap interval over the test images; a
# gain passes and is reported, up to {glue:text}`vgg_self_stitch_gain:.2f` points, not gated), the
# *negative control* (label-free noise, the clustered noise around one base for every class,
# so no label information, stitched into the model before `features.30` and `classifier.0` with
# the noise stitches' recipe stays at least 20 points below the model's self-stitch there; since
# the amendment of 2026-12-02: an untrained VGG19 is still stitched there the same way and
# reported, gating nothing, since the colour of Correlated images reaches the receiver through any
# sender, the shortcut the paper is about) and
# the *training-length control*. "Vary widely", a statistic of trained stitches (kind
# *stitch_other*), carries the positive control (Colour and Colour-only into themselves) and the
# training-length control. The training-length control retrains, for every initialisation, the
# stitches of the cells that decide each claim (Digit's and Correlated's worst cut, the Colour /
# Colour-only cell of widest spread) at {glue:text}`longer_factor`× the epochs and re-judges the
# claim on them, for every verdict, decided or not: it passes when the result is the same; the
# whole models, each claim's reference, are not stitches and stay as they are. The controls were
# matched to the claims in issue 46, after earlier runs had been seen (see "Changes after a
# run").
#
# Criteria fixed before the page's first run (a criterion changed after a run is listed, dated, under *Changes after a run*): Digit "improves" when its mean noise-stitched accuracy is at
# least its whole accuracy at every cut; Correlated "holds" when it stays within 2 points of its
# whole accuracy at every cut; Colour and Colour-only "vary widely" when either spreads by 20
# points or more over initialisations at some cut. The premise: every whole VGG19 must reach 90%
# on its own test set (the paper's reach 98-100%, Table C2); a model that has not learned its
# task says nothing about stitching, so a failed premise makes every verdict *inconclusive at
# this scale*. (This control was added after the first `demo` run, before 2026-12-07, whose thin,
# briefly trained VGG19s stayed at 50-71% on three of the four sets and were reported "not
# reproduced": an under-trained model is a limit of the run, not evidence against the paper.)

# %%
run.save()
run.claims_table()

# %% [markdown]
# ## Deviations from the paper
#
# - **Networks.** At this run's scale the VGG19s are {glue:text}`recipe_net`. The paper's: width
#   64 (64 ... 512 channels), 4,096 hidden units in the classifier, all 60,000 images, 50 epochs at
#   batch 64, SGD (momentum 0.9) at lr 1e-2 with a constant learning rate (the paper names no
#   schedule), weight decay 1e-4. `demo`'s are width 16 (16 ... 128 channels) with 512 hidden
#   units, trained 6 epochs (paper 50) on all 60,000 images at the paper's batch and constant lr,
#   with fan-in initialisation and gradient clipping (both below), chosen by measured accuracy per
#   CPU minute (benchmarks/cpu-recipes.md). Each whole VGG19's accuracy is in the table above, and
#   the premise (90%) judges it.
# - **Stitches (`demo`).** Trained 4 epochs on 500 noise examples per class (paper 50 on 6,000).
# - **Resizing.** The 28×28 sets are resized to 32×32 bilinearly; the paper does not say how.
# - **Gradient clipping.** At `smoke` and `demo` the VGG19s' gradients are clipped to a global
#   norm of 1 before each SGD step; the paper names no clipping, and its preset has none. Without
#   it, lr 1e-2 on the thinner no-BN networks `demo` used before 2026-12-07 diverged to NaN on a
#   2-core CPU (one seed in bf16 by step 550, another in fp32 by step 250).
# - **Initialisation.** At `paper` the VGG19s use torchvision's initialisation (Kaiming-normal
#   fan-out convs, N(0, 0.01) linear layers). At `smoke` and `demo` every layer is
#   Kaiming-normal fan-in: on the thinner network `demo` used before 2026-12-07, with torchvision's
#   it stayed at chance (loss 2.303) for the whole short run on Digit; with fan-in it reached 88% in
#   2 epochs.
# - **Rank** uses `rank_images` test examples (2,000 at `demo`; the paper's full test set at
#   `paper`), which caps it at that number minus one.
# - **Test examples.** The noise-stitched accuracies are judged on as many noise test examples as
#   the models' test set has images (`test_size`: 10,000 at `demo` and `paper`, the paper's 1,000
#   per class); the rank reads the first `rank_images` of them (a tenth per class).
# - **Controls' stitches** (a model into itself, an untrained VGG19 into a model; issue 46) train
#   on the model's own images with the noise stitches' recipe, on 10 × `noise_per_class` training
#   images so that they take as many steps; the label-free noise trains and is tested on its own
#   noise, as the clustered noise does; the paper has no such controls.
# - **Scale (`gpu`).** The paper's VGG19s (64 ... 512 channels, 4,096 hidden units) on all 60,000
#   images, trained 6 epochs (paper 50) in batches of 256 (paper 64) at the paper's lr 1e-2 with a
#   cosine decay (the paper names no schedule), keeping `demo`'s fan-in initialisation and gradient
#   clipping at norm 1 (untested at this width); stitches as at `demo` (4 epochs on 500 noise
#   examples per class); rank on 2,000 test examples. Whether the networks reach the 90% premise in
#   1,410 steps is not known before the run. Estimated at ~700 s of one GPU, more than the `gpu` scale's
#   ~9 minutes a page. Chosen before any `gpu` run (2026-11-28).
#
# ## Configuration

# %%
as_table(cfg)
