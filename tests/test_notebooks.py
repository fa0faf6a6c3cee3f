"""Every notebook through papermill at the smoke scale, and the book build with warnings as errors."""

import json
import re

import nbformat
import pytest

from stitchkit.base import paths
from stitchkit.book import catalogue, execution, notebooks
from stitchkit.data import archives, integrity
from stitchkit.registry.figures import FIGURES

NOTEBOOKS = list(notebooks.discover())


# what each page reads, whether it judges claims and whether its result is a table: the registry's
NEEDS = {f.id: f.needs for f in FIGURES}
DATA_ONLY = {f.id for f in FIGURES if not f.claims}  # pages that make no claim (show data, or summarise other pages)
TABLES_ONLY = {f.id for f in FIGURES if f.kind == "table"}  # pages whose result is a table, without a figure


def _have(dataset: str) -> bool:
    try:
        archives.load(dataset, "test")
        return True
    except integrity.DataNotFoundError:
        return False


PICTURES_ONLY = {("H-F6", "images"), ("S-F1A", "examples")}  # figures of pictures only: an SVG without a CSV

LENGTH_CONTROLLED = {"B-F3C": ("wider_improves", "not_vice_versa"), "B-F8": ("stitch_tells",), "B-F6": ("connected",),
                     "B-F9": ("within",),
                     "H-T1": ("closer", "not_orders"), "H-T2": ("closer", "not_orders"),
                     "J-F2": ("tlm_ood_rn", "dm_less_ood_rn", "tlm_ood_vit", "dm_less_ood_vit")}


@pytest.mark.slow
@pytest.mark.parametrize("figure_id", NOTEBOOKS)
def test_notebook_runs_at_smoke(figure_id, tmp_path):
    for dataset in NEEDS[figure_id]:
        if not _have(dataset):
            pytest.skip(f"{dataset} not found in the data root (set STITCHKIT_DATA_ROOT; `make check` and `make test` do)")
    info = notebooks.get_notebook(figure_id)
    out = tmp_path / f"{figure_id}.ipynb"
    results = execution.execute(info, out, "smoke", progress=False)
    assert results["scale"] == "smoke" and results["numbers"] and (results["claims"] or figure_id in DATA_ONLY)
    assert results["source_sha256"] == catalogue.source_hash(info.source)
    assert results["provenance"]["wall_seconds"] > 0
    assert json.loads(out.with_suffix(".results.json").read_text()) == results
    nb = nbformat.read(out, as_version=4)
    assert any("Run provenance" in c.source for c in nb.cells[2:4])  # folded under the main figure
    assert not list(paths.REPO_ROOT.glob("kernel-ipc*"))  # the kernel's sockets live in a temporary folder
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []) if o.output_type == "error"]
    assert not errors
    pngs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
            if "image/png" in o.get("data", {})]
    assert figure_id in TABLES_ONLY or pngs or any("image/png" in o.get("data", {}) or "application/papermill.record/image/png" in o.get("data", {})
                       for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])), \
        "the notebook should render at least one figure"
    # every figure the page glues is also on disk as SVG and CSV, linked under its caption
    figures = results.get("figures") or {}
    assert figure_id in TABLES_ONLY or figures, "run.figure should write the figure's files"
    for key, files in figures.items():
        assert files == ([f"{key}.svg"] if (figure_id, key) in PICTURES_ONLY else [f"{key}.svg", f"{key}.csv"])
        assert all((tmp_path / f"{figure_id}.figures" / f).stat().st_size > 0 for f in files)
        assert f"<{figure_id}.figures/{key}.svg>" in "".join(c.source for c in nb.cells if c.cell_type == "markdown")
    assert not list(tmp_path.glob(".*running*"))
    streams = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []) if o.output_type == "stream"
               and o.get("name") == "stderr"]
    assert not streams, "progress or warnings leaked onto the page"
    assert "Results at a glance" in nb.cells[1].source
    # every value the prose glues is glued by the run (a page's words about its networks and numbers
    # are what ran: a missing key would render as a build warning, or as nothing)
    glued = {o.get("metadata", {}).get("scrapbook", {}).get("name") for c in nb.cells if c.cell_type == "code"
             for o in c.get("outputs", [])}
    named = set(re.findall(r"\{glue(?::\w+)?\}`([^`:]+)", "".join(c.source for c in nb.cells if c.cell_type == "markdown")))
    named |= set(re.findall(r"```\{glue:figure\} (\S+)", "".join(c.source for c in nb.cells if c.cell_type == "markdown")))
    assert named <= glued, f"the prose names values the run does not glue: {sorted(named - glued)}"
    if figure_id == "B-F2A":  # smoke models carry signal: a numerical regression in stitching shows here
        n = results["numbers"]
        assert n["receiver_accuracy_full_test"] >= 25
        assert n["random_late_penalty"] > n["trained_penalty_pool"] + 3
        assert abs(n["control_max_dm_penalty"]) < 1e-6  # DM stitches the receiver into itself exactly
    for c in results["claims"]:  # a claim decided before it (its interval on one side, its other controls
        # passed: a verdict at any scale but smoke) has stood its training-length control
        others = [k for k in c["controls"] if "survives" not in k["text"]]
        if c["key"] in LENGTH_CONTROLLED.get(figure_id, ()) and c["holds"] is not None and all(k["passed"] for k in others):
            assert any("survives" in k["text"] for k in c["controls"]), (figure_id, c["key"])
    if figure_id == "S-F1B":  # smoke models learn something: the Digit model beats chance on Correlated
        assert results["numbers"]["digit_baseline"] > 0.2


