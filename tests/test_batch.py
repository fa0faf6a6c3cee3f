"""The prepared GPU batch: its plan (priority, budget, estimates), its checks before any training,
and a dry run at smoke on the CPU: planned, run, packed and imported."""

from __future__ import annotations

import importlib.util
import json
import tarfile

import pytest

from stitchkit import cli
from stitchkit.book import batch, catalogue, execution, gpu_estimates, notebooks, transfer
from stitchkit.networks import network


def test_everything_starts_with_the_priority_order_and_names_each_page_once():
    order = batch.everything()
    assert order[: len(gpu_estimates.PRIORITY)] == list(gpu_estimates.PRIORITY)
    assert sorted(order) == sorted(notebooks.discover())


def test_plan_skips_pages_without_a_preset_and_pages_whose_estimate_does_not_fit(tmp_path, monkeypatch):
    from stitchkit.registry import figures

    monkeypatch.setitem(figures.OPTIONAL, "gpu", tuple(i for i in figures.OPTIONAL["gpu"] if i != "B-F9"))
    decisions = {d.id: d for d in batch.plan("gpu", 540, book_dir=tmp_path)}
    # a page that offers no gpu preset (here B-F9, as if it had none): skipped, the reason names its scales
    assert not decisions["B-F9"].run and "no 'gpu' preset" in decisions["B-F9"].why
    assert not decisions["B-F2A"].run and decisions["B-F2A"].estimate == gpu_estimates.ESTIMATES["gpu"]["B-F2A"]
    # the first of the priority list whose estimate fits runs
    first = next(d for d in batch.plan("gpu", 540, book_dir=tmp_path) if d.estimate is not None and d.estimate <= 540)
    assert decisions[first.id].run
    # H-F2's gpu preset is estimated at more than a loan's call: never started within 540 s
    assert not decisions["H-F2"].run and "> 540 s left" in decisions["H-F2"].why
    assert decisions["H-F2"].estimate == gpu_estimates.ESTIMATES["gpu"]["H-F2"]
    # with room for it, it runs
    assert {d.id: d for d in batch.plan("gpu", 2000, ["H-F2"], book_dir=tmp_path)}["H-F2"].run


def test_lanes_share_the_budget_by_estimated_work(tmp_path, monkeypatch):
    monkeypatch.setattr(batch, "_smoke_times", lambda: {"B-T1": 50.0, "S-F1A": 30.0, "B-F2B": 30.0, "H-T1": 40.0})
    monkeypatch.setattr(batch, "lane_slowdown", lambda lanes, scale="gpu", measured=None: 1.0)  # sharing is free
    monkeypatch.setattr(batch, "prefetch_seconds", lambda ids, scale, lanes: 0.0)  # no networks to train ahead
    decisions = batch.plan("smoke", 70, ["B-T1", "S-F1A", "B-F2B", "H-T1"], book_dir=tmp_path, lanes=2)
    # B-T1 to lane 1 (50 s), S-F1A to the emptier lane 2 (30), B-F2B to lane 2 (60), H-T1 fits neither
    assert [(d.id, d.run, d.lane) for d in decisions] == [("B-T1", True, 0), ("S-F1A", True, 1), ("B-F2B", True, 1),
                                                          ("H-T1", False, 0)]
    assert "40 s > 20 s left" in decisions[3].why
    with pytest.raises(ValueError, match="lanes must be"):
        batch.plan("smoke", 70, ["B-T1"], book_dir=tmp_path, lanes=0)


def test_lanes_are_planned_as_gaining_nothing_until_measured(tmp_path):
    assert batch.lane_slowdown(1) == 1.0
    assert batch.lane_slowdown(4, measured=tmp_path / "none.json") == 4.0  # no measurement: k lanes, k x slower
    f = tmp_path / "gpu-lanes.json"
    f.write_text(json.dumps({"rows": [{"k": 1, "slowdown": 1.0}, {"k": 2, "slowdown": 1.1}, {"k": 4, "slowdown": 1.6}]}))
    assert batch.lane_slowdown(2, measured=f) == 1.1
    assert batch.lane_slowdown(3, measured=f) == 1.6  # the next larger count measured
    assert batch.lane_slowdown(6, measured=f) == 6.0  # beyond the measurement: nothing assumed
    # Smith's gpu pages name their networks: a batch with lanes trains them ahead, their share off the estimates
    nets = batch.networks_of(["S-F1B", "S-4.2"], "gpu")
    assert len(nets) == 15 and len(set(nets)) == 15 and {n.width for n in nets} == {64}
    assert batch.estimate("S-F1B", "gpu", tmp_path, prefetched=True) == (gpu_estimates.ESTIMATES["gpu"]["S-F1B"]
                                                                         - gpu_estimates.NETWORK_SHARE["gpu"]["S-F1B"])


