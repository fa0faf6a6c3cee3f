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
# # H-F2 · All-layer stitching of small ResNets: the triangle
#
# **Paper.** Hernandez, Dangovski, Lu & Soljacic (2022), *Model stitching: looking for
# functional similarity between representations*, Figure 2 and Section 3.
#
# **Overview.** Bansal et al. stitch a layer only into the *same* layer of the receiver.
# Hernandez et al. stitch every layer $i$ of a sender $A$ into every layer $j$ of a receiver $B$,
# for every ordered pair of 16 small ResNets $R_{abcd}$ (a..d ∈ {1, 2} residual blocks per
# stage; R1111 is ResNet-10, R2222 ResNet-18). The stitched network is
# $C = B_{j<} \circ S \circ A_{\le i}$, and its test accuracy is the similarity of layer $i$
# of $A$ and layer $j$ of $B$ (layer 0 is the stem convolution, layer $k$ the output of the
# $k$-th block, as the paper indexes them; `demo` stitches only the stem and the last block of
# each of the four stages, which keep their block numbers: R1111's layers 0-4, R2222's 0, 2, 4,
# 6 and 8). When the maps differ in size, the stitch $S$ is a $k \times k$ convolution with
# stride $k$ (receiver smaller) or a nearest upsample then a $1 \times 1$ convolution (receiver
# larger); no BatchNorm.
#
# The paper expected a diagonal of high similarity and found a **triangle**: accuracy is high
# wherever the receiver's layer is at or before the sender's ($j \le i$), whatever the
# architectures, and low above. We summarise each pair by its mean stitched accuracy relative to
# the receiver's own, on and below the diagonal and above it.
#
# **Noise.** Every judged number carries a 95% interval from a paired bootstrap over the test
# images: on each resample every stitch is re-scored with its receiver, image by image, and a
# minimum or maximum over pairs is recomputed as such. A claim is reproduced or not reproduced
# only when its whole interval lies on one side of its threshold; otherwise it is *inconclusive
# at this scale (within noise)*. A control with a bound passes only when its whole interval
# lies on its pass side.
#
# **Controls**, matched to what each claim says (issue 46; before 2026-11-27 a two-sided
# self-stitch gate of ±0.5 points gated every claim). (1) Positive control, on every claim:
# each network stitched into itself on the diagonal ($i = j$), where an exact stitch exists,
# loses at most 1 point at its worst cell, judged on the upper end of the interval of the
# largest self-penalty (bootstrapped as a maximum). A stitch that falls further means the stitch
# recipe is too weak to judge; a self-stitch that *gains* is reported (the self-stitch gain in
# the numbers), not gated. (2) Negative control, on the claim that stitches *work* (the lower
# triangle) only: an untrained copy stitched into its trained network stays at most 50% of the
# receiver's accuracy outside the corner $i, j \le 1$ (the paper's own control). If it reached
# more, the stitch would be powerful enough to do the task itself, and a high triangle would say
# nothing about the networks. The claims that stitches *fail* (above the diagonal, and from an
# untrained sender) do not need it. (3) Training length, on every claim, decided or not: the
# cells that decide the claims are retrained with four times the epochs and put in place of
# their 1× values, and each claim, judged again on that table, must give the same result
# (below).
#
# **Prerequisites.** CIFAR-10 in the data root. Its times, as run and from an empty cache, are
# measured and given in the rerun box above.

