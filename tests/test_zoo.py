"""The model zoo: recipes are shared across pages, models train once, untrained nets get BN stats."""

import dataclasses

import pytest
import torch
from conftest import write_cifar_pickles

from stitchkit.base.store import config_key
from stitchkit.data import datasets
from stitchkit.data.datasets import DataSpec
from stitchkit.experiments.bansal import common
from stitchkit.networks import network
from stitchkit.networks import zoo
from stitchkit.networks.network import ModelSpec, load_or_train
from stitchkit.networks.train import TrainConfig


def test_two_pages_asking_for_the_same_recipe_get_the_same_cached_model():
    for scale in ("smoke", "demo", "paper"):
        from_page = common.PRESETS[scale].model(0)
        assert config_key(from_page) == config_key(zoo.bansal_resnet18(zoo.BANSAL_RESNET18[scale], 0))
    assert config_key(zoo.bansal_resnet18(zoo.BANSAL_RESNET18["demo"], 0)) != config_key(zoo.bansal_resnet18(zoo.BANSAL_RESNET18["demo"], 1))
    assert zoo.bansal_resnet18(zoo.BANSAL_RESNET18["demo"], 0, width_factor=2).width == 2 * zoo.bansal_resnet18(zoo.BANSAL_RESNET18["demo"], 0).width


def test_paper_recipe_is_the_papers():
    spec = zoo.bansal_resnet18(zoo.BANSAL_RESNET18["paper"], 0)
    t = spec.train
    assert (spec.width, t.steps, t.lr, t.weight_decay, t.batch_size) == (64, 64_000, 0.05, 1e-4, 128)
    assert t.milestones == (0.5, 0.75) and t.gamma == 0.2 and spec.normalisation == "cifar" and t.augment
    st = common.PRESETS["paper"].recipe()
    assert (st.train.optimizer, st.train.lr, st.train.schedule, st.train.steps, st.train.batch_size) == (
        "adam", 1e-3, "cosine", 120_000, 128)
    assert zoo.bansal_resnet18(zoo.BANSAL_RESNET18["paper"], 0, trained=False).calibrate_bn == 2000


def test_load_or_train_trains_once_then_loads(tmp_path, monkeypatch):
    write_cifar_pickles(tmp_path, n_train=50, n_test=20)
    spec = ModelSpec(model="resnet10", width=4, train=TrainConfig(epochs=1, batch_size=10))
    model, metrics = load_or_train(spec, device="cpu", root=tmp_path, progress=False)
    assert set(metrics) >= {"test", "history", "images_per_second", "precision"} and metrics["test"]["n"] == 20
    assert metrics["train_seconds"] == metrics["history"][-1]["seconds"] > 0
    monkeypatch.setattr(network, "train", lambda *a, **k: pytest.fail("trained twice"))
    again, _ = load_or_train(spec, device="cpu", root=tmp_path, progress=False)
    assert all(torch.equal(p, q) for p, q in zip(model.state_dict().values(), again.state_dict().values()))


def test_load_or_train_records_the_networks_a_run_used_with_their_accuracy(tmp_path):
    from stitchkit.base import ledger

    write_cifar_pickles(tmp_path, n_train=50, n_test=20)
    spec = ModelSpec(model="resnet10", width=4, seed=3, train=TrainConfig(epochs=1, batch_size=10))
    _, metrics = load_or_train(spec, device="cpu", root=tmp_path, progress=False)
    key = config_key(spec, datasets.fingerprint(spec.data, tmp_path))[:16]
    mine = [n for n in ledger.networks_used() if n["key"] == key]
    assert mine == [{"key": key, "model": "resnet10", "width": 4, "seed": 3, "data": "cifar10", "train_size": None,
                     "epochs": 1, "steps": None, "trained": True, "labels": "none", "label_noise": 0.0, "stop": 1.0,
                     "method": "supervised", "optimizer": "sgd", "lr": spec.train.lr, "schedule": spec.train.schedule,
                     "options": {}, "accuracy": round(metrics["test"]["accuracy"], 4),
                     "images_per_second": round(metrics["images_per_second"], 1),
                     "train_seconds": round(metrics["train_seconds"], 2), "batch_size": 10, "device": "cpu",
                     "precision": metrics["precision"], "train_flops_per_image": metrics["train_flops_per_image"]}]
    assert mine[0]["images_per_second"] > 0  # 5 steps of 10 images, timed
    assert metrics["train_flops_per_image"] > 0


