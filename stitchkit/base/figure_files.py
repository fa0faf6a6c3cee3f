"""A page's figures as files: each figure as SVG, and what it draws as a CSV.

:func:`plotted_data` reads the numbers back from the figure's artists (lines, error bars, bars,
scatter points, bands, heat maps), so the CSV holds exactly what is drawn, whatever function
drew it. :func:`write_figure_files` writes both, atomically; a page's :meth:`Run.figure
<stitchkit.verdicts.results.Run.figure>` calls it when its run has a folder for figures
(:data:`FIGURES_ENV`, set by :func:`stitchkit.book.execution.execute`), and the page links them under
each figure's caption (:func:`link_figure_files`).

The SVG keeps its text as text (``svg.fonttype: none``: small, searchable), and carries no date
and fixed element ids, so re-running a page that draws the same figure writes the same bytes.
"""

from __future__ import annotations

import io
import os
import re
from pathlib import Path
from typing import Any, Iterable, Mapping

FIGURES_ENV = "STITCHKIT_FIGURES"  # the folder a page's kernel writes its figure files into

COLUMNS = ("panel", "panel_title", "xlabel", "ylabel", "kind", "series", "x", "y", "low", "high", "row", "col",
           "value")

# Matplotlib labels an artist it made itself, or one the caller left unlabelled, "_child3", "_nolegend_" ...
_UNLABELLED = re.compile(r"^_")


def _label(artist: Any) -> str:
    label = artist.get_label() if hasattr(artist, "get_label") else ""
    return "" if label is None or _UNLABELLED.match(str(label)) else str(label)


def _ticks(labels: Iterable[Any], n: int) -> list[str] | None:
    """The tick labels of a heat map's axis when there is one per row (or column), else None."""
    texts = [t.get_text() for t in labels]
    return texts if len(texts) == n and any(texts) else None


def _floats(values: Any) -> list[Any]:
    """``values`` as Python floats, a float32 value written as its shortest float32 form (36.5,
    not 36.500000953674316: the digits past float32's precision were never data); categories (a
    line drawn over names, such as cuts) as their names."""
    import numpy as np

    arr = np.asarray(values)
    if arr.dtype.kind not in "biuf":
        try:  # numbers held as objects (an error bar's own line keeps them so)
            arr = np.ma.asarray(values).astype(float)
        except (TypeError, ValueError):
            return [str(v) for v in arr.ravel()]
    arr = np.ma.filled(np.ma.asarray(arr), np.nan)
    if arr.dtype == np.float32:
        return [float(str(v)) for v in arr.ravel()]
    return [float(v) for v in np.asarray(arr, float).ravel()]


def _names(axis: Any) -> dict[float, str]:
    """Position -> name on a categorical axis (matplotlib's string units), else {}: bars and points
    drawn at categories are written with their names."""
    from matplotlib.category import UnitData

    units = getattr(axis, "units", None)
    return {float(v): str(k) for k, v in units._mapping.items()} if isinstance(units, UnitData) else {}


