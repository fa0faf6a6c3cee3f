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
# # X-2 · Which notions identify corresponding layers, zoo by zoo?
#
# **Part.** *Across the papers*, beyond the four papers. The claims judged here are Balogh &
# Jelasity's ({doc}`../balogh/J-T1`), made on their ResNet-18s; this page asks whether they
# hold on the other papers' networks. The verdict words are the book's usual ones,
# *reproduced* meaning that the claim holds on that zoo at this run's scale.
#
# **Overview.** Balogh & Jelasity (2025) test a similarity notion by *layer identification*:
# within a network, each layer should be most similar to itself; between two networks of one
# architecture trained from different seeds, each layer of the second should be most similar
# to the corresponding layer of the first. On their ResNet-18s, linear CKA and DM's
# structural reading identify most corresponding layers between networks (96.11% and 92.50%),
# PWCCA and orthogonal Procrustes few (12.50% and 19.17%), DM's functional reading two thirds
# (66.39%), and all five identify every layer within a network. This page runs the same test,
# by the same rule, on a pair of networks of one architecture from each zoo of the book.
#
# **The zoos.** `bansal`: {doc}`../bansal/B-F2A`'s pre-activation ResNet-18s (seeds 0 and 1);
# `hernandez`: {doc}`../hernandez/H-F2`'s R2222 (seed 0) and a second R2222 trained from seed 1
# by the same recipe; `smith`: {doc}`../smith/S-F1B`'s ResNet-18s trained on the Digit set
# (seeds 0 and 1); `balogh`: {doc}`../balogh/J-T1`'s ResNet-18s (seeds 0 and 1). The layers
# are every cut whose output is a map (the stem and every block or stage), as on
# {doc}`X-1`, whose computation this page shares.
#
# **Claims**, per zoo, Balogh & Jelasity's for ResNet-18 with J-T1's criteria, fixed in
# `stitchkit.experiments.across_identify` before the page's first run (a criterion changed after a run is listed, dated, under *Changes after a run*):
#
# 1. *Every notion identifies every layer within its network*: the lowest of the five
#    intra-network percentages is at least 90%, J-T1's bar, on its interval (was 100% until the
#    amendment of 2026-12-02: with the exact bound of a count at its limit, below, 100% could
#    never pass; a perfect notion is told from 90% from 36 layers on, so on a zoo's 5-10 layers
#    this claim is within noise, and says so).
# 2. *Between networks, linear CKA and DM (struct.) identify most corresponding layers*: both
#    percentages at least 75% (theirs: 96.11% and 92.50%; 75% allows two of nine layers missed).
# 3. *Between networks, PWCCA and Procrustes struggle while linear CKA performs very well*:
#    CKA's percentage ahead of both by at least 30 points, J-T1's margin.
#
# **Rule.** J-T1's: a layer $j$ of the target network is identified when no layer of the
# source network is more similar to it than the source's layer $j$ (a tie counts as
# identified); distances are negated first. Within a network, source and target are the same
# network; between networks, the first network is the source.
#
# **Controls.** *Enough layers*: at least 5 per network. *Identity*, for the claims between
# networks: within a network, each notion must rank every layer most similar to itself, both
# ways, on all test images ({doc}`X-1`'s control): a notion computed wrongly, or a stitch that
# adds accuracy by itself, fails it, and its result between networks then says nothing. No
# notion here has a trained stitch in it (direct matching is an exact least-squares map), so no
# claim carries a stitching control. *Ties*: within a network, {doc}`../balogh/J-T1`'s rule for bounded
# maxima: a rival beats a layer's own pair only when the 95% interval of their paired difference
# lies above 0; a rival within noise is a tie, and a tie is identified.
#
# **Noise.** Each percentage carries a 95% interval from a bootstrap over what varies here: the
# test images (every notion on the same resamples, as on {doc}`X-1`) and the target layers, the
# cases a percentage counts (drawn with replacement, one draw for every notion, so a difference of
# two is paired); a percentage over $L$ layers moves in steps of $100/L$. The two networks of a
# zoo are fixed: where J-T1 averages over several networks, each zoo here has one pair, so
# network-to-network variance is not in the intervals. A percentage that no resample moves
# (every layer identified, or none, on every resample) carries the exact binomial
# (Clopper-Pearson) 95% interval of its count of layers, around the reason no resample moves it:
# 8 of 8 layers is compatible with a rate of 63%.
#
# **Prerequisites.** CIFAR-10 and MNIST in the data root. Its times, as run and from an empty cache,
# are measured and given in the rerun box above.

