"""The generated book pages: scorecard, part pages, results table, table of contents, rerun box."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest
import yaml

from stitchkit.book import bookpages, catalogue, cost, pages
from stitchkit.registry import figures, papers
from stitchkit.registry.figures import FIGURES
from stitchkit.verdicts import results

ACROSS = [f.id for f in FIGURES if f.prefix == "X"]  # the pages beyond the papers


def claim(key: str, text: str, verdict: str, scale: str = "demo", **extra) -> dict:
    return {"key": key, "text": text, "criterion": f"{key} criterion", "paper": f"paper's {key}",
            "ours": f"our {key}", "holds": verdict == "reproduced", "scale": scale, "verdict": verdict, **extra}


def fake_results(figure_id: str, scale: str, claims: list[dict], wall: float, params: dict | None = None) -> dict:
    return {"id": figure_id, "scale": scale, "params": params or {},
            "provenance": {"date": "2026-11-21T21:00:41+00:00", "commit": "abc123", "device": "cpu",
                           "wall_seconds": wall},
            "numbers": {}, "claims": claims}


@pytest.fixture
def book(tmp_path: Path) -> Path:
    """A book folder with two results files: B-F2A (a page, the current schema, one failed
    control) and H-F2 (an older file without controls/n, no page yet)."""
    book = tmp_path / "book"
    (book / "bansal").mkdir(parents=True)
    (book / "hernandez").mkdir()
    failed = {"text": "receiver into itself", "criterion": "≤ 1", "value": "3.2 points", "passed": False}
    b = fake_results("B-F2A", "demo", [
        claim("connected", "Seeds are stitching connected | at every layer, $x$ ≤ 3", "not reproduced", n=2,
              controls=[]),
        claim("random_early", "A random bottom stitches early", "inconclusive at this scale", controls=[failed]),
        claim("random_late", "A random bottom fails late", "reproduced", n=1, controls=[]),
    ], wall=694.8, params={"model": "preact_resnet18", "stitch_augment": False, "width": 16, "seeds": [0, 1]})
    (book / "bansal" / "B-F2A.results.json").write_text(json.dumps(b))
    (book / "bansal" / "B-F2A.ipynb").write_text("{}")
    (book / "bansal" / ".B-F2A.ipynb.running.ipynb").write_text("{}")  # never listed
    h = fake_results("H-F2", "smoke", [claim("triangle", "Stitching forms a triangle", "not assessed at smoke scale",
                                             scale="smoke"),
                                       claim("controls", "Random controls stitch poorly", "not assessed at smoke scale",
                                             scale="smoke")], wall=12.0)
    (book / "hernandez" / "H-F2.results.json").write_text(json.dumps(h))
    return book


def claim_table_rows(markdown: str) -> list[dict]:
    """Every body row of the scorecard's claim table (raw HTML): its data attributes and cells."""
    from html.parser import HTMLParser

    class Rows(HTMLParser):
        def __init__(self):
            super().__init__()
            self.rows, self.cell = [], None

        def handle_starttag(self, tag, attrs):
            if tag == "tr" and dict(attrs).get("data-verdict"):
                self.rows.append({"attrs": dict(attrs), "cells": [], "html": []})
            elif tag == "td" and self.rows:
                self.cell = []
            elif tag == "a" and self.cell is not None:
                self.rows[-1]["html"].append(dict(attrs).get("href"))

        def handle_endtag(self, tag):
            if tag == "td" and self.cell is not None:
                self.rows[-1]["cells"].append("".join(self.cell).strip())
                self.cell = None

        def handle_data(self, data):
            if self.cell is not None:
                self.cell.append(data)

    table = markdown.split("## Every claim", 1)[1]
    parser = Rows()
    parser.feed(table)
    return parser.rows


def test_vocabularies_match_the_library():
    assert catalogue.VERDICTS == results.VERDICTS
    ids = [fid for fid, _ in catalogue.CATALOGUE]
    assert len(ids) == len(set(ids)) == 31 + len(ACROSS)  # the four papers' 31, and the pages across them
    assert all(papers.paper_of(fid) is not None for fid in ids)


def test_scorecard_lists_every_claim_once_and_every_catalogue_id(book):
    bookpages.write_pages(book, toc=book.parent / "_toc.yml")
    text = (book / "scorecard.md").read_text()
    rows = claim_table_rows(text)
    assert all(len(r["cells"]) == 5 for r in rows), "a cell's text broke the table"
    claims = ["Seeds are stitching connected", "A random bottom stitches early", "A random bottom fails late",
              "Stitching forms a triangle", "Random controls stitch poorly"]
    for t in claims:
        assert sum(t in r["cells"][2] for r in rows) == 1, t
    assert "$x$ ≤ 3" in rows[0]["cells"][2] or any("$x$ ≤ 3" in r["cells"][2] for r in rows)  # literal text
    by_id: dict[str, list[dict]] = {}
    for r in rows:
        by_id.setdefault(r["cells"][1], []).append(r)
    assert set(by_id) == {fid for fid, _ in catalogue.CATALOGUE}
    assert len(by_id["B-F2A"]) == 3 and len(by_id["H-F2"]) == 2
    for fid, found in by_id.items():
        if fid not in ("B-F2A", "H-F2"):
            assert len(found) == 1 and found[0]["cells"][4] == "no page yet", fid
            assert found[0]["attrs"]["data-verdict"] == "no page yet"
    # the verdict badge carries its scale; the details say why a verdict is inconclusive, in words
    early = by_id["B-F2A"][1]
    assert early["cells"][4] == "inconclusive · demo" and early["attrs"]["data-scale"] == "demo"
    assert "failed control receiver into itself: measured 3.2 points, needed ≤ 1" in early["cells"][2]
    # the scorecard's tool (issue 64, item 3): why, amended and networks are each a filter and a row attribute
    assert early["attrs"]["data-why"] == "failed control" and early["attrs"]["data-networks"] == "one set"
    for name in ("why", "amended", "networks"):
        assert f'data-filter="{name}"' in text
    assert "data-search" in text and 'data-sort="verdict"' in text
    assert by_id["B-F2A"][0]["html"] == ["bansal/B-F2A.html"]  # links to its page
    assert by_id["H-F2"][0]["html"] == []  # results but no page yet: no link
    assert by_id["H-F2"][0]["cells"][4] == "not assessed · smoke"
    assert "no interval" in by_id["B-F2A"][0]["cells"][2]  # a claim judged before the noise model says so
    # filters by paper, verdict and scale; a one-line meaning of each scale used
    for name in ("paper", "verdict", "scale"):
        assert f'data-filter="{name}"' in text
    assert "- **demo**: 2 CPU cores" in text and "- **smoke**: CI" in text and "- **paper**" not in text