# %% tags=["parameters"]
scale = "smoke"  # smoke | demo | gpu | paper
archs = None  # small ResNets (of r1111 ... r2222; paper: all 16)
controls = None  # architectures whose untrained copy is stitched into and from the trained one (the controls)
width = None  # base width (paper 64); None: the recipe's width
model_epochs = None  # passes over the training set per model (paper 40); None: the recipe's
stitch_init = None  # stitch initialisation: dm (direct matching) or default (random)
stitch_epochs = None  # passes over the stitch training set (paper 4)
stitch_train_size = None  # training images per stitch; None: all 50k
stitch_lr = None  # SGD learning rate of the stitch (paper 0.01)
stitch_batch = None  # images per stitch step (paper 256)
warmup = None  # fraction of the stitch's steps spent in linear warmup
dm_images = None  # training images of the direct-matching fit
test_size = None  # test images for every accuracy; None: all 10k
self_pairs = None  # architectures also stitched into themselves (the convergence control is their diagonal); None: every one of archs
cut_every = None  # stitch at the stem and every k-th block (and the last); 1: every block
cut_at = None  # where to stitch: blocks (the stem and every block, thinned by cut_every) or stages (the stem and the last block of each stage); layer i counts blocks either way, as the paper's

# %%
from stitchkit.pagekit.display import accuracy_table, plain
from stitchkit.experiments.hernandez import all_layers, spot, judging
from stitchkit.pagekit.page import open_page
from stitchkit.registry.scales import as_table

run, cfg = open_page("H-F2", globals())

# %% [markdown]
# ## Stitch every layer into every layer
#
# The networks' test accuracies, then per ordered pair the triangle summary: mean stitched
# accuracy relative to the receiver's own on and below the diagonal ($j \le i$), above it
# ($j > i$), and outside the corner $i, j \le 1$.

# %%
table, accuracy = all_layers.all_pairs(cfg)
longer = judging.longer_sample(table, cfg)
numbers, claims = judging.grid_summary(table, accuracy, longer)
run.record(numbers, claims)
run.record(spot.f2_spot_numbers(), [])  # the committed GPU spot checks' numbers the prose quotes
accuracy_table(accuracy)

# %%
all_layers.triangle_table(table)

# %%
run.figure("grids", all_layers.plot_grids(table, title=all_layers.title(cfg), counts=cfg.layer_name))

# %% [markdown]
# ```{glue:figure} grids
# :name: fig-h-f2
# :alt: A grid of heatmaps, one per ordered pair of trained small ResNets, each showing the stitched test accuracy in percent over sender layer (rows) and receiver layer (columns), with the diagonal dashed.
#
# Stitched test accuracy (%) for every sender layer $i$ (rows, 0 = stem) and receiver layer $j$
# (columns), one panel per ordered pair of trained networks (rows of panels: senders; columns:
# receivers). Dashed: the diagonal $j = i$. The paper's triangle is the high region on and
# below it. Compare with the paper's Figure 2 (left).
# ```

# %%
run.figure("controls", all_layers.plot_grids(table, kinds=("random sender", "random receiver"),
                                       counts=cfg.layer_name, title="Controls: untrained copies"))

# %% [markdown]
# ```{glue:figure} controls
# :name: fig-h-f2-controls
# :alt: Heatmaps of stitched test accuracy over sender and receiver layers for an untrained network stitched into its trained counterpart and the trained network stitched into the untrained one.
#
# The controls: an untrained copy stitched into its trained network (left) and the trained
# network into the untrained copy (right), same axes and colour scale. Compare with the
# paper's Figure 2 (right): low except in a corner.
# ```

# %% [markdown]
# ## Are the stitches trained enough?
#
# The positive (self-stitch) control cannot tell: on the diagonal of a network into itself, direct
# matching already finds the exact stitch. Elsewhere the stitch starts from a least-squares
# fit that can be far from the best task-trained stitch. So the cells that decide the claims
# are retrained with four times the epochs, everything else equal: every cell on or below the
# diagonal of the pair with the lowest mean there (the pair that decides the lower-triangle
# claim), every cell above the diagonal of the pair with the highest mean there (the pair that
# decides the upper-triangle claim), the worst cell on or below the diagonal of every other pair
# of two different networks (where a stitch that stopped short shows most), and, for each untrained sender,
# its cells at the first, middle and last layer of each side outside the corner $i, j \le 1$
# (a sample of the cells that decide the claim about the untrained controls). The retrained cells then replace their
# 1× values in the grid, like for like (the receivers' own accuracies, the reference of every
# relative accuracy, do not depend on the stitches), and each claim is judged again on that
# table, with its interval. The control passes when that gives the same result as the
# grid; otherwise the grid's accuracies measure how long the stitches trained rather than the
# representations, and the claim is *inconclusive at this scale*. (The sample grew twice after
# runs: the worst cells joined it after a `demo` run, on the width-8 networks used until
# 2026-12-07, whose first sample of nine cells passed while R2222 → R1111 from block 2 into
# block 1, outside the nine, gained 22.8 points with four times the epochs; the whole deciding
# triangles replaced the nine cells of the first pair after a reading review found that a claim
# decided by another pair was re-judged on unchanged cells.)

