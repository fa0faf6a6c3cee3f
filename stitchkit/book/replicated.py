"""A page's kept replication (``book/<part>/<ID>.replication.json``, written by ``stitchkit replicate
--record``: :mod:`stitchkit.book.replication`), read by the book's build for the page's
"Replication" section (:func:`stitchkit.book.pages.insert_replication`). Apart from
:mod:`.replication` so that the pages' build does not import the execution of notebooks.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping

from ..base import paths
from ..base.fileio import atomic_write_json


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


def load(figure_id: str, book_dir: Path = paths.BOOK_DIR) -> dict[str, Any] | None:
    """The page's kept replication, or None."""
    path = record_path(figure_id, book_dir)
    return json.loads(path.read_text()) if path is not None and path.exists() else None


__all__ = ["load", "record", "record_path"]
