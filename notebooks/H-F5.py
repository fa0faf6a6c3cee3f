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
# # H-F5 · The similarity-trained stitch on the task
#
# **Paper.** Hernandez, Dangovski, Lu & Soljacic (2022), Figure 5 (appendix).
#
# **Overview.** The triangle of {doc}`H-F2` raised the question whether the task-trained
# ("vanilla") stitch *hacks* the receiver: feeds it something that works for the task but is
# unlike the representation the receiver expects. As a baseline the paper trains a second
# stitch on the squared error to the expected representation $B_{\le j}(x)$ alone (the
# *similarity-trained* stitch), by SGD for 30 epochs, and finds that it reaches low task
# accuracy where the vanilla stitch is accurate. Here that stitch is trained the paper's way:
# from a random start, SGD on the mean squared error between its output and the receiver's
# activation, with the grid's optimiser, learning rate, batch and training images, for
# {glue:text}`similarity_epochs:.0f` epochs at this scale (the paper's 30 at `paper`; 10 at
# `demo`, what 2 CPU cores afford), then evaluated on the task beside the vanilla stitch of
# the same cell.
#
# **Controls.** The claim says a stitch *fails* at the task, so it needs the stitch recipes to
# be able to succeed and to be trained long enough (issue 46). (1) Positive control, for both
# recipes: each network stitched into itself on the diagonal, where an exact stitch exists,
# by the vanilla recipe and by the similarity-trained one, loses at most 1 point at its worst
# diagonal cell, judged on the upper end of the interval of the largest self-penalty (a
# self-stitch that gains is reported, not gated). A similarity-trained recipe that cannot even
# reproduce a network from itself would make every similarity-trained stitch look bad. (2)
# Training length: the cells below the diagonal of the pair that decides the claim (the
# highest ratio) are retrained at four times the epochs, both stitches, put in place of their
# 1× values, and the claim judged again must give the same result. No negative control: an
# untrained sender guards claims that a stitch *works*.
#
# **Prerequisites.** CIFAR-10 in the data root. Run it after H-F2 (it reuses what it trained, from
# the cache). Its times, as run and from an empty cache, are measured and given in the rerun box
# above.

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
similarity_epochs = None  # epochs of SGD on the MSE per similarity-trained stitch (paper 30)
similarity_lr = None  # SGD learning rate of the similarity-trained stitch; None: stitch_lr
similarity_warmup = None  # fraction of the similarity-trained stitch's steps spent in linear warmup; None: warmup

# %%
from stitchkit.experiments.hernandez import all_layers, sim_trained
from stitchkit.pagekit.page import open_page
from stitchkit.registry.scales import as_table

run, cfg = open_page("H-F5", globals())

# %% [markdown]
# ## Task accuracy of the two stitches
#
# Per trained pair, the mean accuracy relative to the receiver's own (in % of it) below the diagonal
# ($j < i$, where the triangle's surprise lies) for the similarity-trained and the vanilla stitch,
# their ratio (the claim's number), and for reference the exact least-squares map (the optimum
# the similarity-trained stitch approaches).

# %%
table, accuracy = all_layers.all_pairs(cfg)
sim = sim_trained.similarity_stitches(table, cfg)
longer = sim_trained.similarity_longer(table, sim, cfg)
numbers, claims = sim_trained.similarity_summary(table, sim, longer)
run.record({**numbers, "similarity_epochs": cfg.similarity_epochs}, claims)
sim_trained.similarity_table(table, sim)

# %%
cells = table.merge(sim[["sender", "receiver", "i", "j", "sim_accuracy"]], on=["sender", "receiver", "i", "j"])
run.figure("similarity", all_layers.plot_grids(cells, value="sim_accuracy", title=all_layers.title(cfg),
                                         counts=cfg.layer_name, label="test accuracy, similarity-trained stitch (%)"))