def test_a_training_steps_flops_are_counted_without_touching_the_model_or_the_random_streams():
    from torch.utils.flop_counter import FlopCounterMode

    from stitchkit.networks.models import build_model

    model = build_model("resnet10", seed=0, width=4).train()
    before = {k: v.clone() for k, v in model.state_dict().items()}
    images = torch.randint(0, 255, (5, 3, 32, 32), dtype=torch.uint8)
    state = torch.random.get_rng_state()
    flops = network.train_flops_per_image(model, images)
    assert torch.equal(torch.random.get_rng_state(), state) and model.training
    assert all(torch.equal(before[k], v) for k, v in model.state_dict().items())
    assert all(p.grad is None for p in model.parameters())
    twin = build_model("resnet10", seed=0, width=4).eval()
    # the reference computes for real (oneDNN off: its AVX2 1x1 weight-gradient kernel can hang on two images)
    with torch.backends.mkldnn.flags(enabled=False), FlopCounterMode(display=False) as counter:
        twin(images[:2].float()).sum().backward()
    assert flops == counter.get_total_flops() / 2 > 0


def test_untrained_model_keeps_random_weights_but_recalibrates_bn(tmp_path):
    write_cifar_pickles(tmp_path, n_train=50, n_test=20)
    spec = ModelSpec(model="resnet10", width=4, train=TrainConfig(epochs=0), calibrate_bn=40)
    model, metrics = load_or_train(spec, device="cpu", root=tmp_path, progress=False)
    fresh = network.build(spec, 10, 3)
    assert metrics["history"] == []
    conv = [k for k in fresh.state_dict() if k.endswith("conv1.weight")][0]
    assert torch.equal(model.state_dict()[conv], fresh.state_dict()[conv])
    bn_var = [k for k in fresh.state_dict() if k.endswith("bn1.running_var")][0]
    assert not torch.allclose(model.state_dict()[bn_var], fresh.state_dict()[bn_var])


def test_data_spec_validation_and_label_transforms(tmp_path):
    with pytest.raises(ValueError, match="valid: none, objects_vs_animals, random"):
        DataSpec(labels="coarse")
    with pytest.raises(ValueError, match="valid: cifar10, cmnist_colour, .*, mnist, mnist_grey3"):
        DataSpec(dataset="svhn")
    write_cifar_pickles(tmp_path, n_train=50, n_test=20)
    coarse = DataSpec(labels="objects_vs_animals", train_size=20)
    train = datasets.train_split(coarse, tmp_path)
    assert len(train) == 20 and train.classes == ("animal", "object") and set(train.labels.tolist()) <= {0, 1}
    assert set(datasets.test_split(coarse, root=tmp_path).labels.tolist()) <= {0, 1}
    noisy = datasets.train_split(DataSpec(labels="random", label_noise=1.0), tmp_path)
    clean = datasets.train_split(DataSpec(), tmp_path)
    assert not torch.equal(noisy.labels, clean.labels) and torch.equal(noisy.images, clean.images)


def test_another_data_root_gives_another_model(tmp_path):
    """The training data's fingerprint is part of the key: other data never reuses a model."""
    write_cifar_pickles(tmp_path / "a", n_train=50, n_test=20)
    write_cifar_pickles(tmp_path / "b", n_train=50, n_test=20)
    import pickle

    batch = tmp_path / "b" / "cifar-10-batches-py" / "data_batch_1"
    d = pickle.loads(batch.read_bytes())
    d[b"data"][0, :10] ^= 0xFF  # ten pixels differ: another data set under the same spec
    batch.write_bytes(pickle.dumps(d))
    spec = ModelSpec(model="resnet10", width=8, train=TrainConfig(epochs=1, batch_size=10))
    store = __import__("stitchkit.base.store", fromlist=["Store"]).Store(tmp_path / "store")
    load_or_train(spec, device="cpu", root=tmp_path / "a", store=store, progress=False)
    load_or_train(spec, device="cpu", root=tmp_path / "b", store=store, progress=False)
    assert len(list((tmp_path / "store").rglob("*.pt"))) == 2


