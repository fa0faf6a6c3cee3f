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
# # X-1 · Do the similarity notions agree?
#
# **Part.** *Across the papers*, beyond the four papers: a question none of them asks. The
# hypotheses judged here are **this book's**, each derived from one of the papers (named beside
# it); the verdict words are the book's usual ones, *reproduced* meaning that the hypothesis
# holds at this run's scale.
#
# **Overview.** The four papers measure how similar two layers are in five ways: linear CKA,
# PWCCA and orthogonal Procrustes compare the activations (structural notions); direct matching
# (DM), the least-squares map from one layer's activations to the other's, gives a structural
# reading, its relative residual (*DM struct.*), and a functional one, the accuracy of the
# receiving network with the mapped layer stitched in, relative to its own (*DM func.*). Each
# paper sets notions against each other on its own networks only. This page takes a pair of
# networks from each zoo of the book, computes every notion on every layer pair, *within* the
# first network (the network against itself at two different layers) and *between* the two
# (the first's layer against the second's), and asks how alike two notions rank those layer
# pairs: Kendall's $\tau$ between them, 1 for the same order, 0 for none, −1 for the reverse.
# Distances are negated first, so that $\tau > 0$ is agreement. Which notions agree, and where
# do they part?
#
# **The zoos.** `bansal`: {doc}`../bansal/B-F2A`'s pre-activation ResNet-18s (seeds 0 and 1);
# `hernandez`: {doc}`../hernandez/H-F2`'s R2222 and R1111 (two depths, seed 0); `smith`:
# {doc}`../smith/S-F1B`'s ResNet-18s trained on the Digit set (seeds 0 and 1, colour-MNIST);
# `balogh`: {doc}`../balogh/J-T1`'s ResNet-18s (seeds 0 and 1). The layers are every cut whose
# output is a map (the stem and every block or stage).
#
# **Hypotheses**, per zoo, fixed in `stitchkit.experiments.across` before the page's first run (a criterion changed after a run is listed, dated, under *Changes after a run*):
#
# 1. *Linear CKA and DM (func.) rank the layer pairs between the networks alike*, $\tau \ge 0.5$.
#    From Balogh & Jelasity (2025): in Ding et al.'s tests DM ranks with the best structural
#    measures, linear CKA among them (their Tables 2-3).
# 2. *DM's structural and functional readings rank them alike*, $\tau \ge 0.5$. From Balogh &
#    Jelasity: the two readings of one stitch, both among the best measures.
# 3. *The structural notions agree with one another more than with DM (func.)*: the mean
#    $\tau$ among CKA, PWCCA and Procrustes minus their mean $\tau$ with DM (func.) is above 0.
#    From Balogh & Jelasity's report of Ding et al.'s tests (CKA, PWCCA and Procrustes rank
#    alike) and Bansal et al. (2021), for whom stitching sees what CKA does not.
# 4. *Within a network, DM (func.) is asymmetric where the structural notions are not*: a
#    later layer stitched into an earlier one scores higher than the reverse, on average over
#    the layer pairs. From Hernandez et al. (2022): the triangle.
#
# **Controls.** *Identity*: within a network, every notion must rank each layer most similar to
# itself: no other pair in its row or its column may be more similar than its own pair, by
# more than rounding, on all test images (the rule fixed before any run; a rival that ties the
# own pair within noise but lies above it fails it too, see "Changes after a run"). A notion
# that is computed wrongly, or a stitch that adds accuracy by itself, fails it. *Noise*: each notion must rank the layer pairs alike on every resample of the test images
# (Kendall's $\tau$ between its values on a resample and on all images at least 0.8, over the
# 95% interval of the resamples): a notion whose ranking is mostly noise can agree with nothing.
# *Enough pairs*: at least 10 layer pairs behind each judged number. A failed control makes the
# claims of the notions it concerns inconclusive. No notion here has a trained stitch in it (direct
# matching is an exact least-squares map), so no claim carries a stitching control (the positive,
# negative and training-length controls of the stitching pages).
#
# **Noise.** Each $\tau$ carries a 95% interval from a paired bootstrap over the test images:
# every notion is recomputed on the same resamples (exactly, from per-image quantities:
# `stitchkit.comparing.notions`), so a difference of two $\tau$s is bootstrapped as a difference. A
# resample repeats some images and drops others, so its notions are noisier than on all images,
# and PWCCA, fitted on fewer distinct images, is biased more: a resample's $\tau$ leans towards 0,
# the intervals lean low, and the value on all images could lie above its interval: there the
# interval is the basic one (twice the value minus the percentiles), cut to $\tau$'s range. The
# stability control reads the resamples' $\tau$s themselves (their 95% range). The two networks of
# a zoo are fixed: network-to-network variance is not in the intervals.
#
# **Prerequisites.** CIFAR-10 and MNIST in the data root. Its times, as run and from an empty cache,
# are measured and given in the rerun box above.

# %% tags=["parameters"]
scale = "smoke"  # smoke | demo | gpu | paper
zoo = None  # the zoo: bansal (B-F2A's ResNet-18 seeds 0, 1), hernandez (H-F2's R2222 and R1111), smith (S-F1B's Digit ResNet-18 seeds 0, 1), balogh (J-T1's ResNet-18 seeds 0, 1), or all four
measures = None  # notions compared, at least 2 (stitchkit.compare's: cka, pwcca, procrustes, dm, dm_accuracy)
test_images = None  # test images every notion is measured on and resampled over (Balogh & Jelasity's structural measures: 1,000)
dm_images = None  # training images each direct-matching map is fitted on (K in Balogh & Jelasity: 100)