def test_plan_spends_the_budget_in_priority_order(tmp_path, monkeypatch):
    monkeypatch.setattr(batch, "_smoke_times", lambda: {"B-T1": 30.0, "S-F1A": 30.0, "B-F2B": 30.0})
    decisions = batch.plan("smoke", 70, ["B-T1", "S-F1A", "B-F2B", "H-T1"], book_dir=tmp_path)
    assert [(d.id, d.run) for d in decisions] == [("B-T1", True), ("S-F1A", True), ("B-F2B", False), ("H-T1", False)]
    assert "30 s > 10 s left" in decisions[2].why and "no estimate" in decisions[3].why


def test_plan_skips_pages_current_at_the_scale_unless_named(tmp_path):
    info = notebooks.get_notebook("B-T1")
    folder = tmp_path / info.part
    folder.mkdir(parents=True)
    (folder / "B-T1.results.json").write_text(json.dumps(
        {"id": "B-T1", "scale": "smoke", "source_sha256": catalogue.source_hash(info.source),
         "provenance": {"wall_seconds": 3.0}}))
    assert batch.current_at("B-T1", "smoke", tmp_path) and not batch.current_at("B-T1", "demo", tmp_path)
    assert batch.estimate("B-T1", "demo", tmp_path) is None  # its only run is at smoke
    default = {d.id: d for d in batch.plan("smoke", book_dir=tmp_path)}
    assert not default["B-T1"].run and default["B-T1"].why == "current at smoke"
    assert batch.plan("smoke", ids=["B-T1"], book_dir=tmp_path)[0].run


def test_plan_rejects_an_unknown_page_or_scale_before_anything_runs():
    with pytest.raises(KeyError, match="H-F99"):
        batch.plan("gpu", 540, ["H-F99"])
    with pytest.raises(ValueError, match="huge"):
        batch.plan("huge", 540)


def test_preflight_names_every_missing_piece(tmp_path, monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "papermill" else real(name, *a))
    with pytest.raises(batch.BatchError) as err:
        batch.preflight(["S-4.2", "H-F2"], require_gpu=True, root=tmp_path)
    text = str(err.value)
    assert "papermill" in text and "make wheels" in text
    assert "'mnist' not found" in text and "'cifar10' not found" in text
    import torch

    assert ("no CUDA GPU" in text) == (not torch.cuda.is_available())


def test_preflight_passes_with_the_data_and_packages_here(tmp_path):
    (tmp_path / "cifar10-images.tar.gz").write_bytes(b"")
    lines = batch.preflight(["H-F2"], root=tmp_path)
    assert any(line.startswith("data: cifar10") for line in lines)


