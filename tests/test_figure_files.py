"""A page's figures as files: SVG, and the plotted data read back from the artists as CSV."""

from __future__ import annotations

import io

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import nbformat  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from stitchkit.base import figure_files as ff  # noqa: E402
from stitchkit.verdicts import results  # noqa: E402
from stitchkit.verdicts.results import Run  # noqa: E402


def _figure():
    fig, (a, b, c) = plt.subplots(1, 3)
    a.plot([0, 1, 2], [0.5, 0.25, 0.125], label="penalty")
    a.axhline(0.1, label="_nolegend_")
    a.errorbar([0, 1], [1.0, 2.0], yerr=[[0.1, 0.2], [0.3, 0.4]], fmt="o", label="interval")
    a.set_title("left")
    a.set_xlabel("cut")
    a.set_ylabel("points")
    b.bar([0, 1, 2], [3.0, 4.0, 5.0], label="ours")
    b.scatter([0.5, 1.5], [7.0, 8.0], label="seeds")
    b.fill_between([0, 1], [0, 0], [1, 1], label="band")
    im = c.imshow(np.array([[1.0, 2.0], [3.0, 4.0]]))
    c.set_xticks([0, 1], ["r0", "r1"])
    c.set_yticks([0, 1], ["s0", "s1"])
    fig.colorbar(im, ax=c)
    return fig


def test_plotted_data_reads_back_every_number_drawn():
    fig = _figure()
    t = ff.plotted_data(fig)
    plt.close(fig)
    assert list(t.columns) == list(ff.COLUMNS)
    line = t[(t.kind == "line") & (t.series == "penalty")]
    assert line[["x", "y"]].to_numpy().tolist() == [[0, 0.5], [1, 0.25], [2, 0.125]]
    assert set(line.panel_title) == {"left"} and set(line.xlabel) == {"cut"} and set(line.ylabel) == {"points"}
    ref = t[t.kind == "hline"]  # the unlabelled reference line: its value, not the axes' ends
    assert ref[["series", "y"]].to_numpy().tolist() == [["", 0.1]] and ref.x.isna().all()
    err = t[t.kind == "errorbar"].sort_values("x")
    assert err[["x", "y", "low", "high"]].to_numpy() == pytest.approx(np.array([[0, 1, 0.9, 1.3], [1, 2, 1.8, 2.4]]))
    assert t[(t.kind == "line") & (t.series == "interval")].empty  # the error bar's own artists: read once
    bars = t[t.kind == "bar"]
    assert bars[["x", "y"]].to_numpy().tolist() == [[0, 3], [1, 4], [2, 5]] and set(bars.series) == {"ours"}
    assert t[t.kind == "scatter"][["x", "y"]].to_numpy().tolist() == [[0.5, 7], [1.5, 8]]
    assert set(t[t.kind == "band"].y) == {0.0, 1.0}
    heat = t[(t.kind == "heatmap") & (t.panel == 3)]
    assert heat[["row", "col", "value"]].to_numpy().tolist() == [["s0", "r0", 1], ["s0", "r1", 2],
                                                                 ["s1", "r0", 3], ["s1", "r1", 4]]


def test_seaborn_style_mesh_is_read_as_a_heatmap():
    fig, ax = plt.subplots()
    ax.pcolormesh(np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]))
    t = ff.plotted_data(fig)
    plt.close(fig)
    assert t.value.tolist() == [1, 2, 3, 4, 5, 6] and t.row.tolist() == [0, 0, 0, 1, 1, 1]


def test_files_are_written_atomically_and_the_same_figure_gives_the_same_bytes(tmp_path):
    names = ff.write_figure_files(_figure(), tmp_path, "fig")
    first = {n: (tmp_path / n).read_bytes() for n in names}
    ff.write_figure_files(_figure(), tmp_path, "fig")
    plt.close("all")
    assert names == ["fig.svg", "fig.csv"]
    assert {n: (tmp_path / n).read_bytes() for n in names} == first
    assert b"<svg" in first["fig.svg"] and b"Date" not in first["fig.svg"]
    assert len(pd.read_csv(io.BytesIO(first["fig.csv"]))) > 10
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fig.csv", "fig.svg"]  # no temporary files left
    with pytest.raises(ValueError, match="figure key 'a b'"):
        ff.write_figure_files(_figure(), tmp_path, "a b")
    plt.close("all")


def test_run_writes_figure_files_only_where_a_run_has_a_folder_for_them(tmp_path, monkeypatch):
    monkeypatch.delenv(ff.FIGURES_ENV, raising=False)
    run = Run("X-4", "demo", {})  # (at smoke, Run lowers the bootstrap count for the whole process)
    run.figure("pairs", _figure())
    assert run.figures == {} and "figures" not in run.to_dict()
    monkeypatch.setenv(ff.FIGURES_ENV, str(tmp_path / "figs"))
    fig = _figure()
    run.figure("pairs", fig)
    assert run.to_dict()["figures"] == {"pairs": ["pairs.svg", "pairs.csv"]}
    assert (tmp_path / "figs" / "pairs.svg").exists() and (tmp_path / "figs" / "pairs.csv").exists()
    # closed, as before (this figure: another test in the same process may have left one open)
    assert not plt.fignum_exists(fig.number)


