"""The built book in a real browser (Debian's Chromium driven by playwright, offline).

The book is built once into a temporary folder; then every page of the table of contents (plus
the index and search pages) is opened from ``file://`` and checked: math typeset by the bundled
MathJax (no raw TeX left), every image loaded, no request to any host, no console error, and no
horizontal page scroll at phone width (400 px). The scorecard fits its column at 1280 and 400 px
with a scale on every verdict badge and working filters, and searching for ``B-F2A`` must find its page. Every
figure page shows its first figure within two screens at 1366x768, and a figure of several panels
its wide rendering there and its panels one per row on a 390x844 phone. Screenshots of every page
at 1280 and 400 px go to ``runs/browser/<width>/``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from stitchkit.base import paths
from stitchkit.book import bookpages, catalogue

# slow; grouped for pytest-xdist (the parametrized checks still spread over the workers, which share one
# compiled book: conftest.compiled_book)
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("browser")]

CHROMIUM = Path("/usr/bin/chromium")
HOW_TO_INSTALL = ("install it with `apt-get update && apt-get install -y chromium` (Debian) and "
                  "`.venv/bin/pip install playwright` (in the dev extra); no playwright browser download is needed")
sync_api = pytest.importorskip("playwright.sync_api", reason=f"the playwright package is missing: {HOW_TO_INSTALL}")
if not CHROMIUM.exists():
    pytest.skip(f"{CHROMIUM} is missing: {HOW_TO_INSTALL}", allow_module_level=True)

WIDTHS = (1280, 400)
SHOTS = paths.RUNS_DIR / "browser"
MAX_SHOT = 12000  # px of page height per screenshot
ALLOWED_SCHEMES = ("file:", "data:", "blob:", "about:")


def toc_docs() -> list[str]:
    """Every document of the table of contents, as written by bookpages (root first)."""
    toc = yaml.safe_load(bookpages.toc_yaml(paths.BOOK_DIR))
    docs = [toc["root"]]

    def walk(entries):
        for entry in entries or []:
            docs.append(entry["file"])
            walk(entry.get("sections"))

    walk(toc.get("chapters"))
    for part in toc.get("parts") or []:
        walk(part.get("chapters"))
    return docs


DOCS = toc_docs()
SCORECARD = f"{paths.BOOK_DIR.name}/scorecard"
PAGES = [*DOCS, "genindex", "py-modindex", "search"]  # Sphinx's indexes (the module index: the API page)


@pytest.fixture(scope="module")
def html_dir(compiled_book) -> Path:
    assert (compiled_book / f"{SCORECARD}.html").exists()
    return compiled_book


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox", "--disable-gpu"])
        yield b
        b.close()


class Visit:
    """One page opened at one width, with every request and console error it caused."""

    def __init__(self, browser, url: str, width: int) -> None:
        self.context = browser.new_context(viewport={"width": width, "height": 900})
        self.page = self.context.new_page()
        self.requests: list[str] = []
        self.errors: list[str] = []
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.page.on("console", lambda m: self.errors.append(f"console: {m.text} (at {m.location.get('url')})")
                     if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(f"page error: {e}"))
        self.page.on("requestfailed", lambda r: self.errors.append(f"request failed: {r.url} ({r.failure})"))
        self.page.goto(url, wait_until="load")
        # MathJax typesets after load; its startup promise resolves when the page is done.
        self.page.evaluate("async () => { if (window.MathJax && MathJax.startup && MathJax.startup.promise)"
                           " await MathJax.startup.promise; }")
        self.page.wait_for_function("Array.from(document.images).every(i => i.complete)", timeout=15000)

    def close(self) -> None:
        self.context.close()


def screenshot(visit: Visit, doc: str, width: int) -> Path:
    """The page from its top, at most ``MAX_SHOT`` px of it."""
    path = SHOTS / str(width) / (doc.replace("/", "__") + ".png")
    path.parent.mkdir(parents=True, exist_ok=True)
    height = visit.page.evaluate("document.scrollingElement.scrollHeight")
    visit.page.screenshot(path=str(path), full_page=True,
                          clip={"x": 0, "y": 0, "width": width, "height": min(height, MAX_SHOT)})
    return path


# Text outside code and scripts, where a raw TeX delimiter would mean MathJax did not run.
VISIBLE_PROSE = """() => {
  const clone = document.body.cloneNode(true);
  clone.querySelectorAll('pre, code, script, style, .highlight, mjx-container').forEach(e => e.remove());
  return clone.textContent;
}"""

PAGE_WIDTH = "() => [document.scrollingElement.scrollWidth, window.innerWidth]"

# Each verdict cell of the scorecard: inside the viewport, or inside a box that scrolls sideways
# (the table's own container) which itself is inside the viewport; and the table's width against
# its container's.
VERDICT_CELLS = """() => {
  const table = document.querySelector('.sk-scorecard-table');
  const heads = Array.from(table.querySelectorAll('thead th')).map(th => th.textContent.trim());
  const col = heads.indexOf('verdict');
  const inView = r => r.left >= -1 && r.right <= window.innerWidth + 1;
  const cells = Array.from(table.querySelectorAll('tbody tr')).map(tr => {
    const cell = tr.children[col];
    let reachable = inView(cell.getBoundingClientRect());
    for (let e = cell.parentElement; !reachable && e && e !== document.body; e = e.parentElement) {
      const style = getComputedStyle(e);
      if (['auto', 'scroll'].includes(style.overflowX) && inView(e.getBoundingClientRect())) reachable = true;
    }
    const badge = cell.querySelector('.sd-badge');
    return {reachable, col, badge: badge ? badge.textContent.trim() : null};
  });
  return {cells, width: table.scrollWidth, room: table.parentElement.clientWidth};
}"""


def test_every_built_page_is_checked(html_dir):
    built = {p.relative_to(html_dir).with_suffix("").as_posix() for p in html_dir.glob("**/*.html")
             if not p.relative_to(html_dir).parts[0].startswith("_")}
    assert built - {"index"} == set(PAGES), "a built page is missing from the browser checks, or vice versa"


@pytest.mark.parametrize("doc", PAGES)
def test_page_renders_offline(browser, html_dir, doc):
    url = (html_dir / f"{doc}.html").as_uri()
    for width in WIDTHS:
        visit = Visit(browser, url, width)
        try:
            page = visit.page
            if width == WIDTHS[0]:
                if page.locator(".math").count():
                    assert page.locator("mjx-container").count() > 0, f"{doc}: math not typeset by MathJax"
                prose = page.evaluate(VISIBLE_PROSE)
                for raw in ("$$", "\\(", "\\["):
                    assert raw not in prose, f"{doc}: raw TeX {raw!r} left on the page"
                images = page.evaluate("() => Array.from(document.images).map(i => [i.src, i.naturalWidth])")
                assert all(w > 0 for _, w in images), f"{doc}: images not loaded: {[s for s, w in images if not w]}"
            foreign = [u for u in visit.requests if not u.startswith(ALLOWED_SCHEMES)]
            assert not foreign, f"{doc}: requests leave the machine: {foreign}"
            assert not visit.errors, f"{doc} at {width} px: {visit.errors}"
            scroll_width, inner = page.evaluate(PAGE_WIDTH)
            assert scroll_width <= inner + 1, f"{doc} at {width} px scrolls sideways ({scroll_width} > {inner})"
            screenshot(visit, doc, width)
        finally:
            visit.close()


@pytest.mark.parametrize("width", WIDTHS)
def test_scorecard_fits_and_every_badge_carries_its_scale(browser, html_dir, width):
    visit = Visit(browser, (html_dir / f"{SCORECARD}.html").as_uri(), width)
    try:
        found = visit.page.evaluate(VERDICT_CELLS)
        # the filters hide rows: keep only not-reproduced ones, then show all again
        page = visit.page
        page.select_option('select[data-filter="verdict"]', "not reproduced")
        shown = page.evaluate("() => Array.from(document.querySelectorAll('.sk-scorecard-table tbody tr'))"
                              ".filter(tr => !tr.hidden).map(tr => tr.dataset.verdict)")
        page.select_option('select[data-filter="verdict"]', "")
        hidden = page.evaluate("() => document.querySelectorAll('.sk-scorecard-table tbody tr[hidden]').length")
    finally:
        visit.close()
    cells = found["cells"]
    assert cells and cells[0]["col"] >= 0, "the scorecard has no verdict column"
    assert found["width"] <= found["room"] + 1, f"the scorecard scrolls sideways at {width} px ({found})"
    assert all(c["reachable"] for c in cells), f"a verdict cell is clipped at {width} px"
    records = bookpages.counted(bookpages.rows(catalogue.load_pages()))
    expected = {bookpages.scorecard_badge_label(r["verdict"], r["scale"]) for r in records if r["verdict"]}
    badges = [c["badge"] for c in cells if c["badge"] is not None]
    assert set(badges) <= expected, f"unexpected verdict badges: {set(badges) - expected}"
    assert all(" · " in b for b in badges if b != bookpages.SCORECARD_SHORT_VERDICT[bookpages.MISSING]), "a badge without its scale"
    missing = sum(r["verdict"] == bookpages.MISSING for r in records)
    assert badges.count(bookpages.SCORECARD_SHORT_VERDICT[bookpages.MISSING]) == missing, "one badge per figure with no page yet"
    assert set(shown) <= {"not reproduced"} and len(shown) == sum(r["verdict"] == "not reproduced" for r in records)
    assert hidden == 0


def test_a_scorecard_view_survives_a_reload_through_its_address(browser, html_dir):
    """Issue 64, item 3: the filters, the search and the sort are kept in the page's address."""
    url = (html_dir / f"{SCORECARD}.html").as_uri()
    visit = Visit(browser, url, 1280)
    try:
        visit.page.select_option('select[data-filter="verdict"]', "not reproduced")
        visit.page.click('.sk-scorecard-table th[data-sort="paper"]')
        kept = visit.page.url
        first = visit.page.evaluate("() => Array.from(document.querySelectorAll('.sk-scorecard-table tbody tr'))"
                                    ".filter(tr => !tr.hidden).length")
    finally:
        visit.close()
    assert "verdict=not+reproduced" in kept and "sort=paper" in kept, kept
    again = Visit(browser, kept, 1280)
    try:
        value = again.page.eval_on_selector('select[data-filter="verdict"]', "s => s.value")
        shown = again.page.evaluate("() => Array.from(document.querySelectorAll('.sk-scorecard-table tbody tr'))"
                                    ".filter(tr => !tr.hidden).map(tr => tr.dataset.verdict)")
        sorted_by = again.page.eval_on_selector('.sk-scorecard-table th[data-sort="paper"]',
                                                "th => th.getAttribute('aria-sort')")
    finally:
        again.close()
    assert value == "not reproduced" and len(shown) == first and set(shown) <= {"not reproduced"}
    assert sorted_by == "ascending"