# %%
from stitchkit.experiments import across
from stitchkit.pagekit.page import open_page
from stitchkit.registry.scales import as_table

run, cfg = open_page("X-1", globals())

# %% [markdown]
# ## Every notion on every layer pair
#
# Each zoo's two networks, the page that trained them, their accuracy on the
# {glue:text}`test_images_used` test images every notion is measured on, and how many layer pairs
# each $\tau$ ranks:

# %%
results = {z: across.agreement(cfg, z) for z in cfg.zoos()}
run.record(*across.agreement_claims(results))
across.networks_table(results)

# %% [markdown]
# ## How alike the notions rank layer pairs

# %%
run.figure("agreement", across.plot_agreement(results))

# %% [markdown]
# ```{glue:figure} agreement
# :name: fig-x1-agreement
# :alt: One heat map per zoo, the five similarity notions on both axes; each cell holds the Kendall tau between two notions with its 95% interval, coloured from blue (minus 1) through white (0) to red (plus 1); below the diagonal for layer pairs within one network, above it for layer pairs between the two networks.
#
# Kendall's $\tau$ between every two notions over the layer pairs of each zoo, with its 95%
# interval (paired bootstrap over the test images): below the diagonal within one network (the
# same layer left out), above it between the zoo's two networks. Red: the two notions rank the
# layer pairs alike; white: unrelated; blue: in reverse order.
# ```
#
# The same numbers as a table, every two notions per zoo, within and between networks:

# %%
across.summary_table(results)

# %% [markdown]
# ## Where the notions part
#
# For each zoo and set of layer pairs, the two notions of lowest $\tau$ and the layer pair
# (A's layer → B's) they rank furthest apart, with its rank under each (1: the most similar
# pair):

# %%
across.partings(results)

# %% [markdown]
# ## Claims
#
# Each verdict is computed from the criterion in its row, fixed in
# `stitchkit.experiments.across` before the page's first run (a criterion changed after a run is listed, dated, under *Changes after a run*). These are this book's hypotheses, not the
# papers' claims: the *paper* column names the paper each is derived from.

# %%
run.save()
run.claims_table()

# %% [markdown]
# ## Deviations
#
# - **Beyond the papers.** No paper reports these numbers; the hypotheses and their thresholds
#   are this book's ($\tau \ge 0.5$ is {doc}`../balogh/J-T3`'s bar for a high rank correlation).
# - **Task-loss matching** (a stitch trained on the task, the notion of Bansal et al. and
#   Hernandez et al., and Balogh & Jelasity's TLM) is not among the notions: one trained stitch
#   per layer pair is beyond a `demo` page. DM (func.) stands for stitching here; it is the
#   starting point of every trained stitch of the book.
# - **Networks** are the zoos' at this scale, as their pages trained them (each page says how its
#   recipe departs from its paper's); their accuracies are in the table above. At this run's scale:
#   - `bansal`: {glue:text}`recipe_bansal`;
#   - `hernandez`: {glue:text}`recipe_hernandez`;
#   - `smith`: {glue:text}`recipe_smith`;
#   - `balogh`: {glue:text}`recipe_balogh`.
#
#   Hernandez et al.'s zoo pairs two depths at seed 0, as {doc}`../hernandez/H-F2` trained no
#   second seed.
# - **Preprocessing** as `stitchkit.compare`: CKA on the flattened maps; PWCCA and Procrustes
#   on positions as examples where the two maps have the same size, else on the pooled vectors
#   (Balogh & Jelasity's); PWCCA's weights from the narrower side. So over layer pairs of
#   different stages these two notions mix two preprocessings, which may rank pairs by their
#   preprocessing as much as by their similarity: read their $\tau$s with that in mind. The DM
#   maps (a 1×1 convolution, A's map resized to B's) are fitted on `dm_images` training images
#   and measured on the test images; CIFAR-10 is the offline JPEG copy.
# - **`gpu`.** The zoos' `gpu` networks, at the papers' widths as their pages train them at `gpu`
#   (B-F2A's ResNet-18s, H-F2's R2222 and R1111, S-F1B's Digit ResNet-18s and J-T1's ResNet-18s, all
#   at width 64, trained as those pages state), on `demo`'s 1,000 test images with the DM maps
#   fitted on K = 100. The notions' bootstrap (1,000 resamples) runs on the host's CPU in float64:
#   at width 64 its 1,001 decompositions of matrices of up to 512 × 512 per layer pair, not the GPU,
#   set the time. Estimated at ~4,400 s from an empty cache (the CPU part uncertain by a factor of
#   two): a page for a long GPU run or the cluster. Chosen before any `gpu` run (2026-11-28).

# %% [markdown]
# ## Summary
#
# The heat maps say which notions rank layer pairs alike in each zoo, within a network and
# between two; the table of partings says where the least alike two part. The result box at the
# top says which of this book's four hypotheses held at this run's scale, zoo by zoo.

# %% [markdown]
# ## Configuration
#
# Every setting of this run (the scale's preset with the parameters above applied).

# %%
as_table(cfg)
