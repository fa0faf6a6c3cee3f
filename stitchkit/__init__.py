"""stitchkit: the library behind the model-stitching reproduction companion.

Modules: ``data`` (datasets as uint8 tensors, device batch iterator), ``models`` (registry,
named cut points), ``stitching`` (stitch layers, task-loss and direct matching), ``train``
(one explicit train/evaluate loop), ``similarity`` (CKA, PWCCA, Procrustes, DM distance, rank),
``cache`` (content-addressed artifacts), ``scales`` (smoke/demo/paper presets), ``results``
(provenance, numbers, claim verdicts), ``execution`` (papermill, sweeps, the book), ``plotting``.
"""

__version__ = "0.1.0"