def test_the_landing_page_names_a_claim_of_each_paper_in_what_we_found(browser, html_dir):
    """Issue 64, items 1 and 8: the first thing the landing page says is what was found, claim by
    claim, for each of the four papers."""
    from stitchkit.registry.papers import PAPERS

    visit = Visit(browser, (html_dir / f"{DOCS[0]}.html").as_uri(), 1366)
    try:
        rows = visit.page.evaluate("() => Array.from(document.querySelectorAll('.sk-found-table tbody tr'))"
                                   ".map(tr => Array.from(tr.children).map(td => td.textContent.trim()))")
    finally:
        visit.close()
    for paper in PAPERS:
        if paper.beyond:
            continue
        mine = [r for r in rows if r and r[0] == paper.short]
        assert mine and all(r[2] for r in mine), f"no claim of {paper.name} in 'What we found'"


def test_search_finds_a_figure(browser, html_dir):
    visit = Visit(browser, (html_dir / "search.html").as_uri() + "?q=B-F2A", 1280)
    try:
        visit.page.wait_for_selector("#search-results ul.search li", timeout=20000)
        hits = visit.page.eval_on_selector_all("#search-results ul.search li a", "as => as.map(a => a.href)")
    finally:
        visit.close()
    # Sphinx fetches each hit's page for a text snippet; a browser refuses fetch() from file://
    # (blocked request, failed load, rejected promise: that only costs the snippets). Any other
    # error fails.
    book = html_dir.as_uri()
    others = [e for e in visit.errors if book not in e and e != "page error: Failed to fetch"]
    assert not others, others
    assert any(h.split("#")[0].split("?")[0].endswith("/B-F2A.html") for h in hits), hits


