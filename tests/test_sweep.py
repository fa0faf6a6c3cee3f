"""Sweep wiring: grid expansion, result collection, Dask submission (notebook execution stubbed)."""

import pandas as pd
import pytest

from stitchkit.book import execution, runs


def fake_run(figure_id, scale, params, out_dir=None, progress=True):
    value = params["width"] * 10 + (1 if params["frozen_bn"] == "train" else 0)
    results = {"numbers": {"score": value}, "claims": [{"key": "c", "verdict": "reproduced"}],
               "provenance": {"wall_seconds": 1.0}}
    return out_dir / f"{figure_id}.ipynb", results


def test_local_sweep_collects_one_row_per_run(tmp_path, monkeypatch):
    monkeypatch.setattr(execution, "_run_checked", fake_run)
    table = execution.sweep("B-F2A", "smoke", {"width": [4, 8], "frozen_bn": ["eval", "train"]}, out_dir=tmp_path)
    assert len(table) == 4 and list(table.score) == [40, 41, 80, 81]
    assert set(table["claim.c"]) == {"reproduced"}
    assert pd.read_csv(tmp_path / "results.csv").shape == table.shape
    assert table.attrs["csv"] == str(tmp_path / "results.csv")
    lines = runs.sweep_summary(table, ["width", "frozen_bn"]).splitlines()
    assert lines[0].split() == ["width", "frozen_bn", "c", "wall", "status"]  # no numbers: they are in the CSV
    assert lines[1].split() == ["4", "eval", "yes", "1", "s", "ok"] and len(lines) == 5


def test_sweep_refuses_unknown_parameters_before_running(tmp_path, monkeypatch):
    monkeypatch.setattr(execution, "_run_checked", lambda *a, **k: pytest.fail("ran"))
    with pytest.raises(ValueError, match="depth for B-F2A; valid: width, model_epochs"):
        execution.sweep("B-F2A", "smoke", {"depth": [1, 2]}, out_dir=tmp_path)


def test_dask_sweep_on_an_in_process_cluster(tmp_path, monkeypatch):
    distributed = pytest.importorskip("distributed")
    monkeypatch.setattr(execution, "_run_checked", fake_run)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None) as cluster:
        table = execution.sweep("B-F2A", "smoke", {"width": [4, 8], "frozen_bn": ["eval"]}, out_dir=tmp_path,
                                dask_address=cluster.scheduler_address)
    assert list(table.score) == [40, 80]


def test_each_value_is_validated_once_per_run_and_once_per_sweep_point(tmp_path, monkeypatch):
    """Issue 48: the command line checks a run's values once, before compute, and nothing
    downstream checks again (the kernel checks once more what it is handed, in its own process)."""
    from stitchkit import cli
    from stitchkit.registry import scales

    calls = []
    validate = scales.validate

    def counting(cls, name, value):
        calls.append(name)
        return validate(cls, name, value)

    def run(figure_id, scale, params, out_dir=None, progress=True):
        out, results = fake_run(figure_id, scale, params, out_dir, progress)
        return out, {**results, "claims": [{"key": "c", "verdict": "reproduced", "text": "t", "paper": "p", "ours": "o"}]}

    monkeypatch.setattr(scales, "validate", counting)
    monkeypatch.setattr(execution, "_run_checked", run)
    assert cli.main(["run", "B-F2A", "--scale", "smoke", "-p", "width", "4", "-p", "frozen_bn", "eval",
                     "--out", str(tmp_path / "one")]) == 0
    assert sorted(calls) == ["frozen_bn", "width"]
    calls.clear()
    execution.sweep("B-F2A", "smoke", {"width": [4, 8, 16], "frozen_bn": ["eval"]}, out_dir=tmp_path / "sweep")
    assert sorted(calls) == ["frozen_bn"] * 3 + ["width"] * 3
