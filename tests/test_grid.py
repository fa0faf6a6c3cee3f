"""The stitch grid: tidy table, DM-initialised control at ~0, one sender forward per cut, Dask."""

import dataclasses

import pandas as pd
import pytest
import torch
from conftest import write_cifar_pickles

from stitchkit.base import environment
from stitchkit.base.store import Store
from stitchkit.data.datasets import DataSpec
from stitchkit.networks.network import ModelSpec
from stitchkit.networks.train import TrainConfig
from stitchkit.stitching import grid, grid_spec, stitches
from stitchkit.stitching.grid import stitch_grid
from stitchkit.stitching.grid_spec import Net, StitchRecipe

RECIPE = StitchRecipe(train=TrainConfig(epochs=1, batch_size=10, optimizer="adam", lr=1e-3, weight_decay=0.0,
                                        schedule="cosine", augment=False, precision="fp32"), dm_images=50)
CUTS = [("stem", "stem"), ("block2", "block2"), ("pool", "pool")]


def _nets():
    spec = lambda seed: ModelSpec(model="resnet10", width=4, seed=seed,  # noqa: E731
                                  train=TrainConfig(epochs=1, batch_size=10, precision="fp32"))
    return [Net("A", spec(0)), Net("B", spec(1))], [Net("A", spec(0))]


@pytest.fixture
def root(tmp_path):
    write_cifar_pickles(tmp_path / "data", n_train=50, n_test=20)
    return tmp_path / "data"


def test_grid_table_has_one_row_per_stitch_and_an_exact_control(root, tmp_path):
    senders, receivers = _nets()
    table = stitch_grid(senders, receivers, CUTS, RECIPE, DataSpec(), device="cpu", store=Store(tmp_path / "s"),
                        root=root, progress=False)
    assert len(table) == 6 and list(table.columns[:4]) == ["sender", "receiver", "cut_i", "cut_j"]
    assert set(table.columns) >= {"accuracy", "dm_accuracy", "penalty", "dm_penalty", "dm_residual", "seconds"}
    control = table[table.control]
    assert list(control.sender) == ["A"] * 3
    assert (control.dm_penalty.abs() < 1e-9).all() and (control.dm_residual < 1e-8).all()
    default = stitch_grid(senders, receivers, CUTS[:1], StitchRecipe(init="default", train=RECIPE.train),
                          DataSpec(), device="cpu", store=Store(tmp_path / "s"), root=root, progress=False)
    assert default.dm_accuracy.isna().all()


def test_each_sender_cut_is_computed_once_for_all_its_stitches(root, tmp_path, monkeypatch):
    calls = []
    real = stitches.activations

    def counting(model, cut, split, **kw):
        calls.append((id(model), cut, len(split)))
        return real(model, cut, split, **kw)

    monkeypatch.setattr(stitches, "activations", counting)
    senders, _ = _nets()
    receivers = [Net("A", senders[0].spec), Net("B", senders[1].spec)]
    recipe = dataclasses.replace(RECIPE, dm_images=25)  # 50 train, 25 DM, 20 test images: calls tell apart
    stitch_grid(senders, receivers, CUTS, recipe, DataSpec(), device="cpu", store=Store(tmp_path / "s"), root=root,
                progress=False)
    sender_calls = [c for c in calls if c[2] == 50]  # the training split from images: once per sender,
    assert len(sender_calls) == len(set(sender_calls)) == len(senders)  # later cuts continue from there
    assert {c[1] for c in sender_calls} == {CUTS[0][0]}


def test_cuts_continued_from_the_previous_cut_give_the_table_of_fresh_forwards(root, tmp_path, monkeypatch):
    senders, receivers = _nets()
    continued = stitch_grid(senders, receivers, CUTS, RECIPE, DataSpec(), device="cpu", store=Store(tmp_path / "c"),
                            root=root, progress=False)
    monkeypatch.setattr(grid.SenderCut, "_continued", lambda self, model, split, precision: None)
    fresh = stitch_grid(senders, receivers, CUTS, RECIPE, DataSpec(), device="cpu", store=Store(tmp_path / "f"),
                        root=root, progress=False)
    pd.testing.assert_frame_equal(continued.drop(columns=["seconds", "key"]), fresh.drop(columns=["seconds", "key"]))
    assert (continued.key == fresh.key).all()  # the same stitches