FOLDS = """() => Array.from(document.querySelectorAll('section > details.sk-fold:not(.sk-fold-method)')).map(
  d => [d.parentElement.id, d.open, d.querySelector('summary').textContent])"""


def test_reference_sections_fold_and_a_link_opens_them(browser, html_dir):
    """A figure page opens with its verdicts and figures: the claims' details, the changes after a
    run and the configuration fold behind one click under their headings; a link to one opens it."""
    page = html_dir / "book" / "bansal" / "B-F4.html"
    visit = Visit(browser, page.as_uri(), 1280)
    try:
        folds = visit.page.evaluate(FOLDS)
        visit.page.click("section#configuration summary")
        opened = visit.page.evaluate(FOLDS)
    finally:
        visit.close()
    assert [(sid, is_open) for sid, is_open, _ in folds] == [
        ("claims", False), ("changes-after-a-run", False), ("configuration", False)]
    assert dict((sid, is_open) for sid, is_open, _ in opened)["configuration"] is True
    linked = Visit(browser, page.as_uri() + "#claims", 1280)
    try:
        assert dict((sid, is_open) for sid, is_open, _ in linked.page.evaluate(FOLDS))["claims"] is True
        assert not linked.errors, linked.errors
    finally:
        linked.close()


def test_a_control_section_folds_its_tables_and_keeps_its_prose_and_figures(browser, html_dir):
    """A section that backs a verdict (is a stitch trained enough?) shows its prose and figures and
    folds each table behind its own click, which says how many rows it holds."""
    visit = Visit(browser, (html_dir / "book" / "balogh" / "J-T1.html").as_uri(), 1280)
    try:
        folded = visit.page.evaluate("""() => Array.from(document.querySelectorAll(
          '#is-tlm-trained-enough details.sk-fold-output')).map(d => [d.open, d.querySelector('summary').textContent,
          d.querySelectorAll('table').length, d.querySelectorAll('img').length])""")
        prose = visit.page.evaluate("""() => Array.from(document.querySelectorAll('#is-tlm-trained-enough > p'))
          .filter(p => p.offsetHeight > 0).length""")
        kept = visit.page.evaluate("""() => document.querySelectorAll('#the-matrices-behind-the-table img').length""")
    finally:
        visit.close()
    assert folded and all(not is_open and tables == 1 and images == 0 for is_open, _, tables, images in folded), folded
    assert all(summary.startswith("Show the table (") and summary.endswith(" rows)") for _, summary, _, _ in folded)
    assert prose >= 1 and kept >= 1