def test_a_figure_of_several_panels_is_glued_wide_and_stacked_one_of_one_panel_wide_only(tmp_path, monkeypatch):
    """Issue 64, item 2: in a page's kernel a figure of several panels is glued twice, as drawn
    under its key and one panel per row under the key and STACKED_SUFFIX (the book shows that
    one on a phone); its files are the wide figure's, and it is closed."""
    glued = []
    monkeypatch.setattr(results, "_in_kernel", lambda: True)
    monkeypatch.setattr(results, "_glue", lambda key, fig: glued.append((key, tuple(fig.get_size_inches()))))
    monkeypatch.setenv(ff.FIGURES_ENV, str(tmp_path / "figs"))
    run = Run("X-4", "demo", {})
    fig = _figure()
    wide = tuple(fig.get_size_inches())
    svg = ff.svg_bytes(fig)
    run.figure("pairs", fig)
    assert [k for k, _ in glued] == ["pairs", "pairs" + results.STACKED_SUFFIX]
    assert glued[0][1] == wide and glued[1][1][0] < wide[0] and glued[1][1][1] > wide[1]
    assert (tmp_path / "figs" / "pairs.svg").read_bytes() == svg  # the files: the wide figure's
    assert not plt.fignum_exists(fig.number)
    glued.clear()
    single, ax = plt.subplots()
    ax.plot([0, 1], [1, 0])
    run.figure("one", single)
    assert [k for k, _ in glued] == ["one"]


def test_links_go_under_each_figure_block_once():
    md = ("Text.\n\n```{glue:figure} pairs\n:name: fig-x\n:alt: x\n\nCaption.\n```\n\nAfter.\n\n"
          "```{glue:figure} other\n:name: fig-y\nCaption.\n```")
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(md)])
    assert ff.link_figure_files(nb, "X-4", {"pairs": ["pairs.svg", "pairs.csv"]}) == 1
    once = nb.cells[0].source
    assert ("Caption.\n```\n\nDownload: {download}`figure (SVG) <X-4.figures/pairs.svg>` · "
            "{download}`plotted data (CSV) <X-4.figures/pairs.csv>`\n\nAfter.") in once
    assert once.count("Download:") == 1  # the figure without files gets no line
    ff.link_figure_files(nb, "X-4", {"pairs": ["pairs.svg", "pairs.csv"]})
    assert nb.cells[0].source == once


def test_replace_folder_replaces_as_a_whole(tmp_path):
    final, new = tmp_path / "P.figures", tmp_path / ".P.figures.running"
    final.mkdir()
    (final / "gone.svg").write_text("old")
    new.mkdir()
    (new / "kept.svg").write_text("new")
    ff.replace_folder(new, final)
    assert [p.name for p in final.iterdir()] == ["kept.svg"] and not new.exists()
    ff.replace_folder(new, final)  # a run that drew nothing: no files left behind
    assert not final.exists() and list(tmp_path.iterdir()) == []


def test_float32_data_is_written_as_drawn_and_pictures_get_no_csv(tmp_path):
    fig, (a, b) = plt.subplots(1, 2)
    a.plot(np.arange(2, dtype=np.float32), np.array([36.5, 0.1], dtype=np.float32))
    b.imshow(np.zeros((4, 4, 3)))  # a picture, not a heat map
    assert ff.plotted_data(fig).y.tolist() == [36.5, 0.1]
    a.remove()
    assert ff.write_figure_files(fig, tmp_path, "pictures") == ["pictures.svg"]
    plt.close(fig)


def test_reference_bands_and_stacked_bars_are_read_as_drawn():
    fig, ax = plt.subplots()
    ax.axhspan(1.0, 2.0, label="paper")
    ax.axvline(3.0)
    ax.bar([0, 1], [3.0, 4.0], bottom=[1.0, 0.0], label="stacked")
    ax.barh([5], [-2.0], label="left")
    t = ff.plotted_data(fig)
    plt.close(fig)
    assert t[t.kind == "hband"][["series", "low", "high"]].to_numpy().tolist() == [["paper", 1.0, 2.0]]
    assert t[t.kind == "vline"].x.tolist() == [3.0]
    bars = t[t.series == "stacked"]
    assert bars.y.tolist() == [3.0, 4.0] and bars.low.tolist()[0] == 1.0 and bars.high.tolist()[0] == 4.0
    assert np.isnan(bars.low.tolist()[1])  # a bar from zero has no base to state
    assert t[t.series == "left"][["x", "y"]].to_numpy().tolist() == [[-2.0, 5.0]]


def test_categories_are_written_by_name():
    fig, (a, b) = plt.subplots(1, 2)
    a.plot(["stem", "block1"], [1.0, 2.0], marker="o")
    b.bar(["x0.25", "x1"], [3.0, 4.0])
    t = ff.plotted_data(fig)
    plt.close(fig)
    assert t[t.kind == "line"].x.tolist() == ["stem", "block1"]
    assert t[t.kind == "bar"].x.tolist() == ["x0.25", "x1"]


def test_a_figure_whose_data_cannot_be_read_keeps_its_svg_and_says_why(tmp_path, monkeypatch, capsys):
    def broken(fig):
        raise ValueError("an artist of a new kind")

    monkeypatch.setattr(ff, "plotted_data", broken)
    fig = _figure()
    assert ff.write_figure_files(fig, tmp_path, "odd") == ["odd.svg"]
    plt.close(fig)
    assert "figure 'odd': its plotted data could not be read back (ValueError: an artist of a new kind)" in \
        capsys.readouterr().err