def test_failed_controls_say_what_went_wrong():
    base = {"value": -0.84, "low": -1.38, "high": -0.51, "threshold": 0.0, "direction": "within", "tolerance": 0.5,
            "unit": "points"}
    self_stitch = {"text": "receiver stitched into itself at every cut (an exact stitch exists): |penalty| ≤ 0.5",
                   "passed": False, "record": base}
    assert results.why_failed(self_stitch) == ("receiver stitched into itself at every cut: self-penalty -0.84 "
                                               "[-1.38, -0.51] points, not wholly within ±0.5 points (the stitch "
                                               "alone adds accuracy)")
    length = {"text": "the verdict survives 4x longer stitch training: the stitches of x retrained", "passed": False,
              "record": {**base, "value": 2.92, "low": 2.5, "high": 3.4, "threshold": 3.0, "direction": "<=",
                         "tolerance": None, "rule": "agrees", "base_holds": False}}
    assert results.why_failed(length) == ("with 4× longer training the claim's value is 2.92 [2.5, 3.4] points "
                                          "(needed ≤ 3 points): it is within noise, where the shorter run's failed")
    premise = {"text": "the 25k network is more accurate (the premise)", "passed": False,
               "record": {**base, "value": -2.5, "low": -3.4, "high": -1.7, "direction": ">=", "tolerance": None}}
    assert results.why_failed(premise) == "the 25k network is more accurate: -2.5 [-3.4, -1.7] points, not wholly ≥ 0 points"


def test_counts_csv_and_json_agree_with_the_claims(book):
    bookpages.write_pages(book, toc=book.parent / "_toc.yml")
    with open(book / "_static" / "results.csv", newline="") as fh:
        table = list(csv.DictReader(fh))
    data = json.loads((book / "_static" / "results.json").read_text())
    assert data["rows"] == table or [{k: str(v) for k, v in r.items()} for r in data["rows"]] == table
    assert len(table) == 5 + 29 + len(ACROSS)  # five claims, the other catalogue IDs without results
    verdicts = [r["verdict"] for r in table]
    assert verdicts.count("no page yet") == 29 + len(ACROSS)
    assert set(verdicts) <= set(data["verdicts"]) == {*results.VERDICTS, "no page yet"}
    summary = (book / "scorecard-summary.md").read_text()
    assert f"| {{bdg-secondary-line}}`no page yet` | 12 | 5 | 7 | 5 | {len(ACROSS)} | **{29 + len(ACROSS)}** |" in summary
    assert "| {bdg-success}`reproduced` | 1 | 0 | 0 | 0 | 0 | **1** |" in summary  # at demo
    assert "| {bdg-secondary}`not assessed at smoke scale` | 0 | 2 | 0 | 0 | 0 | **2** |" in summary  # at smoke
    assert "{doc}`Across (beyond the papers) <across/index>`" in summary  # the fifth column, marked
    assert summary.index("pages run at `smoke`") < summary.index("pages run at `demo`")


def test_part_pages_toc_and_idempotence(book):
    toc_path = book.parent / "_toc.yml"
    written = bookpages.write_pages(book, toc=toc_path)
    assert len(written) == 14  # scorecard, summary, csv, json, cost, report, networks, API reference, toc, five parts
    cost = (book / "cost.md").read_text()
    assert "Not measured yet: run `make bench`." in cost and "the measured column is empty" in cost
    assert "14,144" in cost and "≤ 4 H100-hours" in cost  # the H-F2 paper grid, counted from its preset
    bansal = (book / "bansal" / "index.md").read_text()
    for fid, _ in catalogue.CATALOGUE:
        assert (f"| {fid} |" in bansal or f"`{fid} <{fid}>`" in bansal) == fid.startswith("B-"), fid
    assert "{doc}`B-F2A <B-F2A>`" in bansal and "11.6 min in all (1 page of 13" in bansal
    # the demo budget beside the measured sum, above the table
    assert "budget of this part is 90 min" in bansal and "no empty-cache estimate can be given yet" in bansal
    assert bansal.index("budget of this part") < bansal.index("## Figures and tables")
    assert "{bdg-danger}`not reproduced · demo` {bdg-warning}`inconclusive · demo`" in bansal  # with their scale
    assert "none yet (0 pages of 5" in (book / "balogh" / "index.md").read_text()
    toc = yaml.safe_load(toc_path.read_text())
    files = [c["file"] for c in toc["chapters"]]
    assert toc["root"] == "book/intro"
    assert files == ["book/scorecard", "book/report", "book/networks", "book/bansal/index", "book/hernandez/index", "book/smith/index",
                     "book/balogh/index", "book/across/index", "book/cost", "book/glossary", "book/api"]
    across = (book / "across" / "index.md").read_text()
    assert "**What this part asks.**" in across and "beyond the four papers" in across and "| X-1 |" in across
    assert toc["chapters"][3]["sections"] == [{"file": "book/bansal/B-F2A"}]
    # a stopped run's partial notebook is no page: the toc leaves it out (the build excludes it)
    (book / "bansal" / "B-F3A.failed.ipynb").write_text("{}")
    assert catalogue.figure_docs(book, "bansal") == ["B-F2A"]
    (book / "bansal" / "B-F3A.failed.ipynb").unlink()
    assert "sections" not in toc["chapters"][4]  # H-F2 has results but no page
    assert bookpages.write_pages(book, toc=toc_path) == []  # nothing changed: nothing rewritten