def test_the_method_paragraphs_under_the_title_fold_into_one_click(browser, html_dir):
    """Under a page's title the paper and the overview stay open; its noise model, controls and
    prerequisites fold into one closed box that names them."""
    visit = Visit(browser, (html_dir / "book" / "balogh" / "J-T1.html").as_uri(), 1280)
    try:
        fold = visit.page.evaluate("""() => { const d = document.querySelector('details.sk-fold-method');
          return d && [d.open, d.querySelector('summary').textContent,
                       Array.from(d.querySelectorAll(':scope > p > strong:first-child')).map(s => s.textContent)]; }""")
        overview = visit.page.evaluate("""() => Array.from(document.querySelectorAll('article p > strong:first-child'))
          .filter(s => s.textContent === 'Overview.').map(s => !!s.closest('details'))""")
    finally:
        visit.close()
    assert fold is not None and fold[0] is False
    assert fold[1] == "Show the noise model, the controls and the prerequisites (data and time)"
    assert fold[2] == ["Noise.", "Controls.", "Prerequisites."]
    assert overview == [False]


def test_every_figure_has_an_alt_text_that_says_what_it_shows(html_dir):
    """Every image of a page carries alt text in words (not a file path); a page behind its
    notebook (its text changed after the run) is checked once it is re-run."""
    import re
    from html.parser import HTMLParser

    class Images(HTMLParser):
        def __init__(self):
            super().__init__()
            self.alts = []

        def handle_starttag(self, tag, attrs):
            if tag == "img":
                self.alts.append((dict(attrs).get("alt") or "").strip())

    behind = {p.doc for p in catalogue.load_pages() if p.doc and p.behind()}
    bad = {}
    for doc in DOCS:
        if doc.removeprefix(f"{paths.BOOK_DIR.name}/") in behind:
            continue
        parser = Images()
        parser.feed((html_dir / f"{doc}.html").read_text())
        wrong = [a for a in parser.alts if len(a) < 15 or re.search(r"(^|/)_images/|\.(png|jpe?g|svg)$", a)]
        if wrong:
            bad[doc] = wrong
    assert not bad, f"images without a meaningful alt text: {bad}"