def test_under_bf16_cuts_continue_where_exact_and_give_the_table_of_fresh_forwards(root, tmp_path, monkeypatch):
    """Under bf16 autocast a cut's training activations are stored in bfloat16: continued from only
    where the forward hands on bfloat16 there too (nothing was rounded), which gives bit for bit
    the table of fresh forwards from the images; where it hands on float32, computed afresh."""
    # 50 training, 25 DM and 20 test images: the calls tell the splits apart
    bf16 = dataclasses.replace(RECIPE, dm_images=25, train=dataclasses.replace(RECIPE.train, precision="bf16"))
    senders, receivers = _nets()
    calls = []
    real = stitches.activations

    def counting(model, cut, split, **kw):
        calls.append((id(model), cut, len(split)))
        return real(model, cut, split, **kw)

    monkeypatch.setattr(stitches, "activations", counting)
    continued = stitch_grid(senders, receivers, CUTS, bf16, DataSpec(), device="cpu", store=Store(tmp_path / "c"),
                            root=root, progress=False)
    from_images = [c for c in calls if c[2] == 50]  # the training split (50 images)
    model = senders[0].load("cpu", Store(tmp_path / "c"), root, False)
    lossless = {cut: stitches.boundary_dtype(model, cut, (3, 32, 32), device="cpu", precision="bf16") == torch.bfloat16
                for cut, _ in CUTS}
    expected = 1 + sum(not lossless[a] for (a, _) in CUTS[:-1])  # the first cut, and after each rounded one
    assert len([c for c in from_images if c[0] == from_images[0][0]]) == expected
    monkeypatch.setattr(grid.SenderCut, "_continued", lambda self, model, split, precision: None)
    fresh = stitch_grid(senders, receivers, CUTS, bf16, DataSpec(), device="cpu", store=Store(tmp_path / "f"),
                        root=root, progress=False)
    pd.testing.assert_frame_equal(continued.drop(columns=["seconds", "key"]), fresh.drop(columns=["seconds", "key"]))


def test_boundary_dtype_is_what_the_forward_hands_on():
    from stitchkit.networks.models import build_model

    model = build_model("preact_resnet18", seed=0, width=4).eval()
    assert stitches.boundary_dtype(model, "block2", (3, 32, 32), device="cpu", precision="fp32") == torch.float32
    x = torch.randn(2, 3, 32, 32)
    with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16):
        native = model.forward_intermediates(x, ["block2"])["block2"].dtype
    assert stitches.boundary_dtype(model, "block2", (3, 32, 32), device="cpu", precision="bf16") == native


def test_forward_between_continues_a_forward_exactly():
    from stitchkit.networks.models import build_model

    model = build_model("resnet10", seed=0, width=4).eval()
    x = torch.randn(6, 3, 32, 32)
    with torch.no_grad():
        full = model.forward_intermediates(x)
        assert torch.equal(model.forward_between(full["block1"], "block1", "block3"), full["block3"])
        assert torch.equal(stitches.activations_between(model, "stem", "pool", full["stem"], batch_size=4,
                                                         device="cpu", precision="fp32"), full["pool"])
    with pytest.raises(ValueError, match="comes before 'block3'"):
        model.forward_between(full["block3"], "block3", "block1")


def test_dask_grid_gives_the_same_table_as_the_local_run(root, tmp_path):
    distributed = pytest.importorskip("distributed")
    senders, receivers = _nets()
    local = stitch_grid(senders, receivers, CUTS, RECIPE, DataSpec(), device="cpu", store=Store(tmp_path / "l"),
                        root=root, progress=False)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        remote = stitch_grid(senders, receivers, CUTS, RECIPE, DataSpec(), store=Store(tmp_path / "r"), root=root,
                             progress=False, client=client)
    pd.testing.assert_frame_equal(local.drop(columns="seconds"), remote.drop(columns="seconds"))