# %%
plain(longer)

# %% [markdown]
# ## Claims
#
# Each verdict is computed from the criterion in its row, fixed in
# `stitchkit.experiments.hernandez` before the page's first run (a criterion changed after a run is listed, dated, under *Changes after a run*). The paper gives no numbers for "high" and
# "low"; we take at least 90% of the receiver's own accuracy on average on and below the
# diagonal, at most 50% above it and, for the untrained controls, at most 50% outside the
# corner, for every pair (the minimum or maximum over pairs). Each is judged on the 95%
# interval of its value (the judged value column): a claim whose interval straddles its
# threshold is *inconclusive at this scale (within noise)*, and so is one whose control failed.

# %%
run.save()
run.claims_table()

# %% [markdown]
# ## Deviations from the paper
#
# - **Networks.** At this run's scale the networks are {glue:text}`recipe_net`. The paper trains
#   all sixteen architectures at width 64 for 40 epochs at batch 256, SGD (momentum 0.9) at lr
#   0.01, weight decay 0.01, a warm-up then a cosine decay (the authors' scheduler never leaves its
#   warm-up, a code quirk; `paper` warms up for 5% of the steps, then decays); `paper` uses all
#   sixteen with every control. `demo` uses two (R1111 and R2222) with one control architecture,
#   and stitches R2222 but not R1111 into itself; its networks train at width 16 for 12 epochs in a
#   short recipe (batch 512, Nesterov SGD at lr 0.2 after a 10% linear warm-up, then a cosine
#   decay, weight decay 5e-4, label smoothing 0.1) instead of the paper's (batch 256, lr 0.01,
#   weight decay 0.01, 40 epochs), chosen by measured accuracy per CPU minute
#   (benchmarks/cpu-recipes.md). The paper's networks exceed 90% accuracy; this run's are in the
#   table above (and on the {doc}`../networks` page).
#   `gpu` (one GPU, minutes) uses R1111 and R2222 at the paper's width 64 on all 50,000 images,
#   trained 30 of the paper's 40 epochs; R1111 is the one stitched into itself (the self-stitch
#   control) and the one whose untrained copy is the power control.
# - **Stitch training at `gpu`.** The paper's recipe (50,000 images, batches of 256, the
#   authors' effective schedule, tested on all 10,000 images) for its 4 epochs (780 steps), at
#   lr 0.001 as at `paper` (below), every layer indexed as in the paper (the stem, then each
#   block). The training-length control retrains its sample at 4× (16 epochs). The `gpu` run of
#   2026-11-24 trained 2 epochs (390 steps); its self-stitch control failed at R1111 block3 and 4×
#   gained 3.26 points on average, so the preset was lengthened to 4 epochs on 2026-11-27 after
#   that run, from a measurement on the same kind of GPU (the paper's 4 epochs: self-stitch within
#   0.15 points, 4× gains at most 0.38 points at j ≤ i; `benchmarks/spot/hernandez-f2-gpu-length.json`).
#   At about 20-25 GPU minutes this preset is longer than the `gpu` scale's minutes per page.
# - **Data.** The offline CIFAR-10 copy is JPEG-compressed (accuracies about 1-3 points lower).
# - **Stitch training.** Stitches start from direct matching (the float64 least-squares fit of
#   the receiver's activations, with k×k patches as rows for strided stitches), then train with
#   the paper's SGD recipe; `demo` trains 2 epochs on 5,000 images in batches of 64, 156 steps
#   (the paper: 4 epochs on 50,000 in batches of 256, 780 steps), and measures accuracy on all
#   10,000 test images, as the paper (2,000 before 2026-11-27).
# - **Layers at `demo`.** Only the stem and the last block of each stage are stitched (5 × 5
#   cells a pair instead of up to 9 × 9). They keep their block numbers (R1111: 0-4; R2222: 0,
#   2, 4, 6, 8), so the diagonal, the triangle ($j \le i$) and the corner follow the paper's
#   indexing; earlier `demo` runs numbered them by stage (0-4), which put R1111's block 2 into
#   R2222's block 4 on the diagonal, where the paper has it above. Stitching only there leaves
#   enough time for stitches that are trained enough: an earlier `demo`, on the width-8 networks
#   used until 2026-12-07, stitched at every block for 20 steps at lr 0.001, and nine of its cells
#   retrained with four times the epochs gained 5.1 points on average, so every claim was
#   inconclusive. The corner the controls may pass in ($i, j \le 1$) then holds the stem alone:
#   the control, R2222, has no cut at block 1.
# - **Learning-rate schedule.** The authors' scheduler warms up over 10 epochs while the
#   stitch trains for 4, so it never leaves its warmup: the lr rises linearly from 0 to
#   0.4 × 0.01. `demo`'s stitches warm up for 5% of the steps, then decay by a cosine (stable
#   on the width-8 networks used until 2026-12-07; on this run's, the self-stitch control above
#   says). `paper` copies the authors' effective schedule (`warmup=2.5`), because with ours
#   width-64 stitches diverge (the spot check below).
# - **Stitch learning rate at `paper`: 0.001, not 0.01.** Even with the authors' schedule,
#   {glue:text}`spot_schedule_fell:.0f` of the {glue:text}`spot_schedule_self:.0f` self-stitches
#   of the paper-scale spot check fell, by {glue:text}`spot_schedule_fall_min:.1f` to
#   {glue:text}`spot_schedule_fall_max:.1f` points (the control fails); at a tenth of the rate
#   {glue:text}`spot_lr_held:.0f` of the {glue:text}`spot_lr_self:.0f` hold (both spot checks
#   below). `demo` keeps the paper's 0.01 (with batches of 64); the self-stitch control above
#   says whether it holds there.
# - **Untrained networks** keep their random weights, but their BatchNorm statistics are
#   recalibrated on 2,000 training images (a fresh BatchNorm in eval mode is the identity and
#   degenerates a deep network); the paper's untrained networks are at about 10% accuracy
#   either way.
# - **The pooled vector and classifier** are not stitched (the paper's grids run over the stem
#   and the blocks).

