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
# # B-F2B · Supervised vs self-supervised networks on ImageNet
#
# **Paper.** Bansal, Nakkiran & Barak (2021), Figure 2B and Section 5.
#
# **Overview.** The paper stitches ImageNet ResNet-50s trained by self-supervised learning
# (SimCLR, SwAV, DINO; pretrained weights from Goyal et al. 2021 and Caron et al. 2021) into a
# supervised ResNet-50 at every layer, and finds them stitching connected: "good networks
# learn similar representations", whatever their training objective.
#
# **Why this page computes nothing.** ImageNet and those pretrained weights are not available
# offline, and training ResNet-50s on ImageNet is far beyond this companion's scales. The
# paper's own CIFAR-10 experiment on the same question, SimCLR vs supervised ResNet-18s
# stitched both ways ({doc}`B-F6`), stands in for it. Below are B-F6's verdicts, read from its
# results file.
#
# **Prerequisites.** None; run after B-F6.

# %% tags=["parameters"]
scale = "smoke"  # smoke | demo | gpu | paper
results_dir = None  # folder with B-F6.results.json; None: the book's Bansal part

# %%
from stitchkit.experiments.bansal import tables
from stitchkit.pagekit.page import open_page
from stitchkit.registry.scales import as_table

run, cfg = open_page("B-F2B", globals(),
                      role="Figure 2B needs ImageNet, out of reach offline; this page reports its CIFAR-10 stand-in, B-F6")
results, claims = tables.stand_in(cfg)
run.built_from({"B-F6": (tables.stand_in_file(cfg), results)})  # the page is behind when B-F6's results move
run.record({"stand_in_found": int(results is not None)}, [])

# %% [markdown]
# ## The stand-in's verdicts (B-F6)

# %%
claims.style.hide(axis="index").set_properties(**{"text-align": "left", "white-space": "normal"})

# %%
_ = run.save()

# %% [markdown]
# ## Deviations from the paper
#
# - **Everything.** No ImageNet network is trained or stitched here. B-F6 answers the same
#   question (self-supervised vs supervised, stitched at every layer) on CIFAR-10 with
#   ResNet-18s, at the scale its page states.
# - **`gpu`.** Computes nothing, as at every scale: it shows the claims of B-F6 as the book shows
#   that page, its `gpu` run once that is imported (until then its `demo` run). A batch on a lent
#   GPU executes its pages in a staging folder, so B-F2B at `gpu` reads B-F6's `gpu` results only
#   when run after B-F6's `gpu` page has been imported. Chosen before any `gpu` run (2026-11-28).

# %% [markdown]
# ## Configuration

# %%
as_table(cfg)
