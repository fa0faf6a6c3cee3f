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
# # S-F1A · Example images of the colour-MNIST data sets
#
# **Paper.** Smith & Marcu (2024), Figure 1a and Appendix A.
#
# **Overview.** Every Smith & Marcu page trains ResNet-18s on variants of MNIST built to push a
# network towards one shortcut or another. Digit pixels (every non-zero MNIST pixel) are
# snapped to white; the background takes one of ten fixed colours, shifted per image by up to
# 10% per channel so that colour must be learned in a general way:
#
# - **Correlated**: the colour is tied to the digit's class; target = digit.
# - **Digit**: a random colour; target = digit (the model must use shape).
# - **Colour**: a random digit; target = colour (shape cannot help).
# - **Colour-only**: no digit, a flat square; target = colour.
# - **MNIST**: the greyscale digits on three channels; target = digit.
#
# The sets are generated deterministically from MNIST (seeded by set and split), so every
# machine builds the same images; a test pins a checksum of a few of them. The Clustered Noise
# sender of {doc}`S-FC5` makes activations, not images, so it has no row here.
#
# **Prerequisites.** MNIST in the data root. Its times, as run and from an empty cache, are measured
# and given in the rerun box above.

# %% tags=["parameters"]
scale = "smoke"  # smoke | demo | gpu | paper
per_class = None  # examples shown of each of classes 0 and 1 per data set

# %%
from stitchkit.data import colour_mnist
from stitchkit.experiments.smith import examples as smith_examples
from stitchkit.pagekit.page import open_page
from stitchkit.registry.scales import as_table

run, cfg = open_page("S-F1A", globals())

# %% [markdown]
# ## Classes 0 and 1 of each data set (test split)

# %%
examples = smith_examples.example_images(cfg)
run.number("n_sets", len(examples))
run.figure("examples", smith_examples.plot_examples(examples))

# %% [markdown]
# ```{glue:figure} examples
# :name: fig-s-f1a
# :alt: A grid of small 28 by 28 pixel images, one row per data set (Correlated, Digit, Colour, Colour-only, MNIST), showing test images of classes 0 and 1: white digits on coloured backgrounds, flat coloured squares, and greyscale digits.
#
# Test images of classes 0 and 1 from each data set (class = the target: the digit for
# Correlated, Digit and MNIST; the background colour for Colour and Colour-only). Compare with
# the paper's Figure 1a.
# ```

# %% [markdown]
# ## The ten background colours
#
# Class k's base colour (RGB, 0-255), from the `colour_MNIST` package the authors used.

# %%
import pandas as pd

pd.DataFrame(colour_mnist.COLOURS, columns=["R", "G", "B"],
             index=pd.Index(colour_mnist.COLOUR_NAMES, name="colour"))

# %% [markdown]
# ## Claims
#
# This page shows data; it makes no claim.

# %%
run.save()

# %% [markdown]
# ## Deviations from the paper
#
# - The random choices (which colour each Digit and Colour image gets, the jitter) are drawn
#   with our own seeds, not the authors'; the recipe is theirs. The jitter is
#   $0.1 \times 255 \times \operatorname{clip}(z, -1, 1)$ per channel, $z \sim N(0, 1)$, as in the
#   authors' code.
# - The images shown are the first of each class in the test split.
# - **`gpu`.** The same images as at every scale: the colour-MNIST data sets do not depend on the
#   scale (the `gpu` networks of the Smith pages train on all 60,000 training images of these sets);
#   nothing is trained. Chosen before any `gpu` run (2026-11-28).
#
# ## Configuration

# %%
as_table(cfg)