def test_stitches_stacked_in_one_pass_give_the_table_of_one_at_a_time(root, tmp_path):
    senders, receivers = _nets()
    cuts = [("stem", "block2"), ("block1", "block2"), ("block2", "block2"), ("block3", "block3")]
    recipe = dataclasses.replace(RECIPE, kind="strided_or_upsample")  # Hernandez's stitch: any two cuts
    one = stitch_grid(senders, receivers, cuts, recipe, DataSpec(), device="cpu", store=Store(tmp_path / "one"),
                      root=root, progress=False, stitches_per_pass=1)
    stacked = stitch_grid(senders, receivers, cuts, recipe, DataSpec(), device="cpu", store=Store(tmp_path / "st"),
                          root=root, progress=False, stitches_per_pass=2)
    assert list(stacked.cut_i) == list(one.cut_i) and list(stacked.sender) == list(one.sender)
    cols = ["accuracy", "dm_accuracy", "train_loss", "dm_residual"]
    pd.testing.assert_frame_equal(stacked[cols], one[cols], rtol=1e-4, atol=1e-5)
    # each stored stitch is its own entry: the one-at-a-time store reads back the stacked table
    again = stitch_grid(senders, receivers, cuts, recipe, DataSpec(), device="cpu", store=Store(tmp_path / "st"),
                        root=root, progress=False, stitches_per_pass=1)
    pd.testing.assert_frame_equal(again.drop(columns="seconds"), stacked.drop(columns="seconds"))
    with pytest.raises(ValueError, match="stitches_per_pass"):
        stitch_grid(senders, receivers, cuts, recipe, DataSpec(), device="cpu", stitches_per_pass=0)


class NoiseSource:
    """A tensor-source sender: one random pattern per class plus noise, in the receiver's shape."""

    name = "noise"
    spec = {"source": "test-noise", "seed": 0}

    def tensors(self, cut, shape, split):
        g = torch.Generator().manual_seed(0 if split == "train" else 1)
        y = torch.arange(40) % 10
        base = torch.rand((10, *shape), generator=torch.Generator().manual_seed(5))
        return base[y] + 0.1 * torch.randn((40, *shape), generator=g), y


def test_tensor_source_sender(root, tmp_path):
    _, receivers = _nets()
    recipe = StitchRecipe(init="default", train=RECIPE.train)
    table = stitch_grid([NoiseSource()], receivers, [("block2", "block2")], recipe, DataSpec(), device="cpu",
                        store=Store(tmp_path / "s"), root=root, progress=False)
    assert len(table) == 1 and table.n_test.iloc[0] == 40 and not table.control.iloc[0]
    with pytest.raises(ValueError, match="init='default'"):
        stitch_grid([NoiseSource()], receivers, [("block2", "block2")], RECIPE, DataSpec(), device="cpu",
                    store=Store(tmp_path / "s2"), root=root, progress=False)


def test_bad_grids_are_refused():
    senders, receivers = _nets()
    with pytest.raises(ValueError, match="unique"):
        stitch_grid(senders + senders[:1], receivers, CUTS, RECIPE, DataSpec())
    with pytest.raises(ValueError, match="cut_pairs is empty"):
        stitch_grid(senders, receivers, [], RECIPE, DataSpec())
    with pytest.raises(ValueError, match="valid: dm, default"):
        StitchRecipe(init="lsq")
    assert grid.can_cache_activations(RECIPE) and not grid.can_cache_activations(
        StitchRecipe(train=TrainConfig(augment=True)))