# %% [markdown]
# ```{glue:figure} similarity
# :name: fig-h-f5
# :alt: A grid of heatmaps, one per ordered pair of trained small ResNets, of the test accuracy in percent of the similarity-trained stitch over sender layer (rows) and receiver layer (columns).
#
# Test accuracy (%) of the similarity-trained stitch (SGD on the MSE) for every sender layer
# $i$ above receiver layer $j$ ($j < i$) and on the diagonal of a network into itself, same
# layout as {doc}`H-F2`'s figure of the vanilla stitch (cells not stitched here are blank).
# Compare with the paper's Figure 5, which reports low task accuracy for this stitch where the
# vanilla stitch reaches about 90% in the triangle (the paper gives no number per cell).
# ```

# %% [markdown]
# ## Claims
#
# The verdict is computed from the criterion in its row, fixed on 2026-11-27 (issue 46, after
# earlier runs had been seen): "low, unlike the vanilla stitch" is a similarity-trained stitch
# whose mean accuracy below the diagonal is at most half of the vanilla stitch's there, for every
# pair (the maximum over pairs of the ratio). It is judged on the 95% interval of that maximum
# (the judged value column), from a paired bootstrap over the test images (both stitches and
# the receiver scored on each resample, the maximum recomputed): the claim is reproduced or not
# reproduced only when the whole interval lies on one side of 50%, and is otherwise
# *inconclusive at this scale (within noise)*. A failed control also makes it inconclusive.

# %%
run.save()
run.claims_table()

# %% [markdown]
# ## Deviations from the paper
#
# - **Networks and stitches** are {doc}`H-F2`'s (read from the cache when it ran first), with
#   every deviation stated there: at `demo` R1111 and R2222, stitched at the stem and each
#   stage's end, which keep their block numbers (R1111: 0-4; R2222: 0, 2, 4, 6, 8; so $j < i$
#   follows the paper's indexing), the stitches DM-initialised and trained 2 epochs on 5,000
#   images in batches of 64 at lr 0.01. At this run's scale the networks are
#   {glue:text}`recipe_net` (the paper's: width 64, 40 epochs).
# - **The similarity-trained stitch.** The paper trains it for 30 epochs with SGD on the squared
#   error to the expected representation; `demo` trains 10 (790 steps of batches of 64 on H-F2's
#   5,000 stitch-training images), with H-F2's stitch optimiser, learning rate, weight decay and
#   schedule, from a random start. Until 2026-11-27 this page used the exact least-squares map
#   (direct matching) instead and judged it against half the receiver's accuracy; that map has
#   no training at all, and the paper's claim compares with the vanilla stitch (issue 46). Its
#   accuracy stays in the table above for reference.
# - **Test images.** `demo` evaluates every stitch on all 10,000 test images (2,000 before
#   2026-11-27).
# - **`gpu`.** {doc}`H-F2`'s `gpu` networks and grid (R1111 and R2222 at the paper's width 64 on all
#   50,000 images, 30 epochs; every block; the vanilla stitch at lr 0.001 under the authors'
#   never-ending warm-up, see H-F2). The similarity-trained stitch trains the paper's 30 epochs on
#   all 50,000 stitch-training images in batches of 256, but at the paper's lr 0.01 with a 5%
#   warm-up and a cosine decay rather than the grid's lr 0.001 without decay, which from a random
#   start would give it about a third of `demo`'s learning rate × steps (and `demo`'s recipe, on
#   the width-8 networks used until 2026-12-07, left its self-stitch 8.4 points short); its
#   positive control judges whether that is enough. Estimated at ~2,000 s of one GPU with H-F2's
#   grid cached: a page for a longer GPU run or the cluster. Chosen before any `gpu` run
#   (2026-11-28).

# %% [markdown]
# ## Summary
#
# If a stitch trained to match the expected representation does not give the receiver what it
# needs, while a task-trained stitch does, then the task-trained stitch is finding something
# else than "the same representation". The result box at the top states what held at this
# run's scale.

# %% [markdown]
# ## Configuration

# %%
as_table(cfg)
