"""stitchkit: the library behind the model-stitching reproduction companion.

Layers, each importing only from layers below it (a test checks there is no import cycle, and that
nothing below the book imports it):

1. ``fileio`` (atomic writes), ``paths``, ``environment`` (the environment variables a run reads,
   checked at start-up), ``hardware`` (device, precision by capability),
   ``progress`` (terminal-only bars), ``linalg`` (rows, float64 least squares), ``ledger`` (the
   networks a run used), ``figures`` (the figure registry: ID, title, experiment module, presets,
   scales; plain data), ``papers`` (the four papers and the part beyond them; plain data),
   ``scales`` (presets, figure configs, parameter validation), ``staleness``
   (the library a run imported, by hash: is a page behind the code?);
2. data: ``splits`` (a split in memory, subsets, label transforms), ``integrity`` (data errors),
   ``archives`` (reading, decoding and caching the data root), ``downloads`` (the canonical archives
   fetched and checked, without torchvision), ``data`` (normalisation, device
   batches with batch-level augmentation), ``colour_mnist`` (Smith & Marcu's generated sets),
   ``datasets`` (the registry); ``models`` (registry, named cuts, ``forward_intermediates``),
   ``store`` (content-addressed artifacts, stable keys), ``train`` (one loop, pluggable
   objective), ``simclr``, ``networks`` (a network's spec, trained once, read back);
3. ``stitching`` (stitch kinds, direct-matching init, task-loss matching), ``similarity`` (CKA,
   PWCCA, Procrustes, DM distance, rank, low-rank approximations), ``probes`` (linear probes),
   ``ood`` (OOD detectors), ``zoo`` (each paper's model recipes);
4. ``cluster`` (a Dask cluster by its address), ``grid_spec``, ``grid_exec``, ``grid`` (the stitch grid,
   local or on Dask), ``noise``
   (paired-bootstrap intervals), ``gating`` (which failed control can bias which outcome), ``results`` (numbers, claims, verdicts), ``claims`` (a claim
   as an experiment states it, frozen), ``controls``, ``plotting``, ``display`` (tables and captions
   a page shows in one call), ``figure_files`` (each figure as SVG, its plotted data as CSV);
5. ``page`` (a notebook's opening line: its figure, scale and parameters resolved once, and its run),
   ``experiments`` (a package per paper, a module per figure or figure family), ``adapter`` (any PyTorch classifier as a network
   to stitch, by module path; the task-loss stitch between two), ``comparison``
   (``stitchkit.compare``: every measure between two of a user's own networks, in bounded memory),
   ``minibatch`` (minibatch CKA from unbiased HSIC), ``compare_inputs`` (what ``stitchkit compare``
   compares: models and images loaded by name, the user's own data, normalisation per model),
   ``compare_report`` (``stitchkit compare``: an HTML report and a JSON), ``notions`` (every notion on every layer pair,
   on all images and on shared bootstrap resamples of them; Kendall's tau between notions);
6. the book, in its own package :mod:`stitchkit.book` (executing notebooks into pages, the part
   pages, the Cost page, pages computed on a GPU elsewhere: its docstring lists its modules),
   which nothing below it imports;
7. ``cli`` (the command line) on top.
"""

__version__ = "0.2.0"


def __getattr__(name: str):
    """``stitchkit.compare``: compare two of your own networks (:func:`stitchkit.comparison.compare`),
    imported on first use so that ``import stitchkit`` stays light."""
    if name == "compare":
        from .comparison import compare

        return compare
    raise AttributeError(f"module 'stitchkit' has no attribute {name!r}")
