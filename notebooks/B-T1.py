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
# # B-T1 · CKA vs stitching: the qualitative table
#
# **Paper.** Bansal, Nakkiran & Barak (2021), Table 1.
#
# **Overview.** The paper's Table 1 sums up its comparison of CKA with stitching on three
# questions: networks from different initialisations ("stitching connectivity"), supervised
# vs self-supervised networks ("all roads lead to Rome"), and networks with more data, training
# time or width ("more is better"). Each of our cells below is built from the results file of
# the page that measured it ({doc}`B-F2A`, {doc}`B-F5`, {doc}`B-F2C`, {doc}`B-F3B`, {doc}`B-F3C`,
# {doc}`B-F7`; B-F6 for self-supervision), with that page's scale and the verdicts of its
# claims, so the table follows the committed runs and is never typed by hand. A page that has
# not run leaves its cell saying so.
#
# **Prerequisites.** None: this page computes nothing and runs in seconds at every scale. Run
# it after the pages it reads (`make book` runs Bansal's pages in catalogue order, this one last).

# %% tags=["parameters"]
scale = "smoke"  # smoke | demo | gpu | paper
results_dir = None  # folder with the pages' <ID>.results.json; None: the book's Bansal part

# %%
from stitchkit.experiments.bansal import tables
from stitchkit.pagekit.page import open_page
from stitchkit.registry.scales import as_table

run, cfg = open_page("B-T1", globals(),
                      role="This page regenerates the paper's Table 1 from the other Bansal pages' results")
results = tables.load(cfg)
run.built_from({fid: (path, results[fid]) for fid, path in tables.source_files(cfg).items()})  # behind when one moves
run.record(tables.numbers(results), [])

# %% [markdown]
# ## Table 1, the paper's and ours
#
# Ours is built from {glue:text}`pages_found` of the {glue:text}`pages_expected` source pages.
# CKA close to 1 means close by CKA; a stitching penalty close to 0 means close by stitching,
# and a gain (negative penalty) means the stronger network's layers improve the weaker one.

# %%
tables.table1(results).style.set_properties(**{"text-align": "left", "white-space": "normal"})

# %% [markdown]
# ## Where each number comes from

# %%
tables.sources(results)

# %%
_ = run.save()

# %% [markdown]
# ## Deviations from the paper
#
# - **Self-supervision.** The paper's column mixes ImageNet (SimCLR, SwAV, DINO into a
#   supervised ResNet-50; out of reach offline, see B-F2B) with CIFAR-10 SimCLR (B-F6). Ours
#   can only come from B-F6.
# - **Scales.** Each cell comes from its page's committed run, at the scale shown; at `demo`
#   the networks are smaller and shorter-trained than the paper's (see each page).
# - **Architectures.** The paper's "Varies" in the CKA row draws on several architectures; ours
#   are ResNet-18 only.
# - **`gpu`.** Computes nothing, as at every scale: each cell reads its page's results as the book
#   shows that page, its `gpu` run where that has been imported (the highest scale shown) and its
#   `demo` run elsewhere, and names that scale. A batch on a lent GPU executes its pages in a
#   staging folder, so B-T1 at `gpu` reads the `gpu` results of its sources (B-F2A, B-F5, B-F6,
#   B-F2C, B-F3B, B-F3C, B-F7) only when run after their `gpu` pages have been imported. Chosen
#   before any `gpu` run (2026-11-28).

# %% [markdown]
# ## Configuration

# %%
as_table(cfg)