def main_figure_docs() -> list[str]:
    """The documents of the pages whose committed notebook has a main figure under its verdicts
    (a cell tagged ``pages.MAIN_FIGURE_TAG``, put there by the build)."""
    import json

    from stitchkit.book.pages import MAIN_FIGURE_TAG

    docs = []
    for page in catalogue.load_pages():
        path = paths.BOOK_DIR / f"{page.doc}.ipynb" if page.doc else None
        if path is None or not path.exists():
            continue
        cells = json.loads(path.read_text()).get("cells", [])
        if any(MAIN_FIGURE_TAG in c.get("metadata", {}).get("tags", []) for c in cells):
            docs.append(f"{paths.BOOK_DIR.name}/{page.doc}")
    return list(dict.fromkeys(docs))  # a page that holds two figures of the catalogue, once


# The first image shown on a page: its top in screens (viewport heights) from the page's top, its
# width on the page and its own width (px); null without one.
FIRST_FIGURE = """() => {
  const img = Array.from(document.querySelectorAll('article img')).find(i => i.offsetHeight > 0);
  return img ? [(img.getBoundingClientRect().top + window.scrollY) / window.innerHeight, img.clientWidth,
                img.naturalWidth] : null;
}"""


def test_every_figure_page_shows_its_first_figure_within_two_screens(browser, html_dir):
    """Issue 64, items 2 and 8: a figure page opens with its verdicts and then its main figure,
    whose top is within the first two screens of a 1366x768 window and of a 390x844 phone (the
    run's provenance, the rerun commands and the method prose fold under it; a page judging many
    claims folds all but its first few). A figure wider than the column is shown at least
    ``plotting.COLUMN_PX`` wide at 1366 px, the width the plotting helpers size their text for
    (tests/test_plotting_legibility.py)."""
    from stitchkit.pagekit.plotting import COLUMN_PX

    docs = main_figure_docs()
    assert len(docs) >= 25, f"too few figure pages found: {docs}"
    found: dict[tuple[int, int], dict] = {}
    for size in ((1366, 768), (390, 844)):
        context = browser.new_context(viewport={"width": size[0], "height": size[1]})
        page = context.new_page()
        try:
            for doc in docs:
                page.goto((html_dir / f"{doc}.html").as_uri(), wait_until="load")
                page.wait_for_function("Array.from(document.images).every(i => i.complete)", timeout=15000)
                found.setdefault(size, {})[doc] = page.evaluate(FIRST_FIGURE)
        finally:
            context.close()
    for (w, h), at in found.items():
        late = {doc: f[0] if f else None for doc, f in at.items() if f is None or f[0] > 2}
        assert not late, f"the first figure is not within two screens at {w}x{h} (screens down; None: no image): {late}"
    narrow = {doc: f[1] for doc, f in found[1366, 768].items() if f[2] > COLUMN_PX and f[1] < COLUMN_PX - 1}
    assert not narrow, f"figures shown narrower than plotting.COLUMN_PX ({COLUMN_PX} px) at 1366 px: {narrow}"


