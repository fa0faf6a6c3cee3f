import dataclasses
import math

import pytest
import torch

from stitchkit.data.batches import Batches
from stitchkit.networks.models import build_model
from stitchkit.networks.train import TrainConfig, evaluate, lr_factor, train

CFG = TrainConfig(epochs=2, batch_size=16, lr=0.05, precision="fp32", seed=0)


def _train(split, cfg=CFG, checkpoint=None):
    model = build_model("resnet10", seed=0, width=4)
    batches = Batches(split, cfg.batch_size, normalisation="cifar", shuffle=True, augment=cfg.augment,
                      drop_last=True, seed=cfg.seed)
    history = train(model, batches, cfg, device="cpu", checkpoint=checkpoint, progress=False)
    return model, history


@pytest.mark.parametrize("precision", ["fp32", "bf16"])
def test_training_is_bitwise_deterministic_on_cpu(tiny_split, precision):
    cfg = TrainConfig(epochs=2, batch_size=16, lr=0.05, precision=precision, seed=0)
    a, ha = _train(tiny_split, cfg)
    b, hb = _train(tiny_split, cfg)
    assert [{k: v for k, v in r.items() if k != "seconds"} for r in ha] == [
        {k: v for k, v in r.items() if k != "seconds"} for r in hb]
    assert all(torch.equal(p, q) for p, q in zip(a.state_dict().values(), b.state_dict().values()))


def test_interrupted_training_resumes_to_the_same_weights(tiny_split, tmp_path):
    full, _ = _train(tiny_split)
    ckpt = tmp_path / "ckpt.pt"
    cfg = CFG
    model = build_model("resnet10", seed=0, width=4)
    batches = Batches(tiny_split, 16, normalisation="cifar", shuffle=True, augment=True, drop_last=True, seed=0)

    class Stop(Exception):
        pass

    steps = []
    orig_step = torch.optim.SGD.step

    def step_then_maybe_stop(self, *a, **k):
        out = orig_step(self, *a, **k)
        steps.append(1)
        if len(steps) == 6:  # mid-way through epoch 2 (4 steps per epoch)
            raise Stop
        return out

    torch.optim.SGD.step = step_then_maybe_stop
    try:
        with pytest.raises(Stop):
            train(model, batches, cfg, device="cpu", checkpoint=ckpt, progress=False)
    finally:
        torch.optim.SGD.step = orig_step
    assert ckpt.exists()
    resumed, history = _train(tiny_split, cfg, checkpoint=ckpt)
    assert all(torch.equal(p, q) for p, q in zip(full.state_dict().values(), resumed.state_dict().values()))
    # issue 50, finding 6: the seconds the interrupted run had spent travel with the history, so
    # the ledger counts them as cached, not as this run's compute
    assert 0 < history.resumed_seconds <= history[-1]["seconds"]
    from stitchkit.base import store

    store._LEDGER.clear()
    store._record("k", {"train_seconds": 10.0, "resumed_seconds": 4.0}, new=True)
    store._record("c", {"train_seconds": 3.0}, new=False)
    summary = store.ledger_summary()
    assert summary["new_seconds"] == 6.0 and summary["cached_seconds"] == 7.0
    store._LEDGER.clear()


def test_nan_loss_is_reported_with_advice(tiny_split):
    with pytest.raises(FloatingPointError, match="lower the learning rate"):
        _train(tiny_split, TrainConfig(epochs=1, batch_size=16, lr=1e30, momentum=0.0, precision="fp32"))


def test_schedules():
    cfg = TrainConfig(schedule="multistep", milestones=(0.5, 0.75), gamma=0.2)
    assert [lr_factor(cfg, s, 100) for s in (0, 49, 50, 75, 99)] == [1, 1, 0.2, pytest.approx(0.04), pytest.approx(0.04)]
    cos = TrainConfig(schedule="cosine")
    assert lr_factor(cos, 0, 100) == 1 and lr_factor(cos, 50, 100) == pytest.approx(0.5)
    warm = TrainConfig(schedule="warmup_cosine", warmup=0.1)
    assert lr_factor(warm, 4, 100) == pytest.approx(0.5) and lr_factor(warm, 10, 100) == pytest.approx(1.0)
    assert TrainConfig(epochs=1.5).total_steps(10) == 15 and TrainConfig(steps=7).total_steps(10) == 7
    lin = TrainConfig(schedule="warmup_linear", warmup=0.1)  # warm-up, then a straight line down to zero
    assert lr_factor(lin, 4, 100) == pytest.approx(0.5) and lr_factor(lin, 10, 100) == pytest.approx(1.0)
    assert lr_factor(lin, 55, 100) == pytest.approx(0.5) and lr_factor(lin, 100, 100) == 0.0