def test_snapshots_of_one_run_equal_runs_stopped_there(tmp_path):
    """One run stores its earlier snapshots on the way; each equals a run stopped at that point
    (same schedule, same data order), bit for bit on the CPU."""
    from dataclasses import replace

    from stitchkit.base.store import Store

    write_cifar_pickles(tmp_path, n_train=80, n_test=20)
    spec = ModelSpec(model="resnet10", width=4, train=TrainConfig(epochs=4, batch_size=10, stop=0.5))
    early = replace(spec, train=replace(spec.train, stop=0.25))
    store = Store(tmp_path / "cache")
    zoo.train_snapshots([spec, early], device="cpu", root=tmp_path, store=store, progress=False)
    salt = datasets.fingerprint(spec.data, tmp_path)
    stored = store.get(early, salt=salt)
    assert stored is not None and stored.metrics["step"] == 8  # a quarter of 4 epochs x 8 steps
    alone, _ = load_or_train(early, device="cpu", root=tmp_path, store=Store(tmp_path / "other"), progress=False)
    assert all(torch.equal(alone.state_dict()[k].cpu(), v) for k, v in stored.tensors.items())
    with pytest.raises(ValueError, match="stop"):
        TrainConfig(stop=0)


def test_bansal_gpu_recipe_is_the_best_measured_candidate():
    """The gpu ResNet-18 recipe is the candidate that measured best on a GPU (the committed
    benchmarks/spot/gpu-recipes.json), field for field, not a recipe typed in beside it."""
    import json
    from dataclasses import asdict

    from stitchkit.base import paths

    rows = json.loads((paths.REPO_ROOT / "benchmarks" / "spot" / "gpu-recipes.json").read_text())["rows"]
    best = max(rows, key=lambda r: r["test_accuracy"])
    spec = zoo.bansal_resnet18(zoo.BANSAL_RESNET18["gpu"], seed=3)
    assert spec.width == best["width"] == 64 and spec.data.train_size is None
    got = {k: v for k, v in asdict(spec.train).items() if k != "seed"}
    want = {k: (tuple(v) if isinstance(v, list) else v) for k, v in best["recipe"].items() if k != "seed"}
    want["stop"] = 1.0
    for f in dataclasses.fields(TrainConfig):  # fields added since the measurement, at their defaults
        if f.name != "seed":
            want.setdefault(f.name, f.default)
    assert got == want
    # fewer images: the scale's epochs of the full set become steps at the recipe's batch
    small = zoo.bansal_resnet18(zoo.BANSAL_RESNET18["gpu"], train_size=5000)
    assert small.train.steps == 40 * (50_000 // 512) and small.train.batch_size == 512


def test_a_scale_row_may_shorten_its_familys_training_recipe(monkeypatch):
    """A ``gpu`` row names what it changes of its family's recipe (batch, schedule, label
    smoothing, ...: zoo.TRAIN_KEYS); a row that changes nothing (smoke, paper) keeps the paper's."""
    row = zoo.Recipe("hernandez_resnet", width=64, train_size=None, epochs=15, calibrate_bn=2000, batch=512, lr=0.4,
                     nesterov=True, schedule="warmup_linear", warmup=0.2, label_smoothing=0.1)
    monkeypatch.setitem(zoo.HERNANDEZ_RESNET, "gpu", row)
    train = zoo.hernandez_resnet(zoo.HERNANDEZ_RESNET["gpu"], "r1111").train
    assert (train.batch_size, train.lr, train.nesterov, train.schedule, train.warmup, train.label_smoothing,
            train.epochs, train.weight_decay) == (512, 0.4, True, "warmup_linear", 0.2, 0.1, 15, 0.01)
    smoke = zoo.hernandez_resnet(zoo.HERNANDEZ_RESNET["smoke"], "r1111").train
    assert (smoke.batch_size, smoke.lr, smoke.schedule, smoke.label_smoothing) == (256, 0.01, "warmup_cosine", 0.0)
    paper = zoo.hernandez_resnet(zoo.HERNANDEZ_RESNET["paper"], "r1111").train
    assert (paper.batch_size, paper.lr, paper.weight_decay, paper.epochs) == (256, 0.01, 0.01, 40)
    vit = dataclasses.replace(zoo.BALOGH_VIT["paper"], epochs=30, batch=512, schedule="warmup_cosine", warmup=0.05)
    assert zoo.bansal_vit(vit).train.batch_size == 512  # Bansal's ViT at gpu is Balogh & Jelasity's
    assert zoo.BANSAL_VIT["gpu"] is zoo.BALOGH_VIT["gpu"]
    # a preset at a scale its networks' family has no recipe for is refused where the presets are made
    no_gpu = {s: r for s, r in zoo.BALOGH_VIT.items() if s != "gpu"}
    with pytest.raises(ValueError, match="no 'gpu' recipe for vit; scales: vit: smoke, demo, paper"):
        zoo.at_scale({"gpu": common.PRESETS["gpu"]}, vit=no_gpu)


def test_a_recipe_is_checked_by_its_builder_and_prints_what_it_sets():
    """A builder takes a recipe of its own family (a scale name or another family's recipe is
    refused, naming what it takes), and a printed recipe shows the fields it sets."""
    with pytest.raises(TypeError, match="bansal_resnet18 builds from a zoo.Recipe"):
        zoo.bansal_resnet18("demo", 0)
    with pytest.raises(ValueError, match="cannot build from a hernandez_resnet recipe"):
        zoo.bansal_resnet18(zoo.HERNANDEZ_RESNET["demo"], 0)
    with pytest.raises(ValueError, match="unknown network family 'resnet9'"):
        zoo.Recipe("resnet9", width=8)
    assert repr(zoo.BANSAL_RESNET18["smoke"]) == ("Recipe(family='bansal_resnet18', width=8, train_size=2048, epochs=4, "
                                                 "calibrate_bn=512)")
    assert repr(zoo.BANSAL_RESNET18["demo"]).startswith("Recipe(family='bansal_resnet18', width=16, train_size=None, "
                                                       "epochs=16, calibrate_bn=2000, batch=512, lr=0.2")
    # every figure's preset holds its networks' recipes at its own scale
    assert common.PRESETS["smoke"].net is zoo.BANSAL_RESNET18["smoke"]
    assert common.PRESETS["demo"].model(0) == zoo.bansal_resnet18(zoo.BANSAL_RESNET18["demo"], 0)


def test_the_simclr_networks_are_as_wide_as_their_supervised_twins():
    for scale, recipe in zoo.BANSAL_SIMCLR.items():
        assert recipe.width == zoo.BANSAL_RESNET18[scale].width


def test_a_recipe_tables_gpu_row_stays_out_of_a_demo_pages_code_hash(tmp_path):
    """The zoo's tables are dict literals keyed by scale: tuning a ``gpu`` recipe leaves the CPU
    pages current (stitchkit.registry.staleness), tuning a ``demo`` recipe does not."""
    from stitchkit.base import paths
    from stitchkit.registry import staleness

    source = (paths.REPO_ROOT / "stitchkit" / "networks" / "zoo.py").read_text()
    gpu_row = '"gpu": dict(width=64, train_size=None, epochs=40, calibrate_bn=2000, batch=512, lr=0.2,'
    demo_row = '"demo": dict(width=16, train_size=None, epochs=16, calibrate_bn=2000, batch=512, lr=0.2,'
    assert gpu_row in source and demo_row in source
    m = tmp_path / "zoo.py"
    m.write_text(source)
    demo = staleness.code_hash(m, "demo")
    m.write_text(source.replace(gpu_row, gpu_row.replace("epochs=40", "epochs=41")))
    assert staleness.code_hash(m, "demo") == demo and staleness.code_hash(m, "gpu") != demo
    m.write_text(source.replace(demo_row, demo_row.replace("epochs=16", "epochs=17")))
    assert staleness.code_hash(m, "demo") != demo


def test_every_preset_holds_the_recipes_of_its_own_scale():
    """A preset derived from another scale's (``PRESETS["gpu"] = replace(PRESETS["demo"], ...)``)
    must not carry that scale's networks: every recipe a registered figure's preset holds, however
    deep (X-3 holds B-F2A's config), is its own scale's row of a zoo table."""
    import dataclasses

    from stitchkit.registry import figures

    tables = [v for v in vars(zoo).values() if isinstance(v, dict) and v and
              all(isinstance(r, zoo.Recipe) for r in v.values())]

    def recipes(cfg):
        for f in dataclasses.fields(cfg):
            if "recipe" in f.metadata:
                value = getattr(cfg, f.name)
                yield from ([value] if isinstance(value, zoo.Recipe) else recipes(value))

    for fig in figures.FIGURES:
        for scale, cfg in figures.presets(fig.id).items():
            for recipe in recipes(cfg):
                assert any(t.get(scale) is recipe for t in tables), (fig.id, scale, recipe)


def test_a_recipe_in_words_says_what_its_builder_trains():
    """Every family's recipe at every scale can be put in words (a page glues them as
    ``recipe_<field>``), and the words follow the recipe: its width, data and changed optimiser."""
    from stitchkit.pagekit.page import held_recipes

    for table in (zoo.BANSAL_RESNET18, zoo.BANSAL_MYRTLE, zoo.BANSAL_RESNET164, zoo.BANSAL_SIMCLR, zoo.BANSAL_VIT,
                  zoo.HERNANDEZ_RESNET, zoo.SMITH_RESNET18, zoo.SMITH_VGG19, zoo.BALOGH_RESNET18, zoo.BALOGH_VIT):
        for recipe in table.values():
            assert zoo.describe(recipe).startswith(("width", "dimension"))
    demo = zoo.describe(zoo.BANSAL_RESNET18["demo"])
    assert demo.startswith("width 16, all training images, 16 epochs at batch 512, SGD (Nesterov")
    assert "label smoothing 0.1" in demo and "crop + flip" in demo
    smoke = zoo.describe(zoo.BANSAL_RESNET18["smoke"])
    assert "2,048 training images" in smoke and "x0.2 at 50% and 75%" in smoke and "smoothing" not in smoke
    # a page's width and length parameters are what its words say
    cfg = dataclasses.replace(common.PRESETS["demo"], width=4, model_epochs=2)
    assert zoo.describe(held_recipes(cfg)["net"]).startswith("width 4, all training images, 2 epochs")


def test_a_pages_words_about_its_networks_follow_its_overriding_parameters():
    """A page's width/length parameters change the recipes its builders pass them to, and so its
    glued words: B-F2A's length reaches its ResNet-164s, not its ViTs; Balogh's reaches both
    architectures; B-F6's width reaches its SimCLR network."""
    from stitchkit.experiments.balogh import identification
    from stitchkit.experiments.bansal import f2a, f3c_f6
    from stitchkit.pagekit.page import held_recipes

    held = held_recipes(dataclasses.replace(f2a.PRESETS_F2A["demo"], model_epochs=2))
    assert held["net"].epochs == held["resnet164"].epochs == 2 and held["vit"] == zoo.BALOGH_VIT["demo"]
    held = held_recipes(dataclasses.replace(identification.PRESETS_T1["demo"], model_epochs=5))
    assert held["resnet18"].epochs == held["vit"].epochs == 5
    held = held_recipes(dataclasses.replace(f3c_f6.PRESETS_F6["demo"], width=4, simclr_epochs=1))
    assert held["net"].width == held["simclr"].width == 4 and held["simclr"].epochs == 1