def test_cli_pages_dry_run_prints_the_plan_and_needs_no_archive(capsys):
    assert cli.main(["pages", "--scale", "gpu", "--budget", "540", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "H-F2    skip  estimate 1400 s > 540 s left" in out
    assert cli.main(["pages", "--scale", "gpu", "--budget", "0"]) == 2
    assert "--budget must be > 0" in capsys.readouterr().err


def test_pack_with_a_budget_skips_what_does_not_fit(tmp_path, monkeypatch):
    calls = []

    def fake(info, out, scale, params=None, *, progress=True):
        calls.append(info.id)
        raise AssertionError("nothing should run")

    monkeypatch.setattr(execution, "execute", fake)
    monkeypatch.setattr(batch, "estimate", lambda fid, scale, book_dir=None, **kw: 1e6)
    manifest = transfer.pack_pages(["B-T1"], "smoke", tmp_path / "p.tar.gz", progress=False, budget=60)
    assert calls == [] and manifest["pages"] == [] and manifest["skipped"][0]["id"] == "B-T1"
    assert not (tmp_path / "p.tar.gz").exists()


@pytest.mark.slow
def test_batch_dry_run_at_smoke_runs_packs_and_imports(tmp_path, capsys):
    """The batch as a loan runs it, at smoke on the CPU: plan within a budget, the checks, two real
    pages executed and packed with their log, then imported into a book."""
    archive = tmp_path / "out" / "pages.tar.gz"
    # two lanes: each page in its own process with its own archive, merged into one
    assert cli.main(["pages", "B-T1", "S-F1A", "--scale", "smoke", "--budget", "300", "--lanes", "2",
                     "--pack", str(archive)]) == 0
    out = capsys.readouterr().out
    assert "packages: papermill" in out and "kernel: starts" in out and "packed:" in out
    assert "(lane 1 of 2)" in out and "(lane 2 of 2)" in out
    assert sorted(p.name for p in archive.parent.glob("*.lane*.tar.gz")) == ["pages.lane1.tar.gz", "pages.lane2.tar.gz"]
    with tarfile.open(archive, "r:gz") as tar:
        manifest = json.loads(tar.extractfile("manifest.json").read())
    assert [p["id"] for p in manifest["pages"]] == ["B-T1", "S-F1A"] and manifest["budget_seconds"] == 300
    assert manifest["lane_count"] == 2 and [lane["pages"] for lane in manifest["lanes"]] == [["B-T1"], ["S-F1A"]]
    assert all(p["wall_seconds"] > 0 and p["torch"] and p["device"] for p in manifest["pages"])
    assert [d["id"] for d in manifest["plan"]] == ["B-T1", "S-F1A"]
    lines = transfer.import_pages(archive, tmp_path / "book")
    assert len(lines) == 2 and (tmp_path / "book" / "bansal" / "B-T1.ipynb").exists()


@pytest.mark.slow
def test_batch_with_dask_workers_spreads_a_pages_stitch_grids(tmp_path, monkeypatch, capsys):
    """`--workers N` with a local Dask cluster (as benchmarks/gpu_batch.sh starts on a lent GPU):
    the page's stitch grids run on the workers, the page packs as any other."""
    distributed = pytest.importorskip("distributed")
    from stitchkit.base.environment import DASK_ENV

    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        monkeypatch.setenv(DASK_ENV, cluster.scheduler_address)
        archive = tmp_path / "pages.tar.gz"
        assert cli.main(["pages", "S-4.2", "--scale", "smoke", "--workers", "2", "--pack", str(archive)]) == 0
        with distributed.Client(cluster) as client:
            done = client.run_on_scheduler(lambda dask_scheduler: dask_scheduler.transition_counter)
    with tarfile.open(archive, "r:gz") as tar:
        manifest = json.loads(tar.extractfile("manifest.json").read())
    assert [p["id"] for p in manifest["pages"]] == ["S-4.2"] and manifest["dask_workers"] == 2
    assert done > 0  # the scheduler ran the page's grid tasks


def test_a_batch_trains_the_bansal_pages_networks_ahead_one_run_per_receiver(monkeypatch):
    """Issue 47: the Bansal pages name their trained networks (a batch trains them ahead in parallel
    processes): B-F2A's receiver run with its snapshots as one run, the Myrtle CNN's two seeds and the
    seed-variance component's senders; pages of the part share them (each network once)."""
    from stitchkit.networks import zoo

    nets = batch.networks_of(["B-F2A", "B-F5", "B-F2C"], "gpu")
    assert len(nets) == len(set(nets))
    runs = batch.network_runs(nets)
    receiver = [r for r in runs if len(r) > 1]
    assert len(receiver) == 1 and sorted(s.train.stop for s in receiver[0]) == [0.25, 0.5, 1.0]
    assert {s.seed for s in nets if s.model == "preact_resnet18" and s.data.train_size is None} == {0, 1, 3, 4, 5, 6}
    assert sum(s.model == "myrtle" for s in nets) == 2
    trained = []
    monkeypatch.setattr(zoo, "train_snapshots", lambda run, **kw: trained.append(("run", len(run))))
    monkeypatch.setattr(network, "load_or_train", lambda spec, **kw: trained.append(("one", 1)))
    held = [batch.train_networks(["B-F2A", "B-F5", "B-F2C"], "gpu", lane, 2) for lane in (0, 1)]
    assert sum(held) == len(nets) and trained.count(("run", 3)) == 1 and len(trained) == len(runs)