def test_stored_stitches_reload_and_reproduce_the_grid_accuracy(root, tmp_path):
    """load_stitched gives the trained stitched model of a grid row (its test accuracy is the
    row's); load_stitches gives the same stitch modules for many rows; a missing row raises."""
    from stitchkit.data.datasets import test_split

    senders, receivers = _nets()
    store = Store(tmp_path / "s")
    table = stitch_grid(senders[1:], receivers, CUTS[:2], RECIPE, DataSpec(), device="cpu", store=store, root=root,
                        progress=False)
    stitched, metrics = grid.load_stitched(senders[1], receivers[0], "block2", "block2", RECIPE, DataSpec(),
                                           device="cpu", store=store, root=root)
    row = table[table.cut_i == "block2"].iloc[0]
    acc = stitches.evaluate_stitch(stitched, test_split(DataSpec(), None, 0, root), normalisation="cifar",
                                    device="cpu")["accuracy"]
    assert acc == pytest.approx(row.accuracy) and metrics["accuracy"] == pytest.approx(row.accuracy)
    many = grid.load_stitches(senders[1], receivers[0], CUTS[:2], RECIPE, DataSpec(), device="cpu", store=store,
                              root=root)
    assert set(many) == set(CUTS[:2])
    for a, b in zip(many[("block2", "block2")].state_dict().values(), stitched.stitch.state_dict().values()):
        assert torch.equal(a, b)
    with pytest.raises(KeyError, match="pool"):
        grid.load_stitched(senders[1], receivers[0], "pool", "pool", RECIPE, DataSpec(), device="cpu", store=store,
                           root=root)


def test_stitch_mse_with_a_memo_gives_the_numbers_of_fresh_calls(root, tmp_path):
    """Hernandez's MSE check over a grid: sharing activations across calls (the memo) changes
    nothing but the number of forward passes."""
    senders, receivers = _nets()
    store = Store(tmp_path / "s")
    recipe = dataclasses.replace(RECIPE, kind="strided_or_upsample")  # Hernandez's stitch: any cut into any
    cells = [("stem", "stem"), ("stem", "block2"), ("block2", "stem"), ("block2", "block2")]
    stitch_grid(senders, receivers, cells, recipe, DataSpec(), device="cpu", store=store, root=root, progress=False)
    memo = {}
    for sender in senders:
        for cut_i, cut_j in cells:
            kw = dict(n_images=15, device="cpu", store=store, root=root)
            fresh = grid.stitch_mse(sender, receivers[0], cut_i, cut_j, recipe, DataSpec(), **kw)
            shared = grid.stitch_mse(sender, receivers[0], cut_i, cut_j, recipe, DataSpec(), memo=memo, **kw)
            assert fresh.keys() == shared.keys() == {"EV", "ES", "SV"}
            for k in fresh:
                assert len(fresh[k]) == 15 and torch.equal(fresh[k], shared[k]), (sender.name, cut_i, cut_j, k)
    assert memo["sender"][1] == "block2" and set(memo["e"]) == {"stem", "block2"}


def test_a_longer_recipe_multiplies_the_training_length_and_nothing_else():
    base = StitchRecipe(train=TrainConfig(epochs=2, lr=0.01))
    longer = base.longer()
    assert longer.train.epochs == grid_spec.LONGER * 2 and longer.train.steps is None
    assert dataclasses.replace(longer, train=base.train) == base
    by_steps = StitchRecipe(train=TrainConfig(epochs=1, steps=50)).longer(3)
    assert (by_steps.train.epochs, by_steps.train.steps) == (3, 150)
    with pytest.raises(ValueError, match="factor=0"):
        base.longer(0)