def test_rerun_box_commands(book, monkeypatch):
    monkeypatch.setattr(pages, "smoke_times", lambda: {})
    res = json.loads((book / "bansal" / "B-F2A.results.json").read_text())
    box = pages.rerun_box(res)
    assert box.startswith("````{admonition} Rerun this page") and box.endswith("````")
    for s in figures.scales_of("B-F2A"):
        assert f"\n.venv/bin/stitchkit run B-F2A --scale {s}\n" in box
    monkeypatch.setitem(figures.OPTIONAL, "gpu", tuple(i for i in figures.OPTIONAL["gpu"] if i != "B-F9"))
    assert "--scale gpu" not in pages.rerun_box({**res, "id": "B-F9"})  # a figure without a gpu preset
    monkeypatch.undo()
    monkeypatch.setattr(pages, "smoke_times", lambda: {})
    assert "--scale gpu\n" in box  # B-F2A has one (issue 47)
    assert "--scale gpu\n" in pages.rerun_box({**res, "id": "H-F2"})
    assert "\n.venv/bin/stitchkit sweep B-F2A --scale demo -p width 16 32\n" in box
    # the page's own scale quotes its measured times; the others say they are not timed
    assert "measured 11.6 min as run on cpu" in box.split("--scale smoke")[1].split("--scale demo")[0]
    assert "not timed for this page yet" in box.split("--scale smoke")[0]
    # ... and smoke quotes benchmarks/smoke_times.py's measure where there is one
    monkeypatch.setattr(pages, "smoke_times", lambda: {"B-F2A": {"seconds": 42.0, "device": "cpu (2 cores)",
                                                                 "date": "2026-11-25"}})
    assert ("# smoke: tiny networks; assesses no claim; measured 42 s from an empty cache on cpu (2 cores) "
            "(2026-11-25)\n") in pages.rerun_box(res)
    res["params"] = {"stitch_augment": False}
    assert "-p stitch_augment false true\n" in pages.rerun_box(res)
    res["params"] = {}
    assert "-p PARAM V1 V2" in pages.rerun_box(res)


def test_escape_keeps_text_literal():
    assert pages.escape("a | b $x$ *y* `z`") == "a \\| b \\$x\\$ \\*y\\* \\`z\\`"


def test_glance_box_is_a_block_per_claim_and_old_pages_are_rerendered_from_their_results(monkeypatch):
    import nbformat

    monkeypatch.setattr(pages, "smoke_times", lambda: {})
    from stitchkit.book.pages import GLANCE_CLASS, page_boxes, provenance_banner, result_box

    res = {"id": "B-F2A", "scale": "demo", "provenance": {"commit": "abc", "device": "cpu", "wall_seconds": 5.0},
           "claims": [{"text": "t", "paper": "p", "ours": "o", "verdict": "reproduced", "scale": "demo"},
                      {"text": "u", "paper": "q", "ours": "r", "verdict": "inconclusive at this scale",
                       "scale": "demo", "reason": "within noise: the interval [1, 2] contains 1.5"}]}
    box = result_box(res)
    # a list item per claim: the badge and the claim, then ours beside the paper's value, then why
    # a verdict is inconclusive (only where it is)
    assert f":class: {GLANCE_CLASS}\n- {{bdg-success}}`reproduced · demo` t\n\n  **ours** o · **paper** p\n- " in box
    # an inconclusive verdict names its kind of reason beside the claim; the reason in full, and
    # what moved a verdict, fold under the box (issue 64: a compact table, then the figure)
    assert "{bdg-warning}`inconclusive · demo` u · *within noise*\n\n  **ours** r · **paper** q\n" in box
    assert box.count("*why:*") == 1 and box.index(f":::{{dropdown}} {pages.GLANCE_WHY}") < box.index("*why:* within")
    assert "`reproduced · demo` t\n\n  *why" not in box  # a claim with nothing to say has no entry there
    # a run at another scale kept beside the page: its verdict and value under each claim's own
    demo = {"scale": "demo", "claims": [{"key": "k2", "verdict": "reproduced", "scale": "demo", "ours": "d"}]}
    gpu = {**res, "scale": "gpu", "claims": [{**c, "key": f"k{n}", "scale": "gpu"} for n, c in enumerate(res["claims"], 1)]}
    two = result_box(gpu, [demo])
    assert two.count("*also at demo:*") == 1 and "\n\n  *also at demo:* {bdg-success}`reproduced · demo` d\n" in two
    assert two.index("`inconclusive · gpu` u") < two.index("*also at demo:*")  # the page's (higher) scale first
    css = (Path(bookpages.paths.BOOK_DIR) / "_static" / "stitchkit.css").read_text()
    assert all(f".{c}" in css for c in GLANCE_CLASS.split() if c.startswith("sk-"))
    old = (":::{admonition} Results at a glance (scale demo)\n:class: tip\n| claim | paper | ours | verdict |\n"
           "|---|---|---|---|\n| t | p | o | {bdg-success}`reproduced` |\n:::")
    rest = "\n\n" + provenance_banner(res)  # a page rendered when the boxes were one cell
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# T"),
                                         nbformat.v4.new_markdown_cell(old + rest)])
    pages.refresh_boxes(nb, res)
    assert nb.cells[1].source == page_boxes(res) and nb.cells[1].source.startswith(box)  # re-rendered
    assert "Run provenance" not in nb.cells[1].source  # the provenance and rerun boxes: a cell of their own
    assert nb.cells[2].metadata["tags"] == [pages.RUN_TAG] and nb.cells[2].source == pages.run_boxes(res)
    pages.refresh_boxes(nb, res)
    assert nb.cells[1].source == page_boxes(res) and len(nb.cells) == 3  # idempotent
    run = nb.cells[2].source
    assert run.startswith("```{admonition} Run provenance: the demo run of") and ":class: note dropdown\n" in run
    assert "# demo: 2 CPU cores; measured 5 s as run on cpu" in run  # a measured time
    assert "# smoke: tiny networks; assesses no claim; not timed for this page yet" in run
    # the claims table's cell is tagged (tag_sk-claims on the page), once
    from stitchkit.book.pages import CLAIMS_TAG, tag_claims_table

    nb.cells.append(nbformat.v4.new_code_cell("run.save()\nrun.claims_table()"))
    assert tag_claims_table(nb) and not tag_claims_table(nb)
    assert nb.cells[-1].metadata["tags"] == [CLAIMS_TAG] and f".tag_{CLAIMS_TAG}" in css
    # its output is re-rendered from the results file: one block per claim with its badge
    pages.refresh_claims(nb, res)
    html = nb.cells[-1].outputs[0]["data"]["text/html"]
    assert 'class="sk-claims-detail"' in html and "reproduced · demo" in html and ".sk-claims-detail" in css
    pages.refresh_claims(nb, res)
    assert nb.cells[-1].outputs[0]["data"]["text/html"] == html and len(nb.cells[-1].outputs) == 1