@pytest.mark.parametrize("figure_id", NOTEBOOKS)
def test_committed_page_exists_with_results(figure_id):
    info = notebooks.get_notebook(figure_id)
    page = info.book_notebook()
    assert page.exists(), f"{page} missing: run `stitchkit book` and commit the executed page"
    results = json.loads(page.with_suffix(".results.json").read_text())
    assert results["id"] == figure_id and results["scale"] in ("smoke", "demo", "gpu", "paper")
    for beside in page.parent.glob(f"{figure_id}.*.results.json"):  # another scale's verdicts (transfer)
        other = json.loads(beside.read_text())
        assert other["id"] == figure_id and beside.name == f"{figure_id}.{other['scale']}.results.json"
        assert other["scale"] != results["scale"] and all(c["verdict"] for c in other["claims"])
    assert all(c["verdict"] for c in results["claims"])


@pytest.mark.slow
@pytest.mark.xdist_group("browser")  # with the browser checks: the book is compiled once per run (conftest)
def test_book_builds_without_warnings(compiled_book):
    html = compiled_book
    assert (html / "index.html").exists()
    page = (html / "book" / "bansal" / "B-F2A.html").read_text()
    assert "Run provenance" in page and "reproduced" in page
    assert (html / "_static" / "mathjax" / "tex-mml-chtml.js").exists()
    # figures are labelled by their page, never numbered across the book (book/_ext/figure_labels.py)
    assert "B-F2A · figure 1. " in page and "B-F2A · figure 2. " in page and 'class="caption-number"' not in page


def test_stale_detection(tmp_path):
    src = tmp_path / "notebooks" / "B-X1.py"
    src.parent.mkdir()
    src.write_text('# %% tags=["parameters"]\nscale = "smoke"  # smoke | demo | paper\n')
    info = notebooks.NotebookInfo("B-X1", src, notebooks.parse_parameters(src))
    book = tmp_path / "book"
    assert execution.stale_reason(info, book) == "no executed page"
    page = info.book_notebook(book)
    page.parent.mkdir(parents=True)
    page.write_text("{}")
    page.with_suffix(".results.json").write_text(json.dumps({"source_sha256": catalogue.source_hash(src)}))
    assert execution.stale_reason(info, book) is None
    src.write_text(src.read_text() + "# changed\n")
    assert execution.stale_reason(info, book) == "source changed since the committed run"


def test_make_book_never_replaces_a_higher_scales_page_and_keeps_its_run_beside(tmp_path, monkeypatch):
    """A GPU page whose notebook changed is not overwritten by a demo run: the demo verdicts go
    beside it (<ID>.demo.results.json), and once they match the notebook the page counts as current."""
    nbs = tmp_path / "notebooks"
    nbs.mkdir()
    src = nbs / "H-F2.py"
    src.write_text((paths.NOTEBOOKS_DIR / "H-F2.py").read_text())
    monkeypatch.setattr(execution.paths, "NOTEBOOKS_DIR", nbs)
    book = tmp_path / "book"
    info = notebooks.get_notebook("H-F2", nbs)
    page = info.book_notebook(book)
    page.parent.mkdir(parents=True)
    page.write_text("{}")
    gpu = {"id": "H-F2", "scale": "gpu", "source_sha256": "an older notebook", "claims": []}
    page.with_suffix(".results.json").write_text(json.dumps(gpu))
    assert execution.stale_reason(info, book, scale="demo") == "source changed since the committed run"
    runs = []

    def fake_execute(info, out, scale, params=None, *, progress=True):
        runs.append((scale, out))
        return {"id": info.id, "scale": scale, "source_sha256": catalogue.source_hash(info.source), "claims": []}

    monkeypatch.setattr(execution, "execute", fake_execute)
    monkeypatch.setattr(execution, "discover", lambda broken=None: {"H-F2": info})
    execution.build_book(build=False, book_dir=book, progress=False, rerun_behind=True)
    assert [s for s, _ in runs] == ["demo"] and runs[0][1].parent != page.parent  # executed elsewhere
    assert json.loads(page.with_suffix(".results.json").read_text()) == gpu  # the GPU page stays shown
    beside = json.loads((page.parent / "H-F2.demo.results.json").read_text())
    assert beside["scale"] == "demo"
    assert execution.stale_reason(info, book, scale="demo") is None  # current at demo; no re-run next time
    assert execution.stale_reason(info, book) == "source changed since the committed run"  # the page itself is behind
    execution.build_book(build=False, book_dir=book, progress=False, rerun_behind=True)
    assert len(runs) == 1