def test_replace_cells_swaps_matching_rows_and_refuses_unknown_or_ambiguous_cells():
    import numpy as np
    import pandas as pd

    from stitchkit.stitching.longer import replace_cells

    table = pd.DataFrame({"init": [0, 0, 1, 1], "sender": ["a", "a", "a", "b"], "cut": ["x", "x", "x", "y"],
                          "accuracy": [0.5, 0.5, 0.6, 0.7], "correct": [np.zeros(3, bool)] * 4})
    new = pd.DataFrame({"k": [1], "who": ["a"], "at": ["x"], "acc": [0.9], "ok": [np.ones(3, bool)]})
    out = replace_cells(table, new, {"init": "k", "sender": "who", "cut": "at"}, {"accuracy": "acc", "correct": "ok"})
    assert list(out.accuracy) == [0.5, 0.5, 0.9, 0.7] and out.correct[2].all() and not out.correct[0].any()
    assert list(table.accuracy) == [0.5, 0.5, 0.6, 0.7]  # a copy: the page's table is untouched
    both = new.assign(k=0)
    with pytest.raises(ValueError, match="2 rows of the table at init=0, sender='a', cut='x'"):
        replace_cells(table, both, {"init": "k", "sender": "who", "cut": "at"}, {"accuracy": "acc"})
    out = replace_cells(table, both, {"init": "k", "sender": "who", "cut": "at"}, {"accuracy": "acc"}, many=True)
    assert list(out.accuracy) == [0.9, 0.9, 0.6, 0.7]
    with pytest.raises(ValueError, match="0 rows .* sender='c'"):
        replace_cells(table, new.assign(who="c"), {"init": "k", "sender": "who", "cut": "at"}, {"accuracy": "acc"})


def test_a_page_hands_its_grids_to_the_cluster_the_environment_names(root, tmp_path, monkeypatch):
    """`stitchkit run --dask ADDRESS` sets STITCHKIT_DASK for the page's kernel: its grids then run
    on that cluster (one task per sender and receiver), with the table of a local run."""
    distributed = pytest.importorskip("distributed")
    from stitchkit.base import cluster

    senders, receivers = _nets()
    local = stitch_grid(senders, receivers, CUTS, RECIPE, DataSpec(), device="cpu", store=Store(tmp_path / "l"),
                        root=root, progress=False)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as lc:
        monkeypatch.setenv(environment.DASK_ENV, lc.scheduler_address)
        monkeypatch.setattr(cluster, "_CLIENTS", {})
        try:
            remote = stitch_grid(senders, receivers, CUTS, RECIPE, DataSpec(), store=Store(tmp_path / "r"), root=root,
                                 progress=False)
            # tasks that finished there: a cumulative count, since released results leave .states (CI saw 0)
            tasks = {k: p.state_counts["memory"] for k, p in lc.scheduler.task_prefixes.items()}
        finally:
            for c in cluster._CLIENTS.values():
                c.close()
    assert tasks == {"pair_task": len(senders) * len(receivers)}, tasks  # one task per sender and receiver
    pd.testing.assert_frame_equal(local.drop(columns=["seconds"]), remote.drop(columns=["seconds"]))


def test_a_cluster_that_does_not_answer_is_refused_naming_it(monkeypatch):
    pytest.importorskip("distributed")
    from stitchkit import cli
    from stitchkit.base import cluster

    with pytest.raises(cluster.DaskSchedulerError, match="tcp://127.0.0.1:9"):
        cluster.connect("tcp://127.0.0.1:9", timeout=1)
    assert cli.main(["run", "B-F4", "--scale", "smoke", "--dask", "tcp://127.0.0.1:9", "--dask-timeout", "1"]) == 2


def test_replace_cells_keeps_string_columns_as_strings():
    # a stitch's cache key is a string (pandas' str dtype, not object): swapping a longer stitch in must
    # keep it, as the training-length control does for every verdict since issue 46
    from stitchkit.stitching.longer import replace_cells

    t = pd.DataFrame({"sender": ["a", "b"], "cut": ["x", "x"], "key": ["h1", "h2"], "accuracy": [0.1, 0.2]})
    new = pd.DataFrame({"sender": ["b"], "cut": ["x"], "key": ["h3"], "accuracy": [0.5]})
    out = replace_cells(t, new, ["sender", "cut"], ["key", "accuracy"])
    assert list(out.key) == ["h1", "h3"] and list(out.accuracy) == [0.1, 0.5]
