"""Networks and training.

The model registry with named cuts, the training loop, SimCLR, a network's spec trained once and
read back (``network``), and each paper's network recipes (``zoo``: a table per family, a recipe per
scale).
"""