# %% [markdown]
# ## Paper-scale spot check on a GPU
#
# The paper's networks and stitch recipe on part of the grid: R1111 and R2222 at width 64,
# trained 40 epochs on all of CIFAR-10 (the paper's networks are above 90%); every layer pair
# of both ordered pairs of different networks and each network into itself at $i = j$ (the
# convergence control), each stitch trained 4 epochs on 50,000 images and tested on all 10,000.
# It was run by `benchmarks/paper_spot.py` on a GPU lent to one session (device, commit and
# wall time below); the page reads the committed tables and judges them with the criteria and
# controls above, except the training-length control: the spot checks predate it and did not
# run its longer stitches (theirs trained the paper's 780 steps, 5 times the demo's 156). The
# tables keep each stitch's accuracy but not its per-image results, so these verdicts rest on
# point values, without an interval (the "judged on" column). They are shown, not recorded:
# the page's verdicts are its own run's.
#
# Three runs on the same networks: first with the stitch learning rate lowered to 0.001 (a
# tenth of the paper's; a deviation, chosen because the paper's rate fails the control, below),
# then with the paper's 0.01 and the authors' effective schedule, both starting every stitch
# from direct matching; last, the paper's own recipe throughout: lr 0.01 and a random start.

# %%
spots = ("hernandez-f2-lr0.001", "hernandez-f2", "hernandez-f2-random-init")
run.figure("spot", spot.spot_figure(spots))
spot.spot_section(spots)

