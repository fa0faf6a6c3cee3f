"""An amendment keeps the verdicts from before it: a claim whose verdict it changed shows both,
on its page's glance box and in the scorecard's rows (issue 46)."""

from __future__ import annotations

import json

from stitchkit.base import paths
from stitchkit.book import amendments
from stitchkit.book.pages import result_box


def _snapshot(book_dir, verdict="inconclusive at this scale"):
    path = amendments.snapshot_path("2026-11-27", book_dir)
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"pages": {"B-F2A": {"demo": {"connected": {
        "verdict": verdict, "value": 2.5, "low": 1.9, "high": 3.2, "unit": "points", "reason": "control failed"}}}}}))
    amendments._load.cache_clear()


def _claim(verdict="reproduced"):
    return {"key": "connected", "text": "t", "ours": "o", "paper": "p", "verdict": verdict, "scale": "demo",
            "controls": []}


def test_a_changed_verdict_shows_the_one_before_the_amendment(tmp_path, monkeypatch):
    _snapshot(tmp_path)
    prior = amendments.changed("B-F2A", _claim(), "demo", tmp_path)
    assert prior["verdict"] == "inconclusive at this scale" and prior["date"] == "2026-11-27"
    assert amendments.describe(prior) == "2.50 [1.90, 3.20] points"
    assert amendments.changed("B-F2A", _claim("inconclusive at this scale"), "demo", tmp_path) is None  # unchanged
    assert amendments.changed("B-F2A", _claim(), "gpu", tmp_path) is None  # another scale: no record
    monkeypatch.setattr(paths, "BOOK_DIR", tmp_path)
    monkeypatch.setattr(amendments, "snapshot_path", lambda date, book_dir=tmp_path: tmp_path / "_static" /
                        f"amendment-{date}.json")
    box = result_box({"id": "B-F2A", "scale": "demo", "claims": [_claim()]})
    assert "*before the amendment of 2026-11-27:*" in box and "2.50 [1.90, 3.20]" in box


def test_the_committed_snapshot_is_read_from_the_results_files_of_its_commit():
    snap = json.loads(amendments.snapshot_path("2026-11-27").read_text())
    assert snap["commit"] == amendments.AMENDMENTS["2026-11-27"][0] == "cd8ff10"
    # 34 pages, every claim of each (H-F2 at gpu and at demo)
    assert len(snap["pages"]) == 34 and set(snap["pages"]["H-F2"]) == {"demo", "gpu"}
    assert snap["pages"]["B-F7"]["demo"]["width_range"]["verdict"] == "not reproduced"
