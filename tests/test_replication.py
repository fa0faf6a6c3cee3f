"""The replication check (issue 68, item 8): other seeds, a cache of its own, the agreement table."""

from __future__ import annotations

import json
import os

import pytest

from stitchkit.base import environment
from stitchkit.book import pages, replicated, replication
from stitchkit.networks import network
from stitchkit.networks.network import ModelSpec
from stitchkit.networks.train import TrainConfig


def test_a_seed_offset_shifts_every_seed_of_a_network_and_only_when_set(monkeypatch):
    spec = ModelSpec("resnet10", 4, seed=3, train=TrainConfig(epochs=1, seed=3),
                     probe=TrainConfig(epochs=1, seed=5), method="simclr")
    monkeypatch.delenv(environment.SEED_OFFSET_ENV, raising=False)
    assert network.with_seed_offset(spec) is spec
    monkeypatch.setenv(environment.SEED_OFFSET_ENV, "1000")
    moved = network.with_seed_offset(spec)
    assert (moved.seed, moved.train.seed, moved.probe.seed) == (1003, 1003, 1005)
    assert moved.width == spec.width and moved.train.epochs == spec.train.epochs


@pytest.mark.parametrize("raw", ["-1", "x", "1.5", "10000000"])
def test_a_bad_seed_offset_is_refused_naming_the_value(monkeypatch, raw):
    monkeypatch.setenv(environment.SEED_OFFSET_ENV, raw)
    with pytest.raises(ValueError, match=f"STITCHKIT_SEED_OFFSET={raw!r} is invalid"):
        environment.check_environment()


def test_the_agreement_table_compares_verdicts_at_the_same_scale_only():
    book = {"scale": "demo", "claims": [{"key": "a", "verdict": "reproduced"}, {"key": "b", "verdict": "reproduced"}]}
    rep = {"scale": "demo", "claims": [{"key": "a", "verdict": "reproduced", "text": "A"},
                                       {"key": "b", "verdict": "not reproduced", "text": "B"},
                                       {"key": "c", "verdict": "reproduced", "text": "C"}]}
    rows = replication.agreement(book, rep)
    assert [r["held"] for r in rows] == [True, False, None]
    assert "1 of 2 verdicts held" in replication.summary(rows) and "CHANGED" in replication.summary(rows)
    assert all(r["held"] is None for r in replication.agreement({**book, "scale": "gpu"}, rep))
    assert all(r["held"] is None for r in replication.agreement(None, rep))


def test_a_replication_runs_with_the_offset_in_its_own_cache_and_restores_the_environment(monkeypatch, tmp_path):
    from stitchkit.book import execution

    monkeypatch.setenv("STITCHKIT_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv(environment.SEED_OFFSET_ENV, raising=False)
    seen = {}

    def fake_run(figure_id, scale, params, *, out_dir, progress):
        seen.update(offset=os.environ[environment.SEED_OFFSET_ENV], cache=os.environ["STITCHKIT_CACHE"])
        out = out_dir / f"{figure_id}.ipynb"
        return out, {"scale": scale, "claims": [{"key": "k", "verdict": "reproduced", "text": "t"}]}

    monkeypatch.setattr(execution, "run_notebook", fake_run)
    monkeypatch.setattr(replication, "book_results", lambda fid: {"scale": "smoke", "claims": [
        {"key": "k", "verdict": "not reproduced"}], "provenance": {"date": "2026-12-01"}})
    out, rows = replication.replicate("B-F2A", "smoke", 7, out_dir=tmp_path / "run")
    assert seen == {"offset": "7", "cache": str(tmp_path / "cache" / "replicate-seeds+7")}
    assert environment.SEED_OFFSET_ENV not in os.environ and os.environ["STITCHKIT_CACHE"] == str(tmp_path / "cache")
    record = json.loads((tmp_path / "run" / "replication.json").read_text())
    assert record["seed_offset"] == 7 and record["held"] == 0 and record["compared"] == 1
    assert rows[0]["book"] == "not reproduced" and rows[0]["replicate"] == "reproduced"
    with pytest.raises(ValueError, match="offset must be a whole number >= 1"):
        replication.replicate("B-F2A", "smoke", 0)
    with pytest.raises(ValueError, match="unknown scale|scale"):
        replication.replicate("B-F2A", "huge", 7)


def _doc(**kw):
    base = {"id": "S-F1C", "scale": "demo", "seed_offset": 1000, "date": "2026-12-03T10:00:00",
            "book_date": "2026-12-02T09:00:00", "book_source_sha256": "abc", "held": 1, "compared": 2,
            "claims": [{"claim": "a", "text": "A holds", "book": "reproduced", "replicate": "reproduced", "held": True},
                       {"claim": "b", "text": "B holds", "book": "reproduced", "replicate": "not reproduced",
                        "held": False}]}
    return {**base, **kw}


def test_a_kept_replication_is_shown_on_its_page_and_warns_when_the_page_ran_again(tmp_path):
    import nbformat

    part = tmp_path / "smith"
    part.mkdir()
    results = {"scale": "demo", "source_sha256": "abc", "provenance": {"date": "2026-12-02T09:00:00"}, "claims": []}
    (part / "S-F1C.results.json").write_text(json.dumps(results))
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# S-F1C"),
                                         nbformat.v4.new_markdown_cell("## Deviations from the paper")])
    assert not pages.insert_replication(nb, "S-F1C", results, tmp_path)  # nothing kept: nothing shown
    path = replicated.record("S-F1C", _doc(), tmp_path)
    assert path == part / "S-F1C.replication.json"
    assert pages.insert_replication(nb, "S-F1C", results, tmp_path)
    text = nb.cells[1].source
    assert nb.cells[2].source.startswith("## Deviations") and "**1 of 2 verdicts held.**" in text
    assert "**changed**" in text and "shifted by 1000" in text and "warning" not in text
    assert not pages.insert_replication(nb, "S-F1C", results, tmp_path)  # idempotent
    rerun = {**results, "provenance": {"date": "2026-12-05T09:00:00"}}  # the page ran again since
    assert pages.insert_replication(nb, "S-F1C", rerun, tmp_path)
    assert "compared with an earlier run of this page" in nb.cells[1].source and len(nb.cells) == 3
    path.unlink()  # the record removed: so is the section
    assert pages.insert_replication(nb, "S-F1C", rerun, tmp_path) and len(nb.cells) == 2


def test_a_replication_is_kept_only_beside_a_page_the_book_has(tmp_path):
    with pytest.raises(ValueError, match="S-F1C has no run in the book"):
        replicated.record("S-F1C", _doc(), tmp_path)