def test_a_long_value_is_shortened_in_the_glance_box_and_kept_whole_in_its_fold():
    """Issue 64: the verdicts at a glance stay compact. A long "ours" text shows its first part and
    the part with the judged interval; the rest is marked "…" and the whole text is in the fold."""
    from stitchkit.book.pages import GLANCE_FULL, GLANCE_WHY, OURS_SHORT, ours_head, result_box

    long = ("max 3.47 [2.79, 4.22] points (at block2), mean 2.01; raw penalty max 3.14; "
            "with the network-to-network variance 3.47 [1.66, 5.30] points")
    claim = {"text": "t", "paper": "p", "ours": long, "verdict": "inconclusive at this scale", "scale": "demo",
             "value": 3.47, "low": 1.6648, "high": 5.3027, "reason": "within noise"}
    assert ours_head(claim) == ("max 3.47 [2.79, 4.22] points (at block2), mean 2.01; …; "
                                "with the network-to-network variance 3.47 [1.66, 5.30] points")
    # the judged interval in the first part: the rest goes; a "; " inside brackets splits nothing
    first = {**claim, "low": 2.79, "high": 4.22}
    assert ours_head(first) == "max 3.47 [2.79, 4.22] points (at block2), mean 2.01; …"
    inner = {**claim, "ours": "94.44 [70.52, 100.00] % of 18 (ties within noise identified; strict rule 50.00%)" * 2}
    assert len(inner["ours"]) > OURS_SHORT and ours_head(inner) == inner["ours"]
    short = {**claim, "ours": "18.75% vs 25.00%; difference -6.25 [-6.25, 0.00] points"}
    assert ours_head(short) == short["ours"]
    box = result_box({"id": "B-F2A", "scale": "demo", "claims": [claim]})
    assert f"**ours** {ours_head(claim)} · **paper** p" in box
    assert f":::{{dropdown}} {GLANCE_WHY}{GLANCE_FULL}\n" in box and f"*ours in full:* {long}" in box
    assert GLANCE_FULL not in result_box({"id": "B-F2A", "scale": "demo", "claims": [short]})


def test_glossary_terms_link_at_first_use_only_in_prose():
    from stitchkit.book.pages import link_terms

    seen = set()
    text = ("The sender's `stem` and $x_{cut}$ at a cut; the stitching penalty in points at six stitch points.\n"
            "# A heading with a receiver\n```{glue:figure} f\n:alt: a receiver\n```\n"
            "Receivers, a [stitch](http://x), {doc}`B-F2A`, and another sender.")
    out = link_terms(text, seen)
    assert out.count("{term}`sender`") == 1 and "another sender." in out  # first use only
    assert "`stem`" in out and "$x_{cut}$" in out and "{term}`cut`" in out  # code and maths untouched
    assert "{term}`stitching penalty <penalty>`" in out and "{term}`points`" in out
    assert "stitch points" in out  # "points" there means cuts, not percentage points
    assert "# A heading with a receiver" in out and ":alt: a receiver" in out  # headings, directives untouched
    assert "{term}`Receivers <receiver>`" in out and "[stitch](http://x)" in out
    assert link_terms(out, set()) == out  # idempotent


def test_cost_page_uses_gpu_throughput(book):
    """Where ``make bench`` ran on a GPU, the Cost page and the part page turn the measured
    stitch-grid throughput into projected GPU-hours (work / rate)."""
    from stitchkit.experiments.hernandez import all_layers

    bench = book.parent / "benchmarks"
    bench.mkdir(exist_ok=True)
    gpu = {"date": "2026-11-22T15:29:06", "device": "NVIDIA H100 80GB HBM3", "precision": "bf16", "rows": [],
           "paper_throughput": [{"run": "H-F2", "setting": "R1111 -> R2222", "stitches": 9, "seconds": 30.0,
                                 "image_passes_per_second": 50_000.0}]}
    (bench / "results-gpu.json").write_text(json.dumps(gpu))
    bookpages.write_pages(book, toc=book.parent / "_toc.yml")
    cost = (book / "cost.md").read_text()
    hours = all_layers.paper_work()["image_passes"] / 50_000 / 3600
    assert "50,000 image passes/s" in cost and f"| {hours:.1f} |" in cost and "NVIDIA H100 80GB HBM3" in cost
    assert "the measured column is empty" not in cost
    assert f"{hours:.1f} GPU-hours" in (book / "hernandez" / "index.md").read_text()