# %% tags=["parameters"]
scale = "smoke"  # smoke | demo | gpu | paper
zoo = None  # the zoo: bansal (B-F2A's ResNet-18 seeds 0, 1), hernandez (H-F2's R2222, seeds 0 and 1), smith (S-F1B's Digit ResNet-18 seeds 0, 1), balogh (J-T1's ResNet-18 seeds 0, 1), or all four
measures = None  # notions tested (stitchkit.compare's: cka, pwcca, procrustes, dm, dm_accuracy)
test_images = None  # test images every notion is measured on and resampled over (Balogh & Jelasity's structural measures: 1,000)
dm_images = None  # training images each direct-matching map is fitted on (K in Balogh & Jelasity: 100)

# %%
from stitchkit.experiments import across_identify as identify
from stitchkit.pagekit.page import open_page
from stitchkit.registry.scales import as_table

run, cfg = open_page("X-2", globals())

# %% [markdown]
# ## Layers identified, notion by notion
#
# The percentage of layers each notion identifies, within a network and between each zoo's two
# networks, with its 95% interval over the {glue:text}`test_images_used` test images; the last
# column is Balogh & Jelasity's ResNet-18 result between networks (their Table 1):

# %%
results = {z: identify.identification(cfg, z) for z in cfg.zoos()}
run.record(*identify.identification_claims(results))
identify.identification_table(results)

# %%
run.figure("identification", identify.plot_identification(results))

# %% [markdown]
# ```{glue:figure} identification
# :name: fig-x2-identification
# :alt: Grouped bars, one group per similarity notion, one bar per zoo: the percentage of corresponding layers identified between two networks, with 95% intervals; black marks at Balogh and Jelasity's ResNet-18 values.
#
# Corresponding layers identified between a zoo's two networks (%), by each notion, with 95%
# intervals (paired bootstrap over the test images). Black marks: Balogh & Jelasity's
# ResNet-18 (their Table 1, ten networks).
# ```

# %% [markdown]
# ## Claims
#
# Each verdict is computed from the criterion in its row, fixed in
# `stitchkit.experiments.across_identify` before the page's first run (a criterion changed after a run is listed, dated, under *Changes after a run*).

# %%
run.save()
run.claims_table()

# %% [markdown]
# ## Deviations
#
# - **Beyond the papers.** Balogh & Jelasity make these claims for their own ResNet-18s only;
#   applying them to the other zoos is this book's question.
# - **Task-loss matching** (TLM), the notion their test finds wanting, is not among the notions:
#   one trained stitch per layer pair and zoo is beyond a `demo` page ({doc}`../balogh/J-T1`
#   runs it on their zoo). Their claims about TLM are not judged here.
# - **One pair of networks per zoo**, not ten; the first network is always the source.
# - **Networks** are the zoos' at this scale, as their pages trained them (each page says how its
#   recipe departs from its paper's); their accuracies are on {doc}`X-1` and the
#   {doc}`Networks page <../networks>`. At this run's scale:
#   - `bansal`: {glue:text}`recipe_bansal`;
#   - `hernandez`: {glue:text}`recipe_hernandez`;
#   - `smith`: {glue:text}`recipe_smith`;
#   - `balogh`: {glue:text}`recipe_balogh`.
#
#   Hernandez et al.'s second R2222 (seed 1) is trained here by H-F2's recipe.
# - **Layers and preprocessing** as {doc}`X-1`: the stem and every block or stage (J-T1 uses
#   the blocks); PWCCA and Procrustes on positions as examples where two maps have the same
#   size, else on the pooled vectors; CIFAR-10 is the offline JPEG copy.
# - **`gpu`.** {doc}`X-1`'s `gpu` settings and notions (read from its cache when it ran first) and
#   Hernandez et al.'s second R2222 (seed 1), trained by H-F2's `gpu` recipe (width 64, 30 epochs;
#   paper 40). Its one new set of notions, R2222 seed 0 against seed 1, runs on the host's CPU as
#   X-1's do. Estimated at ~770 s of one GPU after X-1's `gpu` run, ~4,700 s from an empty cache
#   (the CPU part uncertain by a factor of two). Chosen before any `gpu` run (2026-11-28).

# %% [markdown]
# ## Summary
#
# The table and the bars say which notions pick out the corresponding layer in each zoo; the
# result box at the top says, zoo by zoo, whether Balogh & Jelasity's three claims held at this
# run's scale.

# %% [markdown]
# ## Configuration
#
# Every setting of this run (the scale's preset with the parameters above applied).

# %%
as_table(cfg)