def plotted_data(fig: Any):
    """Every number ``fig`` draws, one row per point (or heat-map cell), as a tidy table.

    Columns (:data:`COLUMNS`): ``panel`` (the axes, numbered from 1 in drawing order) with its
    title and axis labels; ``kind`` (line, errorbar, bar, scatter, band, heatmap); ``series``
    (the artist's legend label, empty when it has none); ``x``, ``y``; for an error bar ``low``
    and ``high``; for a band between curves, its outline's points; a reference line across the
    axes (hline, vline) its value alone, a band across them (hband, vband) its ``low`` and
    ``high``; a stacked bar its base and top as ``low``, ``high``; for a heat map ``row`` and ``col`` (the tick
    label where each row or column has one, else its index) and ``value``. Categorical x values
    (tick positions) stay numbers; a panel's tick labels are its x column's names.
    """
    import numpy as np
    import pandas as pd
    from matplotlib.collections import LineCollection, PathCollection, PolyCollection, QuadMesh
    from matplotlib.container import BarContainer, ErrorbarContainer

    rows: list[dict[str, Any]] = []
    for i, ax in enumerate(fig.axes, start=1):
        where = {"panel": i, "panel_title": ax.get_title(), "xlabel": ax.get_xlabel(), "ylabel": ax.get_ylabel()}

        x_names, y_names = _names(ax.xaxis), _names(ax.yaxis)

        def add(kind: str, series: str, **values: Any) -> None:
            for k, names in (("x", x_names), ("y", y_names)):
                if names and isinstance(values.get(k), float) and values[k] in names:
                    values[k] = names[values[k]]
            rows.append({**where, "kind": kind, "series": series, **values})

        skip: set[int] = set()  # artists an error bar or bar container owns: read through their container
        for c in ax.containers:
            if isinstance(c, ErrorbarContainer):
                line, caps, bars = c.lines
                skip.update(id(a) for a in (line, *caps, *bars) if a is not None)
                xs, ys = ((_floats(line.get_xdata()), _floats(line.get_ydata())) if line is not None else (None, None))
                segs = [np.asarray(s, float) for b in bars for s in b.get_segments()]
                vertical = [s for s in segs if len(s) == 2 and s[0, 0] == s[1, 0]]
                for j, s in enumerate(vertical):
                    x = float(s[0, 0])
                    y = ys[j] if ys is not None and j < len(ys) else float("nan")
                    add("errorbar", _label(c), x=x, y=y, low=float(s[:, 1].min()), high=float(s[:, 1].max()))
                if not vertical and xs is not None:  # horizontal error bars only: the points themselves
                    for x, y in zip(xs, ys):
                        add("errorbar", _label(c), x=x, y=y)
            elif isinstance(c, BarContainer):
                # the bar's value is what it was drawn from (datavalues); a stacked bar's base and top as low, high
                horizontal = getattr(c, "orientation", "vertical") == "horizontal"
                values = getattr(c, "datavalues", None)
                for j, p in enumerate(c.patches):
                    skip.add(id(p))
                    base, size = (p.get_x(), p.get_width()) if horizontal else (p.get_y(), p.get_height())
                    value = float(values[j]) if values is not None and j < len(values) else float(size)
                    at = p.get_y() + p.get_height() / 2 if horizontal else p.get_x() + p.get_width() / 2
                    stacked = {"low": float(base), "high": float(base + size)} if base else {}
                    x, y = (value, float(at)) if horizontal else (float(at), value)
                    add("bar", _label(c), x=x, y=y, **stacked)
        across = ax.get_yaxis_transform(which="grid")  # x in axes fractions: axhline, axhspan
        along = ax.get_xaxis_transform(which="grid")  # y in axes fractions: axvline, axvspan
        for p in ax.patches:
            if id(p) in skip or not hasattr(p, "get_height"):
                continue
            if p.get_data_transform() is across:  # a horizontal band (a paper's range): its y extent
                add("hband", _label(p), low=float(p.get_y()), high=float(p.get_y() + p.get_height()))
            elif p.get_data_transform() is along:
                add("vband", _label(p), low=float(p.get_x()), high=float(p.get_x() + p.get_width()))
        for line in ax.lines:
            if id(line) in skip:
                continue
            if line.get_transform() is across:  # a reference line: its value, not the axes' ends
                add("hline", _label(line), y=_floats(line.get_ydata()[:1])[0])
                continue
            if line.get_transform() is along:
                add("vline", _label(line), x=_floats(line.get_xdata()[:1])[0])
                continue
            xs, ys = np.asarray(line.get_xdata()), np.asarray(line.get_ydata())
            shape = np.broadcast_shapes(xs.shape, ys.shape)
            for x, y in zip(_floats(np.broadcast_to(xs, shape)), _floats(np.broadcast_to(ys, shape))):
                add("line", _label(line), x=x, y=y)
        for coll in ax.collections:
            if id(coll) in skip:
                continue
            if isinstance(coll, QuadMesh):
                coords = np.asarray(coll.get_coordinates())
                values = np.array(_floats(coll.get_array())).reshape(coords.shape[0] - 1, coords.shape[1] - 1)
                _heatmap(add, ax, values, _label(coll))
            elif isinstance(coll, PathCollection):
                offsets = np.asarray(coll.get_offsets())
                for x, y in zip(_floats(offsets[:, 0]), _floats(offsets[:, 1])):
                    add("scatter", _label(coll), x=x, y=y)
            elif isinstance(coll, PolyCollection):
                for path in coll.get_paths():
                    for x, y in np.asarray(path.vertices, float):
                        add("band", _label(coll), x=float(x), y=float(y))
            elif isinstance(coll, LineCollection):
                for s in coll.get_segments():
                    for x, y in np.asarray(s, float):
                        add("line", _label(coll), x=float(x), y=float(y))
        for image in ax.images:
            array = image.get_array()
            if array is not None and array.ndim == 2:  # a heat map; an RGB picture is no data to tabulate
                values = np.array(_floats(array)).reshape(array.shape)
                _heatmap(add, ax, values, _label(image))
    return pd.DataFrame(rows, columns=list(COLUMNS))