def test_empty_cache_estimate_counts_shared_entries_once(tmp_path):
    def page(fid, wall, cache=None):
        res = fake_results(fid, "demo", [], wall)
        if cache is not None:
            res["provenance"]["cache"] = cache
        return catalogue.Page(fid, "bansal", res, f"bansal/{fid}")

    # B-F2A trained model m (100 s) and stitch s (10 s) in a 130 s run; B-F5 found both in the
    # cache and added 20 s of its own; B-F4 predates the record.
    pages = [page("B-F2A", 130.0, {"new_seconds": 110.0, "cached_seconds": 0.0, "entries": {"m": 100.0, "s": 10.0}}),
             page("B-F5", 20.0, {"new_seconds": 0.0, "cached_seconds": 110.0, "entries": {"m": 100.0, "s": 10.0}}),
             page("B-F4", 7.0)]
    seconds, missing = catalogue.empty_cache_seconds(pages)
    assert seconds == pytest.approx(20.0 + 20.0 + 110.0 + 7.0) and missing == 1
    # B-F2A then B-F5 in one chain from an empty cache: everything they used was computed by them
    assert catalogue.ran_from_empty_cache(pages[:2]) and not catalogue.ran_from_empty_cache(pages)
    assert not catalogue.ran_from_empty_cache(pages[1:2])  # B-F5 alone found everything in the cache
    # a page that read entries recording no compute time makes the estimate a lower bound
    unknown = page("B-F6", 5.0, {"new_seconds": 0.0, "cached_seconds": 0.0, "entries": {}, "unrecorded": 3})
    assert catalogue.empty_cache_seconds(pages[:2] + [unknown]) == (pytest.approx(155.0), 1)
    assert "at least" in cost.budget_text(pages[:2] + [unknown], 45, "this part")
    text = cost.budget_text(pages[:2], 45, "this part")
    assert "measurement, not an estimate" in text and "2.5 min as run" in text and "0.1× the budget" in text
    # the bounds of the networks' re-base (2x the book before it), as run and from an empty cache
    text = cost.rebase_text(pages[:2])
    assert "as run, 2.5 min of 730.4 min (0.00× the bound)" in text
    assert "from an empty cache, 2.5 min of 1800.6 min" in text
    assert "from an empty cache, at least" in cost.rebase_text(pages[:2] + [unknown])


def test_a_page_behind_its_notebook_or_the_library_is_marked(book, tmp_path, monkeypatch):
    """Issue 48: a page is behind when its notebook changed, or a library module its run imported."""
    from stitchkit.book import pages
    from stitchkit.registry import staleness

    notebooks = tmp_path / "notebooks"
    notebooks.mkdir()
    src = notebooks / "B-F2A.py"
    src.write_text("# %%\nx = 1\n")
    res = book / "bansal" / "B-F2A.results.json"
    monkeypatch.setattr(bookpages.paths, "NOTEBOOKS_DIR", notebooks)
    module = "stitchkit/verdicts/noise.py"
    here = staleness.file_hash(bookpages.paths.REPO_ROOT / module)
    for notebook, library, behind in ((catalogue.source_hash(src), here, None),
                                      ("0" * 64, here, "notebook changed since the run"),
                                      (catalogue.source_hash(src), "0" * 64, "library changed since the run: verdicts/noise.py")):
        res.write_text(json.dumps({**json.loads(res.read_text()), "source_sha256": notebook,
                                   "library_sha256": {module: library}}))
        page = next(p for p in catalogue.load_pages(book) if p.id == "B-F2A")
        assert page.behind() == behind
        assert (f"**Behind the code**: {behind}" in pages.provenance_banner(page.results)) is bool(behind)
        bookpages.write_pages(book, toc=book.parent / "_toc.yml")
        text = (book / "bansal" / "index.md").read_text()
        assert ("(behind the code)" in text) is bool(behind) and ("*Behind the code* (B-F2A)" in text) is bool(behind)


def glossary_terms() -> set[str]:
    """Every term of the book's glossary (the unindented lines of its glossary blocks)."""
    text = (Path(bookpages.paths.BOOK_DIR) / "glossary.md").read_text()
    terms = set()
    for block in re.findall(r"```\{glossary\}\n(.*?)```", text, flags=re.S):
        terms |= {ln.strip() for ln in block.splitlines() if ln.strip() and not ln.startswith(" ")}
    return terms


def test_the_glossary_covers_every_acronym_of_the_verdicts():
    """Every acronym or model name a claim, its criterion or its values use on the scorecard and
    the pages' glance boxes (ResNet-18 and ResNets count as ResNet) is a glossary term. A page's
    ID (B-F2A, S-F1B: a reference to a page, not a term) is not an acronym."""
    terms = glossary_terms()
    missing = set()
    for page in catalogue.load_pages():
        for c in page.results.get("claims", []):
            for k in ("text", "paper", "ours", "criterion"):
                text = re.sub(r"\b[BHSJX]-[A-Z]?[0-9][0-9A-Z.]*", "", str(c.get(k, "")))
                for word in re.findall(r"\b[A-Z][A-Za-z0-9]*[A-Z][A-Za-z0-9-]*\b|\b[A-Z]{2,}\b", text):
                    stem = word.split("-")[0]
                    if stem not in terms and stem.removesuffix("s") not in terms:
                        missing.add((word, page.id))
    assert not missing, f"acronyms missing from book/glossary.md: {sorted(missing)}"
    assert {"CKA", "AUROC", "OOD", "self-stitch control", "gpu"} <= terms


