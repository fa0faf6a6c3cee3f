"""The replication check (issue 68, item 8): re-run a page from an empty cache with other seeds and
tabulate which of its verdicts held.

A page's networks are trained once and cached, so the book's cache hides how much a verdict
depends on one training of them: S-F1C's ``rank_differs`` went from reproduced to not reproduced
when its page was re-run from an empty cache on another machine. ``stitchkit replicate ID`` runs
the page again with ``STITCHKIT_SEED_OFFSET`` set (every trained network's initialisation and
training seeds shifted by the offset: :func:`stitchkit.networks.network.with_seed_offset`), in a cache of
its own (``<cache>/replicate-seeds+<offset>``, empty the first time, so nothing trained with the
pages' own seeds is read in its place), into ``runs/<ID>/<stamp>-<scale>-seeds+<offset>/``, and
writes ``replication.json`` there: per claim, the book's verdict, the replicate's, and whether
it held. The book is touched only with ``--record`` (:func:`stitchkit.book.replicated.record`):
the file is then also kept beside the page's results (``book/<part>/<ID>.replication.json``), and
the book's build puts a "Replication" section on the page from it
(:func:`stitchkit.book.pages.insert_replication`), which says so when the page's run has changed
since the replication was compared with it. A page quotes a replication only from
such a file.
"""

from __future__ import annotations

import json
import os
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator, Mapping

from ..base import paths
from ..base.environment import SEED_OFFSET_ENV, seed_offset_from_env
from ..base.fileio import atomic_write_json, fresh_folder

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
    from .execution import check_run, run_notebook
    from .notebooks import get_notebook

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
           "wall_seconds": (results.get("provenance") or {}).get("wall_seconds"),
           "held": sum(bool(r["held"]) for r in decided), "compared": len(decided), "claims": rows}
    atomic_write_json(out.parent / "replication.json", doc)
    if record_in_book:
        from .replicated import record

        record(figure_id, doc)
    return out, rows


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


__all__ = ["DEFAULT_OFFSET", "agreement", "book_results", "replicate", "replicate_cache", "summary"]
