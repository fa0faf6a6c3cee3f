"""Sweep wiring: grid expansion, result collection, Dask submission (notebook execution stubbed)."""

import pandas as pd
import pytest

from stitchkit import execution


def fake_run(figure_id, scale, params, out_dir=None, progress=True):
    value = params["width"] * 10 + (1 if params["frozen_bn"] == "train" else 0)
    results = {"numbers": {"score": value}, "claims": [{"key": "c", "verdict": "reproduced"}],
               "provenance": {"wall_seconds": 1.0}}
    return out_dir / f"{figure_id}.ipynb", results


def test_local_sweep_collects_one_row_per_run(tmp_path, monkeypatch):
    monkeypatch.setattr(execution, "run_notebook", fake_run)
    table = execution.sweep("B-F2A", "smoke", {"width": [4, 8], "frozen_bn": ["eval", "train"]}, out_dir=tmp_path)
    assert len(table) == 4 and list(table.score) == [40, 41, 80, 81]
    assert set(table["claim.c"]) == {"reproduced"}
    assert pd.read_csv(tmp_path / "results.csv").shape == table.shape
    assert table.attrs["csv"] == str(tmp_path / "results.csv")
    lines = execution.sweep_summary(table, ["width", "frozen_bn"]).splitlines()
    assert lines[0].split() == ["width", "frozen_bn", "c", "wall", "status"]  # no numbers: they are in the CSV
    assert lines[1].split() == ["4", "eval", "yes", "1", "s", "ok"] and len(lines) == 5


def test_sweep_refuses_unknown_parameters_before_running(tmp_path, monkeypatch):
    monkeypatch.setattr(execution, "run_notebook", lambda *a, **k: pytest.fail("ran"))
    with pytest.raises(ValueError, match="depth for B-F2A; valid: width, model_epochs"):
        execution.sweep("B-F2A", "smoke", {"depth": [1, 2]}, out_dir=tmp_path)


def test_dask_sweep_on_an_in_process_cluster(tmp_path, monkeypatch):
    distributed = pytest.importorskip("distributed")
    monkeypatch.setattr(execution, "run_notebook", fake_run)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None) as cluster:
        table = execution.sweep("B-F2A", "smoke", {"width": [4, 8], "frozen_bn": ["eval"]}, out_dir=tmp_path,
                                dask_address=cluster.scheduler_address)
    assert list(table.score) == [40, 80]