def test_the_scorecard_states_how_well_trained_each_scales_networks_are():
    from stitchkit.book.bookpages import network_accuracies, scale_notes

    def page(fid, scale, nets):
        prov = {} if nets is None else {"networks": nets}
        return catalogue.Page(fid, "bansal", {"id": fid, "scale": scale, "provenance": prov, "claims": []}, None)

    def net(key, acc, trained=True, data="cifar10", **fields):
        return {"key": key, "accuracy": acc, "trained": trained, "data": data, "train_size": None, "labels": "none",
                "stop": 1.0, **fields}

    # on CIFAR-10 the medians are over the Networks page's: all 50k clean images, to the end of the schedule
    pages = [page("B-F2A", "demo", [net("a", 0.55), net("b", 0.66), net("r", 0.1, trained=False),
                                    net("noisy", 0.3, labels="random"), net("few", 0.5, train_size=5000),
                                    net("early", 0.4, stop=0.5), {"key": "old", "accuracy": 0.2, "trained": True,
                                                                  "data": "cifar10"}]),
             page("B-F4", "demo", [net("a", 0.55), net("c", 0.61)]), page("B-F7", "demo", None),
             page("S-4.2", "demo", [net("m", 0.98, data="mnist_grey3"), net("d", 0.9, data="cmnist_digit")]),
             page("H-F2", "gpu", [net("d", 0.93)])]
    acc = network_accuracies(pages)
    by_data, recorded, total = acc["demo"]
    assert (recorded, total) == (3, 4)
    assert by_data["CIFAR-10"] == pytest.approx([55.0, 61.0, 66.0])  # shared networks once, untrained left out
    assert by_data["MNIST sets"] == pytest.approx([90.0, 98.0])  # MNIST and its derived sets, apart from CIFAR-10
    text = scale_notes([{"scale": "demo"}, {"scale": "gpu"}], acc)
    assert ("CIFAR-10 (all 50,000 clean images, to the end of the schedule) 55-66% (median 61%, 3 networks); MNIST "
            "sets 90-98% (median 94%, 2 networks); recorded by 3 of its 4 pages") in text
    assert "schedule) 93-93%" in text and scale_notes([{"scale": "demo"}]).count("test accuracy") == 0


def test_the_cost_page_counts_the_gpu_runs_the_pages_not_yet_current_need(monkeypatch):
    """Issue 47: each gpu page's time (its run where the book shows one at gpu, else its estimate),
    in the batch's priority order, and the GPU runs the rest need, packed one page after another."""
    from stitchkit.book import cost, gpu_estimates
    from stitchkit.book.catalogue import Page
    from stitchkit.registry import figures

    monkeypatch.setitem(figures.OPTIONAL, "gpu", ("B-F5", "B-F8", "H-F2", "J-F2"))
    monkeypatch.setattr(gpu_estimates, "ESTIMATES", {"gpu": {"B-F5": 400.0, "B-F8": 300.0, "H-F2": 1400.0,
                                                             "J-F2": 4000.0}})
    shown = Page("H-F2", "hernandez", {"id": "H-F2", "scale": "gpu", "provenance": {"wall_seconds": 300.0}},
                 "hernandez/H-F2")
    beside = Page("B-F8", "bansal", {"id": "B-F8", "scale": "gpu", "provenance": {"wall_seconds": 9.0}},
                  "bansal/B-F8", shown=False)  # another scale's verdicts kept beside a page: not the page
    rows, text = cost.gpu_plan([shown, beside])
    assert [r[0].split("`")[1].split(" ")[0] if "{doc}" in r[0] else r[0] for r in rows] == ["H-F2", "B-F8", "J-F2",
                                                                                              "B-F5"]
    assert rows[0][1:] == ["5.0 min", "5.0 min", "current"] and rows[1][1:] == ["5.0 min", "-", "not run"]
    # B-F8 (300 s) opens a run, J-F2 is beyond one, B-F5 (400 s) does not fit the 250 s left: a second
    assert "fill 2 runs of up to" in text and "(J-F2) take longer than that on one GPU" in text
    assert "loan" not in text and "session" not in text  # no workplace logistics on a reader's page (issue 64)