def _heatmap(add, ax, values, series: str) -> None:
    """One row per cell of a heat map, named by the axes' tick labels when there is one per row
    (an image's rows run top to bottom; a mesh's as drawn)."""
    n_rows, n_cols = values.shape
    row_names = _ticks(ax.get_yticklabels(), n_rows)
    col_names = _ticks(ax.get_xticklabels(), n_cols)
    for r in range(n_rows):
        for c in range(n_cols):
            add("heatmap", series, row=row_names[r] if row_names else r, col=col_names[c] if col_names else c,
                value=float(values[r, c]))


def svg_bytes(fig: Any) -> bytes:
    """``fig`` as SVG: text kept as text, no date, element ids fixed (the same figure, the same bytes)."""
    import matplotlib

    buf = io.BytesIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "stitchkit"}):
        fig.savefig(buf, format="svg", metadata={"Date": None}, bbox_inches="tight")
    return buf.getvalue()


def write_figure_files(fig: Any, folder: str | os.PathLike, key: str) -> list[str]:
    """Write ``<key>.svg`` and, when it draws any numbers (not only pictures), ``<key>.csv``
    (:func:`plotted_data`) into ``folder``, each atomically; returns their names."""
    from .fileio import atomic_write_bytes

    if not re.fullmatch(r"[A-Za-z0-9_.-]+", key):
        raise ValueError(f"figure key {key!r}: use letters, digits, '_', '-' or '.' (it names the figure's files)")
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(folder / f"{key}.svg", svg_bytes(fig))
    try:
        table = plotted_data(fig)
    except Exception as exc:  # a kind of artist this reader does not know: the page keeps its figure, says why
        import sys

        print(f"[stitchkit] figure {key!r}: its plotted data could not be read back ({type(exc).__name__}: {exc}); "
              "the SVG alone is written", file=sys.stderr, flush=True)
        return [f"{key}.svg"]
    if table.empty:
        return [f"{key}.svg"]
    atomic_write_bytes(folder / f"{key}.csv", table.to_csv(index=False).encode())
    return [f"{key}.svg", f"{key}.csv"]


def figures_folder(page: str | os.PathLike) -> Path:
    """Where the figure files of the page ``<ID>.ipynb`` lie: ``<ID>.figures`` beside it."""
    page = Path(page)
    return page.with_name(f"{page.stem}.figures")


def running_folder(page: str | os.PathLike) -> Path:
    """Where a page's kernel writes its figure files while it runs (moved to
    :func:`figures_folder` when the run succeeds)."""
    page = Path(page)
    return page.with_name(f".{page.stem}.figures.running")


def replace_folder(new: Path, final: Path) -> None:
    """Put the folder ``new`` at ``final``, replacing what is there (a page's figure files are
    replaced as a whole, so a figure the page no longer draws does not linger); without ``new``,
    remove ``final``."""
    import shutil

    old = final.with_name(f".{final.name}.old-{os.getpid()}")
    if final.exists():
        os.replace(final, old)
    if new.exists():
        os.replace(new, final)
    shutil.rmtree(old, ignore_errors=True)


_GLUE_FIGURE = re.compile(r"^```\{glue:figure\}\s+(\S+)\s*$")


def link_figure_files(nb: Any, page_stem: str, figures: Mapping[str, list[str]]) -> int:
    """Under each ``{glue:figure}`` block of the executed notebook ``nb`` whose key has files
    (``figures``: key -> file names, as a run records them), a line of download links to them;
    returns how many figures were linked. Idempotent."""
    names = {"svg": "figure (SVG)", "csv": "plotted data (CSV)"}
    linked = 0
    for cell in nb.cells:
        if cell.cell_type != "markdown" or "{glue:figure}" not in cell.source:
            continue
        lines = cell.source.split("\n")
        out: list[str] = []
        i = 0
        while i < len(lines):
            out.append(lines[i])
            m = _GLUE_FIGURE.match(lines[i].strip())
            if not m or m.group(1) not in figures:
                i += 1
                continue
            i += 1
            while i < len(lines) and lines[i].strip() != "```":
                out.append(lines[i])
                i += 1
            if i < len(lines):
                out.append(lines[i])
                i += 1
            links = " · ".join(f"{{download}}`{names.get(Path(f).suffix[1:], f)} <{page_stem}.figures/{f}>`"
                               for f in figures[m.group(1)])
            line = f"Download: {links}"
            if not (i < len(lines) and lines[i:i + 2] == ["", line]):
                out += ["", line]
            linked += 1
        cell.source = "\n".join(out)
    return linked


__all__ = ["COLUMNS", "FIGURES_ENV", "figures_folder", "link_figure_files", "plotted_data", "replace_folder",
           "running_folder", "svg_bytes", "write_figure_files"]
