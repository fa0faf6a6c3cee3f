"""stitchkit: the library behind the model-stitching reproduction companion.

Layers, each importing only from layers below it:

1. ``fileio`` (atomic writes), ``paths``, ``hardware`` (device, precision by capability),
   ``progress`` (terminal-only bars), ``linalg`` (rows, float64 least squares), ``scales``
   (presets, figure configs, parameter validation);
2. ``data`` (datasets as uint8 tensors, device batches), ``datasets`` (registry, derived sets),
   ``models`` (registry, named cuts, ``forward_intermediates``), ``store`` (content-addressed
   artifacts, stable keys), ``train`` (one loop, pluggable objective);
3. ``stitching`` (stitch kinds, direct-matching init, task-loss matching), ``similarity`` (CKA,
   PWCCA, Procrustes, DM distance, rank), ``zoo`` (each paper's model recipes);
4. ``grid`` (the stitch grid, local or on Dask), ``results`` (numbers, claims, verdicts),
   ``plotting``;
5. ``experiments`` (one module per paper), ``execution`` (papermill, sweeps, the book), ``cli``;
   ``comparison`` (``stitchkit.compare``: every measure between two of a user's own networks).
"""

__version__ = "0.2.0"


def __getattr__(name: str):
    """``stitchkit.compare``: compare two of your own networks (:func:`stitchkit.comparison.compare`),
    imported on first use so that ``import stitchkit`` stays light."""
    if name == "compare":
        from .comparison import compare

        return compare
    raise AttributeError(f"module 'stitchkit' has no attribute {name!r}")
