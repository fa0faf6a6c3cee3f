"""The book's API reference page (``book/api.md``), generated from the docstrings.

:data:`SECTIONS` groups every module of the package (the book's as ``book.<name>``) by the layer
it belongs to (the layering of :mod:`stitchkit`'s docstring); the page has one ``{automodule}`` block per module, which Sphinx's
autodoc fills from the module's docstring and those of its public members when the book is built.
A test checks that every module is in exactly one section, so a new module cannot be left out.
The experiments (one package per paper) are the figures' own code, read beside their pages: the
page names them without documenting each function.
"""

from __future__ import annotations

import pkgutil

PACKAGE = "stitchkit"

# (heading, what the layer is for, its modules): the order a reader meets them in
SECTIONS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("Your own networks",
     "Compare two PyTorch models of your own at named layers: every similarity measure, direct matching and "
     "the papers' task-loss stitch, with the book's controls and intervals, in bounded memory.",
     ("comparison", "adapter", "minibatch", "compare_inputs", "compare_report", "notions")),
    ("Stitching and similarity",
     "Stitch layers and their initialisations, task-loss and direct matching, the similarity measures, linear "
     "probes and the OOD detectors.",
     ("stitching", "similarity", "probes", "ood", "linalg")),
    ("Models, data and training",
     "The model registry and its named cuts, the data sets read from the data root, one training loop, and "
     "the networks each paper trains.",
     ("models", "zoo", "networks", "train", "simclr", "data", "datasets", "splits", "archives", "downloads",
      "colour_mnist", "integrity", "hardware")),
    ("Intervals, claims and verdicts",
     "Paired-bootstrap intervals, claims and their controls, and the verdict each follows to.",
     ("noise", "claims", "controls", "gating", "results", "page")),
    ("Stitch grids and the cluster",
     "Many stitches at once, on one machine or a Dask cluster.",
     ("grid", "grid_spec", "grid_exec", "cluster")),
    ("Figures and tables",
     "What a page draws and shows, and its figures as files.",
     ("plotting", "display", "figure_files")),
    ("Runs, the cache and provenance",
     "Content-addressed artifacts, atomic writes, what a run used and recorded, and whether a page is behind "
     "the code.",
     ("store", "fileio", "paths", "environment", "ledger", "provenance", "staleness", "progress", "figures",
      "scales")),
    ("The papers and the command line",
     "The four papers and the part beyond them, and the `stitchkit` command.",
     ("papers", "cli")),
    ("The book",
     "The machinery of this book, in its own package: executing notebooks into pages, the part pages and the "
     "scorecard, the Cost page, what changed after a run, and pages computed on a GPU elsewhere.",
     ("book.execution", "book.replication", "book.replicated", "book.notebooks",
      "book.sync", "book.kernels", "book.runs", "book.pages", "book.bookpages",
      "book.catalogue", "book.changes", "book.amendments", "book.cost", "book.findings", "book.report",
      "book.networks_page", "book.batch", "book.gpu_estimates", "book.transfer", "book.apipage")),
)


def package_modules() -> list[str]:
    """Every module of the package and of its ``book`` package (``book.<name>``), not the
    experiments package, nor ``__main__``."""
    import stitchkit
    from stitchkit import book

    top = [m.name for m in pkgutil.iter_modules(stitchkit.__path__) if m.name not in ("__main__", "experiments", "book")]
    return sorted(top + [f"book.{m.name}" for m in pkgutil.iter_modules(book.__path__)])


def experiment_packages() -> list[str]:
    from stitchkit import experiments

    return sorted(m.name for m in pkgutil.iter_modules(experiments.__path__))


def api_markdown() -> str:
    """``book/api.md``: the package's modules by layer, each documented from its docstrings."""
    out = ["# API reference", "",
           "Every module of `stitchkit`, grouped by what it is for, documented from its docstrings. Start with "
           "{py:func}`stitchkit.comparison.compare` to stitch your own networks, or with "
           "{py:class}`stitchkit.results.Run` to see how a page records its numbers and claims.", ""]
    for heading, about, modules in SECTIONS:
        out += [f"## {heading}", "", about, ""]
        for m in modules:
            # reStructuredText, as the docstrings are written (autodoc's output, parsed as MyST, would not be)
            out += ["```{eval-rst}", f".. automodule:: {PACKAGE}.{m}", "   :members:", "```", ""]
    out += ["## The experiments", "",
            "One module (or package) per paper's figures, called by the notebooks; each page's code is read "
            "beside its page (the code cells fold open) rather than here: "
            + ", ".join(f"`{PACKAGE}.experiments.{m}`" for m in experiment_packages()) + ".", ""]
    return "\n".join(out)


__all__ = ["SECTIONS", "api_markdown", "experiment_packages", "package_modules"]
