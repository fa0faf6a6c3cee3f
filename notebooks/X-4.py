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
# # X-4 · Your own networks: stitching two models loaded as a user loads them
#
# **Part.** *Across the papers*, beyond the four papers: a worked example of
# `stitchkit.compare`, the book's measures, stitches, controls and intervals on any two PyTorch
# classifiers.
#
# **What it does.** The two ResNet-18s of {doc}`../bansal/B-F2A` (seeds 0 and 1) are saved as
# plain state dicts, the way a user keeps a checkpoint, then rebuilt from their architecture and
# loaded back, and compared through the generic adapter (`stitchkit.comparing.adapter`): layers named by
# module path and reached by forward hooks, logits read from whatever the model returns. Every
# measure is computed at every pair of the chosen layers: linear CKA (minibatch estimator),
# PWCCA, orthogonal Procrustes, direct matching's residual and stitched accuracy, and the papers'
# task-loss stitch (Bansal et al.'s BatchNorm, 1x1 convolution, BatchNorm; from a
# direct-matching start, as Balogh & Jelasity do), with the book's two stitching controls as rows
# of their own: the receiver stitched into itself (loses at most 1 point) and an untrained copy
# of the sender (stays at least 20 points below the self-stitch). At this run's scale the two
# networks are {glue:text}`recipe_net` (B-F2A's deviations set that against the paper's).
#
# **Checks.** The same comparison on the networks as the zoo returns them must give the same
# numbers (the adapter and the round trip through files add nothing) for every measure with no
# training in it, and direct matching must agree with the book's own computation of it
# ({doc}`X-1`'s), both to within 1e-6. The page stops with an error if either does not. The
# trained stitches are compared too, and their difference is reported (see below); it was found
# on this page's first `demo` run (a 1-image difference in 2,000 stopped it), and the check was
# then narrowed to the measures that have no training in them.
#
# **The same from the command line:**
#
# ```bash
# .venv/bin/stitchkit compare stitchkit.networks.models:resnet18 stitchkit.networks.models:resnet18 \
#     --weights-a a.pt --weights-b b.pt --layers-a layer2 layer3 --layers-b layer2 layer3 \
#     --data cifar10 --out cmp/
# ```
#
# writes the same table as an HTML report and a JSON of every number.
#
# **Prerequisites.** CIFAR-10 in the data root. Its times, as run and from an empty cache, are
# measured and given in the rerun box above.

# %% tags=["parameters"]
scale = "smoke"  # smoke | demo | gpu | paper
test_images = None  # test images compared on (a class-balanced subset of the test split)
fit_images = None  # training images the DM maps and the task-loss stitches are fitted on
cuts = None  # B-F2A's cuts compared, each of A's against each of B's
stitch_epochs = None  # epochs of each task-loss stitch (SGD 1e-2 from a DM start)

# %%
import tempfile
from pathlib import Path

from stitchkit.experiments import across_own
from stitchkit.pagekit.page import open_page
from stitchkit.registry.scales import as_table

run, cfg = open_page("X-4", globals(),
                      role="A worked example of stitchkit.compare on two of the book's networks, loaded as a user loads "
                           "their own")

# %% [markdown]
# ## Saved, reloaded, compared

# %%
with tempfile.TemporaryDirectory() as folder:
    out = across_own.worked_example(cfg, Path(folder), progress=False)
table = out["table"]
run.number("rows", len(table))
run.number("zoo_gap", out["zoo_gap"])
run.number("book_gap", out["book_gap"])
run.number("trained_gap", out["trained_gap"])
run.number("accuracy_a", 100 * out["accuracy_500"][0])
run.number("accuracy_b", 100 * out["accuracy_500"][1])
assert out["zoo_gap"] <= across_own.AGREEMENT_TOL, f"the adapter differs from the zoo path by {out['zoo_gap']:.3g}"
assert out["book_gap"] <= across_own.AGREEMENT_TOL, f"direct matching differs from the book's by {out['book_gap']:.3g}"