def test_make_book_renders_a_page_behind_its_code_without_rerunning_it(tmp_path, monkeypatch, capsys):
    """Issue 64, item 5: a fresh clone whose pages are all behind their code builds in minutes: a
    plain build executes only a page that has none, names each page that is behind and leaves it
    as committed; ``rerun_behind`` (``make rerun``) re-runs it."""
    nbs = tmp_path / "notebooks"
    nbs.mkdir()
    for fid in ("B-F4", "B-F5"):
        (nbs / f"{fid}.py").write_text((paths.NOTEBOOKS_DIR / f"{fid}.py").read_text())
    monkeypatch.setattr(execution.paths, "NOTEBOOKS_DIR", nbs)
    book = tmp_path / "book"
    behind = notebooks.get_notebook("B-F4", nbs)
    page = behind.book_notebook(book)
    page.parent.mkdir(parents=True)
    page.write_text("{}")
    committed = {"id": "B-F4", "scale": "demo", "source_sha256": "an older notebook", "claims": []}
    page.with_suffix(".results.json").write_text(json.dumps(committed))
    runs = []

    def fake_execute(info, out, scale, params=None, *, progress=True):
        runs.append(info.id)
        return {"id": info.id, "scale": scale, "source_sha256": catalogue.source_hash(info.source), "claims": []}

    monkeypatch.setattr(execution, "execute", fake_execute)
    monkeypatch.setattr(notebooks, "discover", lambda broken=None: {i: notebooks.get_notebook(i, nbs)
                                                                     for i in ("B-F4", "B-F5")})
    execution.build_book(build=False, book_dir=book, progress=False)
    out = capsys.readouterr().out
    assert runs == ["B-F5"]  # no executed page: executed; the page behind is not
    assert "B-F4: behind (source changed since the committed run)" in out and "make rerun" in out
    assert json.loads(page.with_suffix(".results.json").read_text()) == committed
    execution.build_book(build=False, book_dir=book, progress=False, rerun_behind=True)
    assert runs == ["B-F5", "B-F4", "B-F5"]  # (the fake run writes no page: B-F5 still has none)
    # a re-run page by page (--only): just those pages, in the order given; an unknown one is named first
    execution.build_book(build=False, book_dir=book, progress=False, rerun_behind=True, only=["B-F5", "B-F4"])
    assert runs[3:] == ["B-F5", "B-F4"]
    with pytest.raises(KeyError, match="unknown page.*B-F99; valid: B-F4, B-F5"):
        execution.build_book(build=False, book_dir=book, progress=False, rerun_behind=True, only=["B-F99"])


def test_every_page_link_in_a_notebook_resolves_from_its_part():
    """A ``{doc}`` link in a notebook's prose names a page of the same part by its ID, or one of
    another part by its path from there (``../bansal/B-F2A``): a bare ID of another part is an
    unknown document to the book build, which sees it only once the page has been run again."""
    import re

    prefix = {f.id: f.prefix for f in FIGURES}
    bad = []
    for f in FIGURES:
        text = (paths.NOTEBOOKS_DIR / f"{f.id}.py").read_text()
        for target in re.findall(r"\{doc\}`(?:[^`<]*<([^>`]+)>|([^`]+))`", text):
            name = next(t for t in target if t)
            if "/" not in name and name in prefix and prefix[name] != f.prefix:
                bad.append(f"{f.id}: {{doc}}`{name}`")
    assert not bad, f"links to another part's page by its bare ID: {bad}"