def test_a_rerun_that_moves_results_keeps_the_run_it_replaced_and_its_page_shows_it(tmp_path, capsys):
    """A re-run that does not reproduce the run it replaces keeps, in its provenance, when that run
    was made, how many values changed, each verdict that moved and each network trained again to
    another accuracy; the page shows them in its provenance banner and under the moved claim. A
    later re-run that reproduces it keeps them."""
    from stitchkit.book import execution

    net = {"key": "n0", "model": "preact_resnet18", "seed": 0, "trained": True}
    before = {"id": "B-F5", "scale": "demo", "numbers": {"x": 1.0},
              "provenance": {"commit": "aaa", "date": "2026-11-27T10:00", "device": "cpu", "wall_seconds": 5.0,
                             "networks": [{**net, "accuracy": 0.6461}]},
              "claims": [{"key": "k1", "text": "moves", "paper": "p", "ours": "1.0 [0.5, 1.5]",
                          "verdict": "inconclusive at this scale", "scale": "demo"},
                         {"key": "k2", "text": "stays", "paper": "p", "ours": "2", "verdict": "reproduced",
                          "scale": "demo"}]}
    after = {**before, "numbers": {"x": 2.0},
             "provenance": {**before["provenance"], "commit": "bbb", "date": "2026-11-28T10:00",
                            "networks": [{**net, "accuracy": 0.6527}]},
             "claims": [{**before["claims"][0], "ours": "2.0 [1.6, 2.4]", "verdict": "reproduced"}, before["claims"][1]]}
    path = tmp_path / "B-F5.results.json"
    path.write_text(json.dumps(after))
    execution._compare_rerun("B-F5", before, path)
    assert "changed 3 value(s) of the run it replaces and 1 verdict(s)" in capsys.readouterr().out
    res = json.loads(path.read_text())
    prev = res["provenance"]["previous_run"]
    assert prev == {"commit": "aaa", "date": "2026-11-27T10:00", "device": "cpu", "changed": 3,
                    "claims": {"k1": {"verdict": "inconclusive at this scale", "ours": "1.0 [0.5, 1.5]"}},
                    "networks": [{"model": "preact_resnet18", "seed": 0, "before": 0.6461, "after": 0.6527}]}
    banner = pages.provenance_banner(res)
    assert ("**Re-run**: this run replaced one made on 2026-11-27 at commit `aaa` on cpu, and changed 3 of its values; "
            "verdicts that moved: *moves* inconclusive at this scale → reproduced.") in banner
    assert "preact_resnet18 seed 0 64.61% → 65.27%" in banner
    box = pages.result_box(res)
    assert box.count("*in the run this one replaced (2026-11-27):*") == 1
    assert box.index("*in the run this one replaced") > box.index("moves") and "1.0 [0.5, 1.5]" in box
    # a re-run that reproduces this one bit for bit keeps what it replaced
    again = {**res, "provenance": {**after["provenance"], "date": "2026-11-29T10:00"}}
    path.write_text(json.dumps(again))
    execution._compare_rerun("B-F5", res, path)
    assert json.loads(path.read_text())["provenance"]["previous_run"] == prev
    # a page without one says nothing of it
    assert "**Re-run**" not in pages.provenance_banner(before)


def test_a_zoo_grid_names_the_verdict_a_replaced_run_gave():
    """On a page whose claims are made zoo by zoo (the glance box is a grid), a verdict a re-run
    moved names the earlier one in its cell; the others do not."""
    claim = {"text": "Bansal et al.: ResNet-18 seeds 0, 1: h", "value": 0.008, "low": -0.05, "high": 0.04, "unit": "",
             "scale": "demo"}
    res = {"id": "X-1", "scale": "demo",
           "claims": [{**claim, "key": "h_bansal", "verdict": "inconclusive at this scale"},
                      {**claim, "text": "Hernandez et al.: R2222, R1111: h", "key": "h_hernandez",
                       "verdict": "inconclusive at this scale"}],
           "provenance": {"previous_run": {"claims": {"h_bansal": {"verdict": "reproduced", "ours": "0.06"}}}}}
    box = pages.result_box(res)
    assert pages.GLANCE_GRID_CLASS in box
    assert box.count("(the replaced run: reproduced)") == 1
    assert "(the replaced run:" not in pages.result_box({**res, "provenance": {}})


def test_a_claim_made_on_two_pages_is_counted_once():
    """Issue 68, finding 7: B-F5's random_early_stitch is B-F2A's random_early (the same stitches),
    and the scorecard counted it twice."""
    from stitchkit.book import bookpages
    from stitchkit.book.catalogue import Page

    def page(fid, claims):
        return Page(fid, "bansal", {"id": fid, "scale": "demo", "claims": claims, "provenance": {}}, f"bansal/{fid}")

    a = page("B-F2A", [{"key": "random_early", "text": "t", "verdict": "reproduced"}])
    b = page("B-F5", [{"key": "random_early_stitch", "text": "t", "verdict": "reproduced",
                       "same_as": "B-F2A:random_early"}, {"key": "random_early_cka", "text": "c", "verdict": "reproduced"}])
    records = [r for r in bookpages.rows([a, b]) if r["claim_key"]]
    assert [r["claim_key"] for r in bookpages.counted(records)] == ["random_early", "random_early_cka"]
    assert "the same claim as B-F2A random_early" in next(r for r in records if r["claim_key"] == "random_early_stitch")["superseded"]



# Terms a reader meets on the pages that the glossary must define (issue 64, finding 6): each used
# in the book's prose (a page's markdown) is a glossary term.
DEFINED_TERMS = ("zoo", "self-stitch gain", "relative accuracy", "premise", "Correlated", "Digit", "Colour-only",
                 "triangle", "spot check", "replicate", "amendment", "jackknife", "t interval", "energy detector")


def test_every_term_the_pages_use_is_in_the_glossary():
    import json

    terms = glossary_terms()
    prose = []
    for path in Path(bookpages.paths.BOOK_DIR).glob("*/*.ipynb"):
        nb = json.loads(path.read_text())
        prose += ["".join(c["source"]) for c in nb.get("cells", []) if c.get("cell_type") == "markdown"]
    text = "\n".join(prose)
    used = [t for t in DEFINED_TERMS if re.search(rf"(?<![\w-]){re.escape(t)}(?![\w-])", text, flags=re.I)]
    assert len(used) >= 10, f"the pages use only {used} of the candidate terms: the test reads the wrong text"
    missing = [t for t in used if t not in terms]
    assert not missing, f"terms the pages use that book/glossary.md does not define: {missing}"


def test_the_reproducibility_report_is_computed_from_the_pages(book):
    """Issue 64, item 6: one page in the manner of a reproducibility report (scope, method and
    compute, results in a paragraph, what reproduced readily, what was hard, the deviations),
    every number read from the results files."""
    bookpages.write_pages(book, toc=book.parent / "_toc.yml")
    text = (book / "report.md").read_text()
    for heading in ("## Scope", "## Method and compute", "## Results", "## What reproduced readily",
                    "## What was hard", "## The deviations that matter most"):
        assert heading in text, heading
    records = bookpages.counted(bookpages.rows(catalogue.load_pages(book)))
    claims = [r for r in records if r.get("claim") and r.get("verdict")]
    ours = [r for r in claims if r["part"] != "across"]
    assert f"{len(ours)} of the papers' claims are judged" in text
    reproduced = sum(r["verdict"] == "reproduced" for r in ours)
    assert f"*reproduced* ({reproduced} of {len(ours)})" in text
    assert "report" in (book.parent / "_toc.yml").read_text()


