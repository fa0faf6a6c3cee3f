"""stitchkit: the library behind the model-stitching reproduction companion.

The core is a stack of layers, one folder each, lowest first; a module imports only from its own
folder and the folders below it (``tests/test_layout.py`` checks this, that there is no import
cycle, that no module re-exports another's names and that no module name stands at two levels):

1. :mod:`stitchkit.base`: atomic writes (``fileio``), ``paths``, ``environment`` (the variables a
   run reads, checked at start-up), ``hardware`` (device, precision by capability), ``progress``
   (terminal-only bars), ``linalg`` (float64 least squares), ``ledger`` (the networks a run used),
   ``store`` (content-addressed artifacts, stable keys), ``provenance``, ``cluster`` (a Dask
   cluster by its address), ``figure_files`` (each figure as SVG, its plotted data as CSV),
   ``one_column`` (a figure of several panels laid out again for a phone, one panel per row);
2. :mod:`stitchkit.registry`: ``figures`` (the figure registry: ID, title, module, presets,
   scales; plain data), ``papers`` (plain data), ``scales`` (presets, figure configs, parameter
   validation), ``staleness`` (the library a run imported, by hash: is a page behind the code?);
3. :mod:`stitchkit.verdicts`: ``noise`` (paired-bootstrap intervals), ``gating`` (which failed
   control can bias which outcome), ``results`` (numbers, claims, verdicts), ``claims`` (a claim as
   an experiment states it), ``controls``;
4. :mod:`stitchkit.data`: ``splits``, ``integrity`` (data errors), ``downloads``, ``archives``
   (reading, decoding and caching the data root), ``batches`` (normalisation, device batches with
   batch-level augmentation), ``colour_mnist`` (Smith & Marcu's sets), ``datasets`` (the registry);
5. :mod:`stitchkit.networks`: ``models`` (registry, named cuts), ``train`` (one loop, pluggable
   objective), ``simclr``, ``network`` (a network's spec, trained once, read back), ``zoo`` (each
   paper's network recipes, a table per family);
6. :mod:`stitchkit.stitching`: ``stitches`` (stitch kinds, direct-matching init, task-loss
   matching), ``grid_spec``, ``grid`` (the stitch grid and its execution, local or on Dask);
7. :mod:`stitchkit.measures`: ``similarity`` (CKA, PWCCA, Procrustes, DM distance, rank),
   ``minibatch`` (minibatch CKA), ``probes``, ``ood`` (OOD detectors);
8. :mod:`stitchkit.pagekit`: ``page`` (a notebook's opening line: its figure, scale and
   parameters resolved once, and its run), ``plotting``, ``display``;
9. :mod:`stitchkit.comparing`: ``adapter`` (any PyTorch classifier as a network to stitch),
   ``compare`` (``stitchkit.compare``: every measure between two of a user's own networks),
   ``inputs`` (what ``stitchkit compare`` reads), ``html_report`` (its report and JSON),
   ``notions`` (every notion on every layer pair; Kendall's tau between notions).

On top: :mod:`stitchkit.experiments` (a package per paper, a module per figure or figure family),
the book (:mod:`stitchkit.book`: executing notebooks into pages, the part pages, the Cost page;
nothing below it imports it) and ``cli`` (the command line).
"""

__version__ = "0.2.0"

# The core's layers, lowest first: a folder each. Each imports only from itself and the layers below
# (tests/test_layout.py); the API reference page documents them layer by layer (stitchkit.book.apipage).
LAYERS = ("base", "registry", "verdicts", "data", "networks", "stitching", "measures", "pagekit", "comparing")


def __getattr__(name: str):
    """``stitchkit.compare``: compare two of your own networks (:func:`stitchkit.comparing.compare.compare`),
    imported on first use so that ``import stitchkit`` stays light."""
    if name == "compare":
        from .comparing.compare import compare

        return compare
    raise AttributeError(f"module 'stitchkit' has no attribute {name!r}")
