"""The book's API reference page (``book/api.md``), generated from the docstrings.

:func:`sections` groups every module of the package by the layer folder it is in
(``stitchkit.LAYERS``, top layer first: the order a reader meets them in, starting with their
own networks), each section's heading and text the layer package's docstring, then the book's
modules and the command line; the page has one ``{automodule}`` block per module, which Sphinx's
autodoc fills from the module's docstring and those of its public members when the book is built.
A new module is documented by being in its folder. The experiments (one package per paper) are the
figures' own code, read beside their pages: the page names them without documenting each function.
"""

from __future__ import annotations

import importlib
import pkgutil

PACKAGE = "stitchkit"
BOOK = ("The book", "The machinery of this book, in its own package: executing notebooks into pages, the part pages "
        "and the scorecard, the Cost page, what changed after a run, and pages computed on a GPU elsewhere.")
CLI = ("The command line", "The `stitchkit` command.")


def sections() -> list[tuple[str, str, tuple[str, ...]]]:
    """(heading, what the layer is for, its modules as ``<layer>.<name>``) for each layer folder,
    top layer first, then the book (``book.<name>``) and the command line."""
    import stitchkit

    out = []
    for layer in reversed(stitchkit.LAYERS):
        package = importlib.import_module(f"{PACKAGE}.{layer}")
        heading, _, about = (package.__doc__ or layer).strip().partition("\n\n")
        out.append((heading.rstrip("."), " ".join(about.split()),
                    tuple(f"{layer}.{m.name}" for m in pkgutil.iter_modules(package.__path__))))
    from .. import book

    out.append((*BOOK, tuple(f"book.{m.name}" for m in pkgutil.iter_modules(book.__path__))))
    out.append((*CLI, ("cli",)))
    return out


def package_modules() -> list[str]:
    """Every module of the package (``<layer>.<name>``, ``book.<name>``, ``cli``), not the
    experiments package, nor ``__main__``."""
    import stitchkit

    top = {m.name for m in pkgutil.iter_modules(stitchkit.__path__)} - {"__main__", "experiments"}
    out = []
    for name in sorted(top):
        package = importlib.import_module(f"{PACKAGE}.{name}")
        if hasattr(package, "__path__"):
            out += [f"{name}.{m.name}" for m in pkgutil.iter_modules(package.__path__)]
        else:
            out.append(name)
    return sorted(out)


def experiment_packages() -> list[str]:
    from .. import experiments

    return sorted(m.name for m in pkgutil.iter_modules(experiments.__path__))


def api_markdown() -> str:
    """``book/api.md``: the package's modules by layer, each documented from its docstrings."""
    out = ["# API reference", "",
           "Every module of `stitchkit`, grouped by what it is for, documented from its docstrings. Start with "
           "{py:func}`stitchkit.comparing.compare.compare` to stitch your own networks, or with "
           "{py:class}`stitchkit.verdicts.results.Run` to see how a page records its numbers and claims.", ""]
    for heading, about, modules in sections():
        out += [f"## {heading}", "", about, ""]
        for m in modules:
            # reStructuredText, as the docstrings are written (autodoc's output, parsed as MyST, would not be)
            out += ["```{eval-rst}", f".. automodule:: {PACKAGE}.{m}", "   :members:", "```", ""]
    out += ["## The experiments", "",
            "One module (or package) per paper's figures, called by the notebooks; each page's code is read "
            "beside its page (the code cells fold open) rather than here: "
            + ", ".join(f"`{PACKAGE}.experiments.{m}`" for m in experiment_packages()) + ".", ""]
    return "\n".join(out)


__all__ = ["api_markdown", "experiment_packages", "package_modules", "sections"]