def test_bad_config_names_valid_choices():
    with pytest.raises(ValueError, match="valid: sgd, adam"):
        TrainConfig(optimizer="lamb")
    with pytest.raises(ValueError, match="valid: constant"):
        TrainConfig(schedule="onecycle")
    with pytest.raises(ValueError, match="valid: auto, bf16, fp32"):
        TrainConfig(precision="fp16")


def test_training_learns_a_learnable_task(tiny_split):
    model, history = _train(tiny_split, TrainConfig(epochs=8, batch_size=16, lr=0.02, augment=False,
                                                    precision="fp32", schedule="constant"))
    assert history[-1]["loss"] < history[0]["loss"]
    acc = evaluate(model, Batches(tiny_split, 32, normalisation="cifar"), device="cpu", precision="fp32")["accuracy"]
    assert acc > 0.2 and not math.isnan(acc)


def test_mse_objective_regresses_onto_a_target_representation():
    """The pluggable objective: a linear map trained with MSE onto targets made by another map."""
    from stitchkit.networks.train import mse
    from stitchkit.stitching.stitches import TensorBatches

    g = torch.Generator().manual_seed(0)
    x = torch.randn(256, 6, generator=g)
    target = x @ torch.randn(6, 3, generator=g)
    model = torch.nn.Linear(6, 3)
    cfg = TrainConfig(epochs=30, batch_size=32, optimizer="adam", lr=0.05, weight_decay=0.0, schedule="constant",
                      augment=False, precision="fp32")
    history = train(model, TensorBatches(x, target, 32, shuffle=True), cfg, device="cpu", objective=mse, progress=False)
    assert history[-1]["loss"] < 0.01 * history[0]["loss"] and history[-1]["train_accuracy"] is None


def test_simclr_resume_continues_the_augmentation_stream(tiny_split, tmp_path):
    """SimCLR's views come from the objective's own generator: a run stopped after epoch 1 and
    resumed from its checkpoint ends with the weights of the uninterrupted run."""
    from stitchkit.networks import simclr

    cfg = TrainConfig(epochs=2, batch_size=16, optimizer="adam", lr=1e-3, weight_decay=0.0, augment=False,
                      precision="fp32", seed=0)

    def run(stop: float, ckpt=None):
        backbone = build_model("resnet10", seed=0, width=4)
        net = simclr.SimCLRNet(backbone, backbone.head.in_features, projection_dim=8)
        batches = Batches(tiny_split, 16, normalisation="none", shuffle=True, drop_last=True, seed=0)
        import dataclasses
        train(net, batches, dataclasses.replace(cfg, stop=stop), device="cpu", checkpoint=ckpt, progress=False,
              objective=simclr.objective("cifar", 0.5, 0))
        return net

    full = run(1.0)
    ckpt = tmp_path / "simclr.pt"
    run(0.5, ckpt)
    resumed = run(1.0, ckpt)
    assert all(torch.equal(p, q) for p, q in zip(full.state_dict().values(), resumed.state_dict().values()))


def test_a_compilation_failure_falls_back_to_eager_training_with_a_warning(tiny_split, monkeypatch):
    eager, _ = _train(tiny_split)

    def broken_compile(model):
        def fail(*args, **kwargs):
            raise RuntimeError("no C++ compiler")
        return fail

    monkeypatch.setattr(torch, "compile", broken_compile)
    model = build_model("resnet10", seed=0, width=4)
    batches = Batches(tiny_split, CFG.batch_size, normalisation="cifar", shuffle=True, augment=CFG.augment,
                      drop_last=True, seed=CFG.seed)
    with pytest.warns(UserWarning, match="torch.compile failed .*no C\\+\\+ compiler"):
        train(model, batches, CFG, device="cpu", progress=False, compile=True)
    assert all(torch.equal(p, q) for p, q in zip(eager.state_dict().values(), model.state_dict().values()))


