"""``stitchkit sync``: each notebook's ``parameters`` cell written from its figure's config.

The config dataclass (its fields' names, order and help texts) and the figure registry's scales
are the one source of a notebook's parameters cell (:func:`stitchkit.registry.scales.parameters_cell`):
``scale = "smoke"  # smoke | demo | ...`` then ``name = None  # help`` per field. This rewrites
the cell's lines in the percent-format source, leaving every other line as it is; with
``check=True`` it writes nothing and returns the notebooks whose cell differs (a test runs it).
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

from ..base import paths
from ..base.fileio import atomic_write_text
from ..registry import figures
from ..registry.scales import parameters_cell

MARKER = '# %% tags=["parameters"]'


def _cell_span(lines: list[str], source: Path) -> tuple[int, int]:
    """The [start, end) lines of the parameters cell's body (after its marker, before the blank
    lines that precede the next cell)."""
    starts = [i for i, line in enumerate(lines) if line.strip() == MARKER]
    if len(starts) != 1:
        raise ValueError(f"{source}: expected one line {MARKER!r}, found {len(starts)}")
    end = next((i for i in range(starts[0] + 1, len(lines)) if lines[i].startswith("# %%")), len(lines))
    while end > starts[0] + 1 and not lines[end - 1].strip():
        end -= 1
    return starts[0] + 1, end


def sync(ids: Iterable[str] | None = None, *, check: bool = False,
         notebooks_dir: Path | None = None) -> list[str]:
    """Write the parameters cell of each notebook ``ids`` (default: every registered figure) from
    its config; returns the IDs whose cell differed (with ``check``, nothing is written)."""
    folder = Path(notebooks_dir or paths.NOTEBOOKS_DIR)
    differed = []
    for fid in (list(ids) if ids is not None else [f.id for f in figures.FIGURES]):
        cls = figures.config_class(fid)
        if cls is None:
            raise KeyError(f"unknown figure {fid!r}; valid: {', '.join(figures.BY_ID)}")
        source = folder / f"{fid}.py"
        text = source.read_text()
        lines = text.split("\n")
        start, end = _cell_span(lines, source)
        wanted = parameters_cell(cls, figures.BY_ID[fid].unused).split("\n")
        if lines[start:end] != wanted:
            differed.append(fid)
            if not check:
                atomic_write_text(source, "\n".join(lines[:start] + wanted + lines[end:]))
    return differed


__all__ = ["MARKER", "sync"]
