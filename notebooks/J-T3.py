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
# # J-T3 · Specificity test (Ding et al.)
#
# **Paper.** Balogh & Jelasity (2025), Table 3 (CIFAR-10 rows).
#
# **Overview.** Ding, Denain & Steinhardt's test of whether a similarity index tracks
# *function* and ignores what does not matter, such as the random seed. Every block of every
# network is a representation $B$; its function $F(B)$ is the test accuracy of a linear probe
# trained on it. With $A$ the representation of highest $F$, a good index's dissimilarity
# $d(A, B)$ should rise with $|F(A) - F(B)|$: the page reports Kendall's $\tau$ and Spearman's
# $\rho$ between the two over every other $B$. The paper found functional DM at or near the top
# ($\tau$ 0.857 on ResNet-18), and PWCCA below LCKA, as Ding et al. did.
#
# **Control.** The probe must tell the representations apart: its accuracies must span at least
# 10 points (its 95% interval, bootstrapped over the test images), or there is no functional
# difference to rank and the claims are inconclusive. No claim here has a trained stitch in it
# (linear CKA, PWCCA, OPD and direct matching, an exact least-squares map), so none carries a
# stitching control.
#
# **Noise.** Each $\tau$ carries a 95% t interval over the $k$ networks ($k - 1$ degrees of
# freedom). Its standard error is the larger of two: a jackknife that leaves one network's
# representations out and re-chooses the reference $A$ among the rest (the representations sit
# inside the networks, so this varies them too), and a bootstrap over the representations $B$
# (all measures on the same draw, so "PWCCA below LCKA" needs the interval of the *difference*
# of their $\tau$s to exclude 0). Until 2026-11-28 the interval was the bootstrap's alone, with
# the networks fixed: a $\tau$ pooling the blocks of three networks trained alike carried no
# seed-to-seed variance. The jackknife was chosen after an audit had found `dm_func_high_rn`
# decided 0.025 above its bar on that interval, before its first run.
#
# **Prerequisites.** CIFAR-10 in the data root. Run it after {doc}`J-T1` (it reuses what it trained,
# from the cache). Its times, as run and from an empty cache, are measured and given in the rerun
# box above.

# %% tags=["parameters"]
scale = "smoke"  # smoke | demo | gpu | paper
archs = None  # architectures (resnet18, vit)
networks = None  # networks per architecture, seeds 0 .. n-1 (paper 10)
model_epochs = None  # passes over the training set per network (paper 100); None: the recipe's
measure_images = None  # test images of the structural measures (paper 1,000)
test_size = None  # test images of every accuracy; None: all 10k
dm_images = None  # training images of the direct-matching fit (K in the paper: 100)
tlm_epochs = None  # passes of task-loss matching over its training images (paper 30)
tlm_train_size = None  # training images of each TLM stitch; None: all 50k
tlm_batch = None  # images per TLM step (paper 256)
tlm_inter_pairs = None  # ordered pairs of different networks stitched by TLM, the first k of (0,1), (1,0), (0,2), (2,0), ...; None: all
probe_images = None  # training images of each linear probe (paper: the training set)
probe_epochs = None  # Adam epochs of each linear probe

# %%
from stitchkit.experiments.balogh import common, ding, ding_display
from stitchkit.pagekit.page import open_page
from stitchkit.registry.scales import as_table

run, cfg = open_page("J-T3", globals())

# %% [markdown]
# ## Probe every representation, then rank
#
# The networks' test accuracies:

# %%
results = {arch: ding.specificity(cfg, arch) for arch in cfg.archs}
for arch, res in results.items():
    run.record(*ding.specificity_claims(res))
common.architectures_accuracy_table({arch: res["accuracy"] for arch, res in results.items()})

# %% [markdown]
# ## Table 3: ours beside the paper's
#
# Rank correlations between $|F(A) - F(B)|$ and each dissimilarity, with their p-values (the
# paper writes ≈ 0 where a correlation is not significant).

# %%
ding_display.table3(results)

# %% [markdown]
# The networks' jackknife behind every interval: Kendall's $\tau$ of each measure with one
# network's representations left out, the reference $A$ re-chosen among the rest.

# %%
ding_display.jackknife_table(results)

# %%
run.figure("scatter", ding_display.plot_specificity_all(results, cfg))

# %% [markdown]
# ```{glue:figure} scatter
# :name: fig-jt3-scatter
# :alt: Scatter plots per architecture of each representation's probe accuracy against each measure's dissimilarity to the reference representation.
#
# One row per architecture: each point is one representation $B$ (a block of one network), its
# dissimilarity to the reference $A$ (horizontal) against its difference in probe accuracy
# (vertical, points), coloured by the block's depth. A specific index puts the points on a
# rising curve.
# ```

# %% [markdown]
# ## Claims
#
# Each verdict is computed from the criterion in its row, fixed in
# `stitchkit.experiments.balogh` before the page's first run (a criterion changed after a run is listed, dated, under *Changes after a run*).

# %%
run.save()
run.claims_table()

# %% [markdown]
# ## Deviations from the paper
#
# - **Scale.** {doc}`J-T1`'s networks (its deviations say how their recipe departs from the
#   paper's): at `demo` three per architecture (paper ten). At this run's scale the ResNet-18s are
#   {glue:text}`recipe_resnet18`, and the ViTs {glue:text}`recipe_vit`, so the test ranks
#   {glue:text}`rn_representations` and {glue:text}`vit_representations` representations (every
#   block of every network) instead of 80 and 120.
# - **The probe** is a linear classifier trained with Adam (lr 0.01) on standardised features, 30 epochs
#   on 5,000 training images at `demo`, tested on the 1,000 test images of the structural
#   measures. It sees conv maps average-pooled to at most 4 × 4 (then flattened) and, for ViT
#   tokens, the CLS token beside the mean token: the full maps of a width-64 network are
#   too large to probe on every block.
# - **DM (func.)** is one minus the relative accuracy of the direct-matching stitch from $B$
#   into $A$'s network at $A$'s layer, and **DM (struct.)** that fit's relative residual, both
#   from {doc}`J-T1`'s grid; PWCCA takes its weights from the side with fewer features.
# - **SVHN and ImageNet** rows are out of reach offline.
# - **`gpu`.** {doc}`J-T1`'s `gpu` networks and direct-matching grid: three per architecture (paper
#   ten), the ResNet-18 at width 64 and the ViT-Ti (dimension 192, depth 12, 3 heads) on all 50,000
#   images with the paper's Adam but 30 (ResNet) or 40 (ViT) epochs at batch 512 (paper 100 at batch
#   64), so the test ranks 24 and 36 representations (paper 80 and 120). Each probe trains 15 epochs
#   on 20,000 of the 50,000 training images (the paper: the training set): every block's activations
#   on all 50,000 would take ~49 GB per ResNet-18, held twice while the next network's are computed,
#   beyond the GPU's memory. Estimated at ~1,100 s of one GPU from an empty cache, most of it J-T1's
#   six networks and 1,872 direct-matching stitches (~60 s after J-T1's `gpu` run): a page for after
#   J-T1, a longer GPU run or the cluster. Chosen before any `gpu` run (2026-11-28).

# %% [markdown]
# ## Summary
#
# A specific index is one that a change of seed does not fool. The result box at the top says
# which of the paper's three findings held at this run's scale.

# %% [markdown]
# ## Configuration

# %%
as_table(cfg)
