"""The replication check (issue 68, item 8): re-run a page from an empty cache with other seeds and
tabulate which of its verdicts held.

A page's networks are trained once and cached, so the book's cache hides how much a verdict
depends on one training of them: S-F1C's ``rank_differs`` went from reproduced to not reproduced
when its page was re-run from an empty cache on another machine. ``stitchkit replicate ID`` runs
the page again with ``STITCHKIT_SEED_OFFSET`` set (every trained network's initialisation and
training seeds shifted by the offset: :func:`stitchkit.networks.with_seed_offset`), in a cache of
its own (``<cache>/replicate-seeds+<offset>``, empty the first time, so nothing trained with the
pages' own seeds is read in its place), into ``runs/<ID>/<stamp>-<scale>-seeds+<offset>/``, and
writes ``replication.json`` there: per claim, the book's verdict, the replicate's, and whether
it held. The book is touched only with ``--record`` (:func:`record`): the file is then also kept
beside the page's results (``book/<part>/<ID>.replication.json``), and the book's build puts a
"Replication" section on the page from it (:func:`insert_into`), which says so when the page's run
has changed since the replication was compared with it. A page quotes a replication only from
such a file.
"""

from __future__ import annotations

import json
import os
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator, Mapping

from .. import paths
from ..environment import SEED_OFFSET_ENV, seed_offset_from_env
from ..fileio import atomic_write_json, fresh_folder

DEFAULT_OFFSET = 1000  # far from every seed a page uses (0-8 and the replicate networks')


def replicate_cache(offset: int) -> Path:
    """The replication's own artifact cache: beside the main one, never the main one."""
    return paths.cache_root() / f"replicate-seeds+{offset}"


@contextmanager
def _environment(offset: int) -> Iterator[Path]:
    """``STITCHKIT_SEED_OFFSET`` and ``STITCHKIT_CACHE`` set for the run (a papermill kernel
    inherits them), restored after it."""
    cache = replicate_cache(offset)
    saved = {k: os.environ.get(k) for k in (SEED_OFFSET_ENV, "STITCHKIT_CACHE")}
    os.environ[SEED_OFFSET_ENV] = str(offset)
    os.environ["STITCHKIT_CACHE"] = str(cache)
    try:
        seed_offset_from_env()  # the value as the run will read it
        yield cache
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def book_results(figure_id: str, book_dir: Path = paths.BOOK_DIR) -> dict[str, Any] | None:
    """The committed run's results of ``figure_id`` (None when the book has none)."""
    found = sorted(book_dir.glob(f"**/{figure_id}.results.json"))
    return json.loads(found[0].read_text()) if found else None