def test_the_networks_page_lists_every_network_and_the_median_of_the_full_clean_ones():
    """Issue 65, item 3: every network the verdicts rest on, with its recipe, data and labels, how
    far through its schedule, its accuracy, time, device and pages; the headline median counts only
    CIFAR-10 networks on all 50k clean images to the end of their schedule."""
    from stitchkit.book.catalogue import Page
    from stitchkit.book.networks_page import full_clean, headline, networks_markdown

    def net(key, acc, **kw):
        return {"key": key, "model": "preact_resnet18", "width": 16, "seed": 0, "data": "cifar10", "train_size": None,
                "epochs": 16, "steps": None, "trained": True, "accuracy": acc, "train_seconds": 600.0,
                "batch_size": 512, "device": "cpu", "precision": "bf16", "labels": "none", "label_noise": 0.0,
                "stop": 1.0, "method": "supervised", "optimizer": "sgd", "lr": 0.2, "schedule": "warmup_cosine",
                "options": {}, **kw}

    nets = [net("a", 0.85), net("b", 0.87), net("c", 0.11, labels="random", label_noise=1.0),
            net("d", 0.70, stop=0.5), net("e", 0.60, train_size=5000), net("f", 0.10, trained=False, epochs=0)]
    old = {k: v for k, v in net("g", 0.5).items() if k not in ("labels", "stop", "method")}
    pages = [Page("B-F2A", "bansal/B-F2A", {"id": "B-F2A", "scale": "demo", "provenance": {"networks": nets}}, None),
             Page("B-F3A", "bansal/B-F3A", {"id": "B-F3A", "scale": "demo", "provenance": {"networks": [nets[0], old]}},
                  None)]
    assert [full_clean(n) for n in nets] == [True, True, False, False, False, False] and full_clean(old) is None
    line = headline(pages)
    assert "median **86.0%** test accuracy (85.0-87.0%, 2 networks)" in line and "1 CIFAR-10 network" in line
    text = networks_markdown(pages)
    assert "100% random labels" in text and "stopped at 50% of its schedule" in text and "5,000 images" in text
    assert "untrained (a control)" in text and "10.0 min on cpu (bf16)" in text
    row_a = next(l for l in text.splitlines() if l.startswith("| `a`"))
    assert "B-F2A" in row_a and "B-F3A" in row_a  # a network several pages share: one row, every page


def test_the_main_figure_moves_under_the_verdicts_and_its_section_links_to_it():
    """Issue 64: a page's first figure follows the boxes that open it; where it stood, a line links
    to it; a second pass changes nothing; a page without a figure is left as it is."""
    import nbformat

    from stitchkit.book.pages import GLANCE_START, MAIN_FIGURE_TAG, figure_first

    fig = "```{glue:figure} penalty\n:name: fig-x-penalty\n:alt: Lines.\n\nCaption, with `code`.\n```"
    second = "```{glue:figure} other\n:name: fig-x-other\n\nAnother.\n```"
    cells = [nbformat.v4.new_markdown_cell("# X-0 · A page"),
             nbformat.v4.new_markdown_cell(GLANCE_START + " (scale demo)\n:class: tip\n- a claim\n:::"),
             nbformat.v4.new_markdown_cell("**Paper.** Someone (2024).\n\n**Overview.** Words."),
             nbformat.v4.new_code_cell("run.figure('penalty', fig)"),
             nbformat.v4.new_markdown_cell("## Penalty per layer\n\nThe penalty below.\n\n" + fig + "\n\nAfter it."),
             nbformat.v4.new_markdown_cell(second)]
    nb = nbformat.v4.new_notebook(cells=cells)
    assert figure_first(nb) is True
    assert nb.cells[2].source == fig and nb.cells[2].metadata["tags"] == [MAIN_FIGURE_TAG]
    assert nb.cells[3].source.startswith("**Paper.**")
    section = nb.cells[5].source
    assert "{glue:figure}" not in section and "{ref}`the figure <fig-x-penalty>`" in section
    assert section.startswith("## Penalty per layer") and section.endswith("After it.")
    assert nb.cells[6].source == second  # only the first figure moves
    before = [c.source for c in nb.cells]
    assert figure_first(nb) is False and [c.source for c in nb.cells] == before
    # the boxes re-rendered above an old order: the figure goes back under them
    nb.cells.insert(1, nb.cells.pop(2))
    assert figure_first(nb) is True and MAIN_FIGURE_TAG in nb.cells[2].metadata["tags"]
    # the folded provenance and rerun commands (refresh_boxes puts them under the verdicts): under the figure
    res = {"id": "B-F2A", "scale": "demo", "provenance": {"commit": "abc", "device": "cpu", "wall_seconds": 5.0},
           "claims": [{"text": "t", "paper": "p", "ours": "o", "verdict": "reproduced", "scale": "demo"}]}
    pages.refresh_boxes(nb, res)
    assert [pages.MAIN_FIGURE_TAG in c.metadata.get("tags", []) for c in nb.cells[1:4]] == [False, False, True]
    assert figure_first(nb) is True and pages.RUN_TAG in nb.cells[3].metadata["tags"]
    assert nb.cells[2].source == fig and nb.cells[4].source.startswith("**Paper.**")
    plain = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# T"),
                                            nbformat.v4.new_markdown_cell(GLANCE_START + " (scale demo)\n:::"),
                                            nbformat.v4.new_markdown_cell("A table page.")])
    assert figure_first(plain) is False