# --------------------------------------------------------------------------------------------
# A figure of several panels and its phone rendering (issue 64, item 2: panels stacked on a phone)

# Each figure's images on the page: [the figure's classes, the image's classes, shown (it has a
# height), its width on the page (px)].
FIGURE_IMAGES = """() => Array.from(document.querySelectorAll('article figure img')).map(i => [
  i.closest('figure').className, i.className, i.offsetHeight > 0, i.clientWidth])"""


def stacked_shown(browser, url: str) -> dict[tuple[int, int], list]:
    """:data:`FIGURE_IMAGES` of the page at ``url`` at 1366x768 and on a 390x844 phone."""
    found = {}
    for size in ((1366, 768), (390, 844)):
        context = browser.new_context(viewport={"width": size[0], "height": size[1]})
        try:
            page = context.new_page()
            page.goto(url, wait_until="load")
            page.wait_for_function("Array.from(document.images).every(i => i.complete)", timeout=15000)
            found[size] = page.evaluate(FIGURE_IMAGES)
        finally:
            context.close()
    return found


def check_stacked(found: dict[tuple[int, int], list], where: str) -> int:
    """Each figure that carries a phone rendering shows its wide image alone at 1366 px and its
    stacked one alone on a phone, there as wide as the phone's column (:data:`PHONE_COLUMN_PX`,
    the width its text is sized for); returns how many such figures there are."""
    from stitchkit.base.one_column import PHONE_COLUMN_PX

    for (w, h), images in found.items():
        mine = [i for i in images if "sk-has-stacked" in i[0].split()]
        wide = [shown for _, cls, shown, _ in mine if "sk-wide" in cls.split()]
        stacked = [(shown, width) for _, cls, shown, width in mine if "sk-stacked" in cls.split()]
        assert len(wide) == len(stacked), f"{where}: a figure with one of its two renderings only: {mine}"
        if w > 600:
            assert all(wide) and not any(s for s, _ in stacked), f"{where} at {w}x{h}: the stacked figure shows"
        else:
            assert not any(wide) and all(s for s, _ in stacked), f"{where} at {w}x{h}: the wide figure shows"
            assert all(abs(width - PHONE_COLUMN_PX) <= 2 for _, width in stacked), (
                f"{where} at {w}x{h}: a stacked figure is not {PHONE_COLUMN_PX} px wide: {stacked}")
    return sum("sk-stacked" in cls.split() for _, cls, _, _ in found[1366, 768])


