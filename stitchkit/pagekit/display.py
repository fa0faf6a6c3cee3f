"""What a notebook shows in one call when it is more than one table: a :class:`Section`, markdown
paragraphs (captions, provenance, one-line findings) and tables in order, displayed when it is a
cell's last expression. The experiment modules build them, so a notebook holds no display loop."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

import pandas as pd


def plain(table: pd.DataFrame, precision: int | None = 2):
    """``table`` shown without pandas' row numbers, its floats at ``precision`` decimals (the
    values themselves are not rounded; None: pandas' default)."""
    style = table.style.hide(axis="index")
    return style if precision is None else style.format(precision=precision)


def accuracy_table(accuracy: Mapping[str, float]) -> pd.DataFrame:
    """Each network's test accuracy (%, to two decimals) for display: ``accuracy`` maps a
    network's name to its test accuracy (a fraction), as a page's results hold it."""
    return pd.DataFrame({"test accuracy (%)": {k: round(100 * v, 2) for k, v in accuracy.items()}})


@dataclass(frozen=True)
class Section:
    """Markdown paragraphs (``str``) and tables (DataFrames or Stylers), shown in order."""

    parts: tuple[Any, ...]

    def __add__(self, other: "Section") -> "Section":
        return Section(self.parts + other.parts)

    def _ipython_display_(self) -> None:
        from IPython.display import Markdown, display  # IPython: only inside a kernel

        for part in self.parts:
            display(Markdown(part) if isinstance(part, str) else part)