# %% [markdown]
# The two networks reach {glue:text}`accuracy_a:.1f`% and {glue:text}`accuracy_b:.1f`% on the
# first 500 compared test images. Through the state dicts and the generic adapter, every one of
# the {glue:text}`rows` numbers below differs from the zoo path's by at most
# {glue:text}`zoo_gap:.2g`, and direct matching from the book's own computation by at most
# {glue:text}`book_gap:.2g`. The rows with a trained stitch in them (`tlm_*`) are the exception
# they should be: they differ from the zoo path's by at most {glue:text}`trained_gap:.3g` (in the
# row's unit). The zoo's networks keep the weight layout their compiled training left them
# (channels_last in places), which a user's freshly built copy does not, and oneDNN's
# convolutions then round differently in the last bits (about 3e-8 when first measured, before
# 2026-12-07); stochastic gradient descent turns that into another stitch, and a few borderline
# images go the other way. The size of that difference is the stitch's own sensitivity, not the
# adapter's.
#
# ## Three readings of the same layer pairs

# %%
run.figure("pairs", across_own.plot_pairs(table))

# %% [markdown]
# ```{glue:figure} pairs
# :name: fig-x-4
# :alt: Three small heat maps side by side, one per measure (linear CKA, direct matching's stitched accuracy, the task-loss stitch's accuracy), each with the sender's layers as rows and the receiver's as columns, every cell annotated with its value between 0 and 1.
#
# Linear CKA (minibatch estimator) and the two stitches' accuracy relative to B's own, at every
# pair of the compared layers of B-F2A's seed-0 network (A, rows) and seed-1 network (B,
# columns). The task-loss stitch is trained from the direct-matching stitch it is drawn beside.
# ```
#
# ## Every measure at every layer pair
#
# Values with their 95% intervals (paired bootstrap over the images; over the minibatches for
# CKA; PWCCA, Procrustes and the DM residual are not resampled). Distances (PWCCA, Procrustes, DM
# residual): lower is more similar. Stitched accuracies are relative to B's own. The control rows
# say whether each control passed.

# %%
table.assign(interval=[("" if lo != lo else f"[{lo:.3f}, {hi:.3f}]") for lo, hi in zip(table.low, table.high)]) \
    [["layer_a", "layer_b", "measure", "value", "interval", "n_images", "note"]].style.format({"value": "{:.4f}"}) \
    .hide(axis="index")

# %% [markdown]
# ## Claims
#
# This page is a worked example; it makes no claim.

# %%
run.save()

# %% [markdown]
# ## Deviations and notes
#
# - CKA here is the minibatch estimator from unbiased HSIC (Nguyen et al. 2021), which bounds
#   memory by one batch; the paper pages use the full-sample estimator, so the two differ most
#   where a layer's features outnumber the images.
# - The task-loss stitch is trained for the epochs set above, from a direct-matching start, its
#   BatchNorm statistics kept where direct matching set them; the papers' own recipes differ per
#   paper (their pages say how).
# - **Changed after a run.** `stitchkit.compare`'s stitch recipe kept its BatchNorm statistics
#   frozen only after this page's first `demo` runs: with them updating during training, on the
#   `demo` networks used until 2026-12-07, B stitched into itself lost 0.55 [−0.50, 1.60] points
#   at block3 and 1.70 [0.35, 3.10] at block7, failing the positive control (a smaller learning rate made it worse: 3.2 points at 1e-3), and
#   the task-loss stitch fell below direct matching's at block7. Frozen, the self-stitch at block7
#   gained 0.3 points. The same runs found the trained stitches' 1-image difference from the zoo
#   path (see above), after which the 1e-6 check was narrowed to the measures with no training.
# - **`gpu`.** The same comparison of {doc}`../bansal/B-F2A`'s `gpu` pair (ResNet-18s of the paper's width 64
#   on all 50,000 images): the user's copies, rebuilt from their state dicts, on the same device as
#   the zoo's (the GPU), every forward pass, fit and stitch in exact fp32 (no TF32). Whether the two
#   paths still agree within 1e-6 on a GPU, where the zoo's copies keep the memory layout their
#   training left and cuDNN may pick other algorithms for it, is what the run will show. Chosen
#   before any `gpu` run (2026-11-28).
#
# ## Configuration

# %%
as_table(cfg)