# %% [markdown]
# ```{glue:figure} spot
# :name: fig-h-f2-spot
# :alt: Heatmaps of stitched test accuracy over sender and receiver layers for the paper-scale R1111 and R2222 networks, both ordered pairs, plus each network's diagonal into itself.
#
# The paper-scale spot check (the first run above, stitch lr 0.001): stitched test accuracy
# (%) for every sender layer $i$ (rows) and receiver layer $j$ (columns), same layout as the
# figure above; the self pairs were stitched on their diagonal only.
# ```
#
# With the positive control passing (lr 0.001), the lower triangle's accuracies are high at
# paper scale (its verdict stays inconclusive there: the spot checks stitched no untrained
# sender, so the negative control that claim needs was not run), but stitches above the
# diagonal are not low: from an earlier sender layer into a later receiver layer a
# DM-initialised stitch keeps most of the accuracy (R1111 into R2222 above all), so the "low
# above" half of the triangle is not reproduced there. Every stitch here starts from direct
# matching where the paper's starts from a random one; a better start can only raise a
# stitch's accuracy, so this may be where the two differ. The paper's own recipe (the third run)
# cannot settle it here: from a random start at lr 0.01, {glue:text}`spot_random_below:.0f` of
# the {glue:text}`spot_random_self:.0f` self-stitches end more than half a point below their
# network, {glue:text}`spot_random_far:.0f` of them more than 10 points below, at
# {glue:text}`spot_random_far_acc_min:.0f`-{glue:text}`spot_random_far_acc_max:.0f`% (final
# training loss {glue:text}`spot_random_far_loss_min:.2f`-{glue:text}`spot_random_far_loss_max:.2f`;
# chance is ln 10 ≈ 2.30), so its control fails and its verdicts are inconclusive.
#
# Where training, not the representations, set the number: a self-stitch starts at the exact
# solution (direct matching reproduces the network), so any fall during its training is the
# stitch recipe's. The self-stitches that fell by more than half a point, first
# with the authors' effective schedule (the second spot check above), then with the nominal one (5% warmup
# to 0.01, then cosine; the same networks, an earlier spot check):

# %%
spot.fell_section([("hernandez-f2", "authors' effective schedule"),
                   ("hernandez-f2-nominal-schedule", "nominal schedule")])

# %% [markdown]
# Is it the precision or the learning rate? The worst case, R1111 into itself at block 3, trained
# again on a GPU with the same recipe in bf16 and in fp32, and with a ten times lower lr
# (`benchmarks/spot_diverge.py`; accuracy in %):

# %%
spot.diverge_section("hernandez-f2-diverge")

# %% [markdown]
# A variant that falls at full lr in both precisions but holds at a tenth of it says the fall
# is the learning rate's: the authors' lr, even at its effective 0.4 × 0.01, is then too high
# for some width-64 layers. The first spot check above therefore ran with lr 0.001, and its
# control passes; a `paper` run of the whole grid should do the same (`stitch_lr=0.001`, a
# deviation to state).

# %% [markdown]
# ## Summary
#
# If the triangle holds, a stitch can take a deep layer's representation and turn it into what
# an earlier layer of another network expects, so a high stitching accuracy says the sender
# has *at least* the information the receiver needs, not that the two layers are alike. The
# result box at the top states whether the triangle and the controls held at this run's scale.

# %% [markdown]
# ## Configuration

# %%
as_table(cfg)