@pytest.fixture(scope="module")
def stacked_book(tmp_path_factory) -> Path:
    """A one-page book, built with the book's configuration, extensions and style sheet, whose
    page glues a two-panel figure (under its key) and its phone rendering (under the key and
    ``STACKED_SUFFIX``) as a page's run does, and shows it with ``{glue:figure}``; and a
    one-panel figure glued alone. The book's pages carry both renderings once they are re-run;
    this page checks the machinery before then."""
    import base64
    import io
    import shutil
    import subprocess
    import sys

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import nbformat

    from stitchkit.verdicts.results import FIGURE_DPI, GLUE_PREFIX, STACKED_SUFFIX, one_column_figure

    root = tmp_path_factory.mktemp("stacked-book")
    shutil.copy(paths.REPO_ROOT / "_config.yml", root / "_config.yml")
    shutil.copytree(paths.BOOK_DIR / "_ext", root / "book" / "_ext")
    shutil.copytree(paths.BOOK_DIR / "_static", root / "book" / "_static")
    (root / "_toc.yml").write_text("format: jb-book\nroot: book/page\n")

    def png(fig) -> str:
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=FIGURE_DPI, bbox_inches="tight")
        return base64.b64encode(buf.getvalue()).decode()

    def glued(key: str, fig) -> dict:
        return nbformat.v4.new_output("display_data", data={GLUE_PREFIX + "image/png": png(fig),
                                                            GLUE_PREFIX + "text/plain": "<Figure>"},
                                      metadata={"scrapbook": {"name": key, "mime_prefix": GLUE_PREFIX}})

    fig, axes = plt.subplots(1, 2, figsize=(9.0, 4.0))
    for k, ax in enumerate(axes):
        ax.plot([0, 1, 2], [k, 2 * k, k + 1], "o-", label=f"line {k}")
        ax.set_xlabel("stitch point")
        ax.set_ylabel("penalty (points)")
        ax.legend()
    outputs = [glued("two", fig)]
    outputs.append(glued("two" + STACKED_SUFFIX, one_column_figure("two", fig)))
    single, ax = plt.subplots(figsize=(6.0, 3.5))
    ax.plot([0, 1], [1, 0])
    assert one_column_figure("one", single) is None
    outputs.append(glued("one", single))
    plt.close("all")
    cell = nbformat.v4.new_code_cell("run.figure('two', fig); run.figure('one', single)")
    cell.outputs = outputs
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("# A page\n\nText."), cell,
        nbformat.v4.new_markdown_cell("```{glue:figure} two\n:name: fig-two\n:alt: Two line plots of the "
                                      "penalty at three stitch points.\n\nTwo panels.\n```\n\n"
                                      "```{glue:figure} one\n:name: fig-one\n:alt: One line plot going down."
                                      "\n\nOne panel.\n```")])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, root / "book" / "page.ipynb")
    exe = Path(sys.executable).with_name("jupyter-book")
    subprocess.run([str(exe) if exe.exists() else "jupyter-book", "build", str(root), "--builder", "html",
                    "-W", "-n", "--keep-going"], check=True, capture_output=True)
    return root / "_build" / "html"


def test_a_figure_of_several_panels_is_stacked_on_a_phone_and_wide_on_a_desktop(browser, stacked_book, html_dir):
    """Issue 64, item 2: a figure of several panels shows its wide rendering at 1366x768 and, on a
    390x844 phone, the same panels one per row (their text sized for the phone's column:
    tests/test_plotting_legibility.py), never both; a figure of one panel is one image at every
    width. Checked on a page built as the book's pages are, and on every figure of the book that
    carries both renderings (pages run since this change)."""
    found = stacked_shown(browser, (stacked_book / "book" / "page.html").as_uri())
    assert check_stacked(found, "the one-page book") == 1
    for size, images in found.items():
        alone = [i for i in images if "sk-has-stacked" not in i[0].split()]
        assert len(alone) == 1 and alone[0][2], f"the one-panel figure at {size}: {alone}"
    text = (stacked_book / "book" / "page.html").read_text()
    assert text.count("page · figure") == 2  # one caption per figure, whatever it carries
    for doc in main_figure_docs():
        html = (html_dir / f"{doc}.html")
        if "sk-has-stacked" in html.read_text():
            check_stacked(stacked_shown(browser, html.as_uri()), doc)
