"""A figure of several panels laid out again for a phone: one panel per row, its text legible there.

The book shows a figure scaled to its column: 741 px wide in a 1366 px window, but about
:data:`PHONE_COLUMN_PX` on a 390 px phone, where the panels of a wide figure shrink to half and
their text to 4-5 px (issue 64: at least 9 px, with panels stacked on a phone). :func:`restack`
takes a figure a page has drawn and lays the same axes out again, one panel per row,
:data:`PHONE_WIDTH` inches wide, no text under :data:`PHONE_MIN_PT` points. A page carries both
renderings (:meth:`Run.figure <stitchkit.verdicts.results.Run.figure>` glues this one beside the
wide one) and the book's style sheet shows this one on a phone.

It works on any matplotlib figure drawn on a grid of subplots, sub-figures included: nothing is
drawn again, so the panels show what the wide figure shows. Colour bars follow their panels (one
made on a grid of subplots, outside the constrained layout, is made again beside its panel). A
label the wide layout shares across a row or a column (the y label on a row's first panel, the
x label on a column's last, tick labels hidden where panels share an axis) is given to each
panel, which now stands alone. A legend that would crowd its panel gets a row of its own under it,
and a legend of the whole figure goes below the panels, one entry a line, long labels broken
into lines; a title wider than the column wraps. A panel of fixed aspect (a heat map, a matrix)
gives back the height it would leave empty. Values written in a panel's cells that no longer fit
at the phone's text size are left out, and the figure says so (the figure's plotted data, a CSV
beside the page, holds them). A grid of pictures (every panel an image without axes, such as a
page's example images) keeps its rows and columns and is only narrowed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# The width (px) of a figure in a 390 px phone's content column (measured in Chromium: tests/test_browser.py
# checks it).
PHONE_COLUMN_PX = 342
MIN_TEXT_PX = 9.0  # the smallest text a figure may show, in px as the book shows it (issue 64)
PNG_PAD = 0.2  # inches a page's PNG adds to the figure's tight box (IPython saves it bbox_inches="tight")
# Text of PHONE_MIN_PT points in a PNG PHONE_WIDTH + PNG_PAD inches wide, shown PHONE_COLUMN_PX wide,
# is MIN_TEXT_PX tall: 8 / 72 * 342 / 4.22 = 9.0 px.
PHONE_MIN_PT = 8.0
PHONE_WIDTH = PHONE_MIN_PT / 72 * PHONE_COLUMN_PX / MIN_TEXT_PX - PNG_PAD
TITLE_IN = 0.45  # inches a (sub-)figure's title takes
PICTURE_LABELS_IN = 1.2  # inches beside a grid of pictures for its rows' labels
LEFT_OUT = "Some cells' values are left out at this width: the figure's plotted data (CSV) holds them."


def is_colour_bar(ax: Any) -> bool:
    """Whether ``ax`` is a colour bar (it goes where its panel goes, not on a row of its own)."""
    return getattr(ax, "_colorbar", None) is not None


def is_picture(ax: Any) -> bool:
    """Whether ``ax`` shows a picture (an example image, no ticks to read it by), not a plot or a
    heat map."""
    images = ax.get_images()
    no_ticks = not ax.axison or (len(ax.get_xticks()) == 0 and len(ax.get_yticks()) == 0)
    return bool(images) and no_ticks and all(getattr(i.get_array(), "ndim", 0) == 3 for i in images)


def is_blank(ax: Any) -> bool:
    """Whether ``ax`` is an empty cell of a grid (its axes off, nothing drawn)."""
    return not ax.axison and not (ax.get_images() or ax.lines or ax.collections or ax.patches or ax.texts)


def _hosts_colour_bar(ax: Any) -> bool:
    """Whether a colour bar was made beside ``ax`` (it follows ``ax`` wherever ``ax`` goes)."""
    return any(ax in getattr(other, "_colorbar_info", {}).get("parents", ())
               for other in ax.figure.axes if is_colour_bar(other))


def panels(container: Any) -> list:
    """The panels of a figure or sub-figure, in reading order: its visible axes on a grid of
    subplots (its sub-figures' not counted), colour bars left out."""
    found = [ax for ax in container._localaxes
             if ax.get_visible() and not is_colour_bar(ax) and ax.get_subplotspec() is not None]
    return sorted(found, key=lambda ax: (ax.get_subplotspec().rowspan.start, ax.get_subplotspec().colspan.start))


def count_panels(fig: Any) -> int:
    """How many panels ``fig`` shows, its sub-figures' included."""
    return len(panels(fig)) + sum(count_panels(sub) for sub in fig.subfigs)


@dataclass
class _Column:
    """One (sub-)figure laid out in a column: its rows (a panel, or the legend of the panel above
    it), their grid (None: a grid of pictures, kept as it is), each row's height and the inches
    its title and legends take."""

    container: Any
    rows: list
    grid: Any
    heights: list[float]
    extra: float

    @property
    def height(self) -> float:
        return sum(self.heights) + self.extra


def restack(fig: Any) -> bool:
    """Lay ``fig`` out again for a phone, in place: each panel on its own row, the figure
    :data:`PHONE_WIDTH` inches wide, text under :data:`PHONE_MIN_PT` points raised to it. False,
    the figure untouched, when it has fewer than two panels (a single panel is shown as it is)."""
    if count_panels(fig) < 2:
        return False
    fig.canvas.draw()  # the wide layout, measured: legends' widths, the cells' sizes
    bars = _detach_gridspec_colour_bars(fig)
    _raise_small_text(fig)
    columns = [_one_column(c) for c in (fig.subfigs or [fig])]
    fig.set_layout_engine("constrained")
    for mappable, parents, label, location in bars:
        fig.colorbar(mappable, ax=parents, label=label, location=location)
    _resize(fig, columns)
    fig.canvas.draw()
    for column in columns:  # a panel of fixed aspect gives back the height it leaves empty
        _trim(column)
    _resize(fig, columns)
    _leave_out_crowded_values(fig)
    return True


def _detach_gridspec_colour_bars(fig: Any) -> list[tuple]:
    """Remove each colour bar made on a grid of subplots (a figure laid out without the
    constrained layout: its panel's cell split in two, which that layout cannot lay out), its
    panel given back its cell; (its mappable, its panels, its label, its side) to make it again."""
    found = []
    for cax in list(fig.axes):
        if is_colour_bar(cax) and cax.get_subplotspec() is not None:
            bar = cax._colorbar
            info = getattr(cax, "_colorbar_info", {})
            label = (cax.get_ylabel() if bar.orientation == "vertical" else cax.get_xlabel())
            bar.remove()
            found.append((bar.mappable, list(info.get("parents") or [bar.mappable.axes]), label,
                          info.get("location")))
    return found


def _slot(ax: Any, container: Any) -> tuple[float, float]:
    """(width, height) in inches of the grid cells ``ax`` spans in ``container``."""
    ss = ax.get_subplotspec()
    grid = ss.get_gridspec()
    dpi = container.figure.dpi
    return (container.bbox.width / dpi * len(ss.colspan) / grid.ncols,
            container.bbox.height / dpi * len(ss.rowspan) / grid.nrows)


def _one_column(container: Any) -> _Column:
    """Put the panels of one figure or sub-figure in a column, :data:`PHONE_WIDTH` wide."""
    from matplotlib.gridspec import GridSpec

    shown = panels(container)
    title = TITLE_IN if container._suptitle is not None else 0.0
    if not shown:
        return _Column(container, [], None, [], title)
    if any(is_picture(ax) for ax in shown) and all(is_picture(ax) or is_blank(ax) for ax in shown):
        grid = shown[0].get_subplotspec().get_gridspec()  # a grid of pictures keeps its rows and columns
        tall, wide = next(ax.get_images()[0].get_array().shape[:2] for ax in shown if is_picture(ax))
        side = (PHONE_WIDTH - PICTURE_LABELS_IN) / grid.ncols  # a picture's width; its titles and gaps above
        above = 0.3 if any(ax.get_title() for ax in shown) else 0.1
        return _Column(container, shown, None, [side * tall / wide + above] * grid.nrows, title)
    _share_labels(shown)
    rows, heights, moved = [], [], []
    for ax in shown:
        w, h = _slot(ax, container)
        if is_blank(ax) and not _hosts_colour_bar(ax):
            ax.set_visible(False)  # a spare cell of the wide grid
            continue
        rows.append(ax)
        # as tall as in the wide figure, give or take a fifth, and no taller than wide; a blank cell
        # that holds a colour bar, half that
        heights.append(0.5 * h if is_blank(ax) else min(min(1.2, max(0.8, PHONE_WIDTH / w)) * h, 1.1 * PHONE_WIDTH))
        legend = ax.get_legend()
        if legend is not None and legend.get_visible() and _crowds(legend, heights[-1]):
            moved.append((len(rows), legend))  # a row of its own, under its panel
            rows.append(None)
            heights.append(_legend_height(legend))
    grid = GridSpec(len(rows), 1, figure=container, height_ratios=heights)
    for i, ax in enumerate(rows):
        if ax is not None:
            ax.set_subplotspec(grid[i])
    for i, legend in moved:
        rows[i] = _legend_row(legend, container.add_subplot(grid[i]))
    legends = sum(_legend_below(legend, container) for legend in list(container.legends))
    return _Column(container, rows, grid, heights, title + legends)


def _share_labels(shown: list) -> None:
    """Give each panel what its row or column shared in the wide layout, now that it stands
    alone: the y label one panel of its row carries, the x label one panel of its column carries
    (at that label's size) where the two read the same scale, and tick labels hidden because
    panels share an axis."""
    lines: dict[tuple, list] = {}
    for ax in shown:
        ss = ax.get_subplotspec()
        lines.setdefault(("y", id(ss.get_gridspec()), ss.rowspan.start), []).append(ax)
        lines.setdefault(("x", id(ss.get_gridspec()), ss.colspan.start), []).append(ax)
    for (name, _, _), line in lines.items():
        source = next((ax for ax in line if _axis(ax, name).label.get_text()), None)
        for ax in line:
            label = _axis(ax, name).label
            if source is not None and not label.get_text() and _same_scale(ax, source, name):
                label.set_text(_axis(source, name).label.get_text())
                label.set_fontsize(_axis(source, name).label.get_fontsize())
    for ax in shown:
        if len(ax.get_shared_y_axes().get_siblings(ax)) > 1 and not ax.yaxis.get_tick_params().get("labelleft", True):
            ax.tick_params(axis="y", labelleft=True)
        if len(ax.get_shared_x_axes().get_siblings(ax)) > 1 and not ax.xaxis.get_tick_params().get("labelbottom", True):
            ax.tick_params(axis="x", labelbottom=True)


def _axis(ax: Any, name: str) -> Any:
    return ax.xaxis if name == "x" else ax.yaxis


def _same_scale(ax: Any, other: Any, name: str) -> bool:
    """Whether two panels read the same along their x or y axis: the axis is shared, or its tick
    labels are the same."""
    shared = ax.get_shared_x_axes() if name == "x" else ax.get_shared_y_axes()
    ticks = [[t.get_text() for t in _axis(a, name).get_ticklabels()] for a in (ax, other)]
    return shared.joined(ax, other) or (ticks[0] == ticks[1] and any(ticks[0]))


def _crowds(legend: Any, height: float) -> bool:
    """Whether an axes' legend, at the phone's text size, would cover more than 60% of its
    panel's width there (the column less the y axis' room) or 40% of its ``height`` inches."""
    box = legend.get_window_extent(legend.figure.canvas.get_renderer())
    return box.width / legend.figure.dpi > 0.6 * (PHONE_WIDTH - 1.0) or box.height / legend.figure.dpi > 0.4 * height


def _legend_size(legend: Any) -> float:
    texts = legend.get_texts()
    return max(texts[0].get_fontsize() if texts else PHONE_MIN_PT, PHONE_MIN_PT)


def _legend_labels(legend: Any) -> list[str]:
    """A legend's labels, each broken into lines that fit beside its handle in a panel's width at
    the phone's text size (measured: a label is wrapped shorter until it fits)."""
    import textwrap

    from matplotlib.font_manager import FontProperties

    size = _legend_size(legend)
    room = (PHONE_WIDTH - 0.8) * 72 - 3.2 * size  # points: less the y axis' room, the handle and the gaps
    font = FontProperties(size=size)
    renderer = legend.figure.canvas.get_renderer()

    def fits(text: str) -> bool:
        return all(renderer.get_text_width_height_descent(line, font, ismath=False)[0] * 72 / legend.figure.dpi
                   <= room for line in text.split("\n"))

    out = []
    for t in legend.get_texts():
        text, chars = t.get_text(), len(t.get_text())
        while not fits(text) and chars > 12:
            chars -= 4
            text = textwrap.fill(t.get_text(), chars)
        out.append(text)
    return out


def _legend_height(legend: Any) -> float:
    """The inches a legend takes, one entry a line, its labels broken as :func:`_legend_labels` does."""
    lines = sum(label.count("\n") + 1 for label in _legend_labels(legend))
    return 0.1 + lines * _legend_size(legend) / 72 * 1.6


def _legend_row(legend: Any, ax: Any) -> Any:
    """``legend`` moved from its panel onto ``ax``, an empty row under it, one entry a line."""
    handles, labels, size = list(legend.legend_handles), _legend_labels(legend), _legend_size(legend)
    legend.remove()
    ax.axis("off")
    ax.legend(handles, labels, loc="upper left", ncols=1, frameon=False, fontsize=size, borderaxespad=0)
    return ax


def _legend_below(legend: Any, container: Any) -> float:
    """A legend of the whole (sub-)figure, put below its panels, one entry a line; the inches it
    takes."""
    handles, labels, size = list(legend.legend_handles), _legend_labels(legend), _legend_size(legend)
    height = _legend_height(legend)
    legend.remove()
    container.legend(handles, labels, loc="outside lower center", ncols=1, frameon=False, fontsize=size)
    return height


def _raise_small_text(fig: Any) -> None:
    """No text under :data:`PHONE_MIN_PT` points, tick labels drawn later included; titles wrap
    at the figure's width."""
    from matplotlib.text import Text

    for text in fig.findobj(Text):
        if text.get_fontsize() < PHONE_MIN_PT:
            text.set_fontsize(PHONE_MIN_PT)
    for ax in fig.axes:
        for name, axis in (("x", ax.xaxis), ("y", ax.yaxis)):
            labels = axis.get_ticklabels()
            if labels and labels[0].get_fontsize() < PHONE_MIN_PT:
                ax.tick_params(axis=name, which="both", labelsize=PHONE_MIN_PT)
    titles = [t for f in (fig, *fig.subfigs) for t in (f._suptitle, f._supxlabel, f._supylabel)]
    for text in titles + [ax.title for ax in fig.axes]:
        if text is not None and text.get_text().strip():
            text.set_wrap(True)


def _resize(fig: Any, columns: list[_Column]) -> None:
    """Each column's rows their heights, the figure as tall as its columns together."""
    for column in columns:
        if column.grid is not None:
            column.grid.set_height_ratios(column.heights)
    if fig.subfigs:
        grid = fig.subfigs[0]._subplotspec.get_gridspec()
        at = {sub._subplotspec.rowspan.start: c.height for sub, c in zip(fig.subfigs, columns)}
        grid.set_height_ratios([at.get(r, min(at.values())) for r in range(grid.nrows)])
    fig.set_size_inches(PHONE_WIDTH, sum(c.height for c in columns))


def _trim(column: _Column) -> None:
    """After a draw: each panel of fixed aspect (a heat map) loses the height its box leaves empty."""
    if column.grid is None:
        return
    inches = column.container.bbox.height / column.container.figure.dpi  # a panel's position: a share of it
    for i, ax in enumerate(column.rows):
        if not ax.axison or ax.get_aspect() == "auto":
            continue
        empty = (ax.get_position(original=True).height - ax.get_position().height) * inches
        column.heights[i] = max(column.heights[i] - 0.95 * empty, 0.5 * column.heights[i])


def _leave_out_crowded_values(fig: Any) -> None:
    """The values written in a panel's cells, where some overlap each other at the phone's text
    size, are left out, and the figure says so under its panels."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    crowded = False
    for ax in fig.axes:
        texts = [t for t in ax.texts if t.get_visible() and t.get_text().strip()]
        boxes = [t.get_window_extent(renderer) for t in texts]
        if any(a.overlaps(b) for i, a in enumerate(boxes) for b in boxes[i + 1:]):
            for t in texts:  # all of the panel's values, not the few that happen to fit
                if t.get_transform() == ax.transData:
                    t.set_visible(False)
            crowded = True
    if crowded:
        below = fig._supxlabel
        note = LEFT_OUT if below is None else f"{below.get_text()}\n{LEFT_OUT}"
        fig.supxlabel(note, fontsize=max(PHONE_MIN_PT, below.get_fontsize() if below else 0),
                      color=below.get_color() if below else "0.3", wrap=True)
        fig.set_size_inches(PHONE_WIDTH, fig.get_size_inches()[1] + 0.35)


__all__ = ["LEFT_OUT", "MIN_TEXT_PX", "PHONE_COLUMN_PX", "PHONE_MIN_PT", "PHONE_WIDTH", "PNG_PAD", "count_panels",
           "is_blank", "is_colour_bar", "is_picture", "panels", "restack"]