def agreement(book: Mapping[str, Any] | None, replicate: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Per claim of the replicate run: its verdict beside the book's (same key), and whether it
    held (the same verdict); a claim the book's run lacks, or one at another scale, says so."""
    ours = {c["key"]: c for c in (book or {}).get("claims", [])}
    same_scale = bool(book) and book.get("scale") == replicate.get("scale")
    rows = []
    for c in replicate.get("claims", []):
        b = ours.get(c["key"])
        rows.append({"claim": c["key"], "text": c.get("text", ""),
                     "book": None if b is None else b["verdict"], "replicate": c["verdict"],
                     "held": None if b is None or not same_scale else b["verdict"] == c["verdict"],
                     "book scale": None if book is None else book.get("scale")})
    return rows


def replicate(figure_id: str, scale: str, offset: int = DEFAULT_OFFSET, params: Mapping[str, Any] | None = None,
              *, out_dir: Path | None = None, progress: bool = True,
              record_in_book: bool = False) -> tuple[Path, list[dict[str, Any]]]:
    """Run ``figure_id`` at ``scale`` with every network's seeds shifted by ``offset`` (≥ 1), from its
    own cache, and write ``replication.json`` (the agreement with the book's run) beside it; with
    ``record_in_book``, keep it beside the page's results too (:func:`record`)."""
    from .execution import check_run, get_notebook, run_notebook

    if not isinstance(offset, int) or offset < 1:
        raise ValueError(f"--offset must be a whole number >= 1 (0 would be the pages' own seeds), got {offset!r}")
    check_run(get_notebook(figure_id), scale, params)  # bad input refused before the folder or any compute
    out_dir = out_dir or fresh_folder(paths.RUNS_DIR / figure_id,
                                      f"{_stamp()}-{scale}-seeds+{offset}")
    with _environment(offset) as cache:
        out, results = run_notebook(figure_id, scale, params, out_dir=out_dir, progress=progress)
    book = book_results(figure_id)
    rows = agreement(book, results)
    decided = [r for r in rows if r["held"] is not None]
    doc = {"id": figure_id, "scale": scale, "seed_offset": offset, "cache": str(cache),
           "book_scale": None if book is None else book.get("scale"),
           "book_date": None if book is None else (book.get("provenance") or {}).get("date"),
           "book_source_sha256": None if book is None else book.get("source_sha256"),
           "date": (results.get("provenance") or {}).get("date"),
           "commit": (results.get("provenance") or {}).get("commit"),
           "wall_seconds": results.get("wall_seconds"),
           "held": sum(bool(r["held"]) for r in decided), "compared": len(decided), "claims": rows}
    atomic_write_json(out.parent / "replication.json", doc)
    if record_in_book:
        record(figure_id, doc)
    return out, rows


def record_path(figure_id: str, book_dir: Path = paths.BOOK_DIR) -> Path | None:
    """Where a page's replication is kept: beside its results file (None when the book has no run)."""
    found = sorted(Path(book_dir).glob(f"**/{figure_id}.results.json"))
    return found[0].with_name(f"{figure_id}.replication.json") if found else None


def record(figure_id: str, doc: Mapping[str, Any], book_dir: Path = paths.BOOK_DIR) -> Path:
    """Keep a replication beside the page's results (atomically), for the page to show."""
    path = record_path(figure_id, book_dir)
    if path is None:
        raise ValueError(f"{figure_id} has no run in the book to keep a replication beside; run it first "
                         f"(stitchkit run {figure_id} --scale ...)")
    atomic_write_json(path, dict(doc))
    return path


SECTION_TAG = "replication"


def section(doc: Mapping[str, Any], results: Mapping[str, Any]) -> str:
    """The page's "Replication" section (markdown) from a kept replication ``doc``: how many verdicts
    held, claim by claim, and a warning when the page's run is not the one it was compared with."""
    from .pages import escape, table

    held, compared = doc.get("held", 0), doc.get("compared", 0)
    date = str(doc.get("date") or "?")[:10]
    lines = ["## Replication: other seeds, an empty cache", "",
             f"This page was run again at `{doc.get('scale')}` on {date} with every trained network's seeds "
             f"shifted by {doc.get('seed_offset')} (`stitchkit replicate {doc.get('id')} --scale {doc.get('scale')}`),"
             " from an empty cache of its own, so that no network of the page's run was reused. "
             f"**{held} of {compared} verdicts held.**"]
    same = (doc.get("book_date") == (results.get("provenance") or {}).get("date")
            and doc.get("book_source_sha256") == results.get("source_sha256"))
    if not same:
        lines += ["", ":::{warning}\nThe replication was compared with an earlier run of this page "
                  f"(of {str(doc.get('book_date') or '?')[:10]}), not the one shown here: the agreement below is "
                  "that run's, until the replication is run again.\n:::"]
    body = [[escape(r.get("text") or r["claim"]), f"`{r['claim']}`", escape(r.get("book") or "-"),
             escape(r["replicate"]), {True: "held", False: "**changed**", None: "not comparable"}[r["held"]]]
            for r in doc.get("claims", [])]
    lines += ["", table(["claim", "key", "this page", "other seeds", ""], body)]
    return "\n".join(lines)


def insert_into(nb, figure_id: str, results: Mapping[str, Any], book_dir: Path = paths.BOOK_DIR) -> bool:
    """Put (or refresh) the page's "Replication" section in an executed notebook ``nb`` from its kept
    replication (:func:`record`), before its "Deviations from the paper" section (else at the end);
    remove it when none is kept. True if it changed."""
    import nbformat

    path = record_path(figure_id, book_dir)
    doc = json.loads(path.read_text()) if path is not None and path.exists() else None
    at = next((i for i, c in enumerate(nb.cells) if SECTION_TAG in c.get("metadata", {}).get("tags", [])), None)
    if doc is None:
        if at is None:
            return False
        del nb.cells[at]
        return True
    text = section(doc, results)
    if at is not None:
        if nb.cells[at].source == text:
            return False
        nb.cells[at].source = text
        return True
    cell = nbformat.v4.new_markdown_cell(text, metadata={"tags": [SECTION_TAG]})
    where = next((i for i, c in enumerate(nb.cells)
                  if c.cell_type == "markdown" and c.source.lstrip().startswith("## Deviations")), len(nb.cells))
    nb.cells.insert(where, cell)
    return True


def _stamp() -> str:
    import datetime as dt

    return dt.datetime.now().strftime("%Y%m%d-%H%M%S")


def summary(rows: list[dict[str, Any]]) -> str:
    """The agreement as lines for the terminal."""
    decided = [r for r in rows if r["held"] is not None]
    lines = [f"{sum(bool(r['held']) for r in decided)} of {len(decided)} verdicts held"
             + ("" if len(decided) == len(rows) else f" ({len(rows) - len(decided)} not comparable: no book run "
                                                     "of the claim at this scale)")]
    for r in rows:
        mark = "held" if r["held"] else ("CHANGED" if r["held"] is False else "n/a")
        lines.append(f"  [{mark}] {r['claim']}: book {r['book'] or '-'} -> replicate {r['replicate']}")
    return "\n".join(lines)


__all__ = ["DEFAULT_OFFSET", "SECTION_TAG", "agreement", "book_results", "insert_into", "record", "record_path",
           "replicate", "replicate_cache", "section", "summary"]