def test_a_checkpoint_from_another_precision_is_not_resumed(tiny_split, tmp_path):
    """A model is trained in one precision: a bf16 checkpoint is not continued in fp32 (the
    run starts over, saying why), and the checkpoint records the precision it was written in."""
    ckpt = tmp_path / "ckpt.pt"
    _train(tiny_split, dataclasses.replace(CFG, epochs=1, precision="bf16"), checkpoint=ckpt)
    from stitchkit.networks.train import read_checkpoint
    assert read_checkpoint(ckpt)["precision"] == "bf16"
    with pytest.warns(UserWarning, match="trained in bf16 and this run trains in fp32"):
        model, history = _train(tiny_split, dataclasses.replace(CFG, epochs=1), checkpoint=ckpt)
    fresh, fresh_history = _train(tiny_split, dataclasses.replace(CFG, epochs=1))
    assert [r["loss"] for r in history] == [r["loss"] for r in fresh_history]
    assert read_checkpoint(ckpt)["precision"] == "fp32"


def test_gradient_clipping_bounds_the_update_and_keeps_old_cache_keys(tiny_split):
    from stitchkit.base.store import config_key
    assert config_key(TrainConfig()) == config_key(TrainConfig(clip_norm=None))
    assert config_key(TrainConfig()) != config_key(TrainConfig(clip_norm=1.0))
    with pytest.raises(ValueError, match="clip_norm"):
        TrainConfig(clip_norm=0)
    cfg = TrainConfig(steps=1, batch_size=16, lr=1.0, momentum=0.0, weight_decay=0.0, schedule="constant",
                      augment=False, precision="fp32", clip_norm=1e-3)
    model = build_model("resnet10", seed=0, width=4)
    before = [p.detach().clone() for p in model.parameters()]
    batches = Batches(tiny_split, 16, normalisation="cifar", shuffle=True, augment=False, drop_last=True, seed=0)
    train(model, batches, cfg, device="cpu", progress=False)
    moved = torch.sqrt(sum(((p.detach() - b) ** 2).sum() for p, b in zip(model.parameters(), before)))
    assert 0 < moved.item() <= 1e-3 * (1 + 1e-4)  # plain SGD, lr 1: the step is the clipped gradient


def test_label_smoothing_and_nesterov_train_and_keep_old_cache_keys(tiny_split):
    """The gpu recipes' label smoothing and Nesterov momentum (issue 47): off by default, so that
    every network trained before keeps its cache key; on, they change the run."""
    from stitchkit.base.store import config_key
    assert config_key(TrainConfig()) == config_key(TrainConfig(label_smoothing=0.0, nesterov=False))
    assert config_key(TrainConfig()) != config_key(TrainConfig(label_smoothing=0.1))
    with pytest.raises(ValueError, match="label_smoothing"):
        TrainConfig(label_smoothing=1.0)
    with pytest.raises(ValueError, match="nesterov needs optimizer 'sgd'"):
        TrainConfig(optimizer="adam", nesterov=True)
    base = dict(steps=3, batch_size=16, lr=0.05, augment=False, precision="fp32", schedule="constant")
    weights = {}
    for name, extra in (("plain", {}), ("smooth", {"label_smoothing": 0.2}), ("nesterov", {"nesterov": True})):
        model = build_model("resnet10", seed=0, width=4)
        batches = Batches(tiny_split, 16, normalisation="cifar", shuffle=True, augment=False, drop_last=True, seed=0)
        history = train(model, batches, TrainConfig(**base, **extra), device="cpu", progress=False)
        assert history[-1]["train_accuracy"] is not None  # still scored as a classifier
        weights[name] = torch.cat([p.detach().flatten() for p in model.parameters()])
    assert not torch.equal(weights["plain"], weights["smooth"]) and not torch.equal(weights["plain"], weights["nesterov"])
