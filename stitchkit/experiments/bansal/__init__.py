"""Bansal, Nakkiran & Barak 2021, "Revisiting model stitching to compare neural representations": the
pages B-F2A to B-F9, B-F2B and B-T1 of the catalogue, one module per figure (or figure family).

Shared by the part:

- :mod:`.common`: the base ResNet-18's recipe (config, presets, stitch recipe and grid), the
  paired-bootstrap helpers every claim is judged with, the self-stitch and negative controls, and
  B-F2A's claims;
- :mod:`.length`: the training-length control (:func:`~.length.retrain_longer`) and
  :func:`~.length.decided`;
- :mod:`.seeds`: the seed-variance component of the intervals (a second receiver seed);
- :mod:`.bottoms`: the sweeps' machinery, weaker or stronger bottoms stitched into one top
  (config, grid, claim helpers, tables, training-length control).

The figures:

- :mod:`.f2a`: B-F2A, stitching connectivity (the other architectures, tables and figures);
- :mod:`.f2c_f3ab`: B-F2C (number of samples), B-F3A (label distribution), B-F3B (training time);
- :mod:`.f3c_f6`: B-F3C (width, every ordered pair) and B-F6 (SimCLR vs supervised);
- :mod:`.f4_f5`: B-F4 (stitch kernel size) and B-F5 (random vs trained bottoms, with CKA);
- :mod:`.f7`: B-F7, CKA for "more is better";
- :mod:`.f8`: B-F8, fine-tuning vs stitching;
- :mod:`.f9`: B-F9, freeze training;
- :mod:`.tables`: B-F2B (the CIFAR stand-in for ImageNet) and B-T1 (the qualitative table).

Notebooks and tests import the module that defines a name (``from stitchkit.experiments.bansal
import common, f2a``); this package re-exports nothing.
"""
