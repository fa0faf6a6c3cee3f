import pytest
import torch

from stitchkit import cache
from stitchkit.cache import ModelSpec, Store, config_key, load_or_train
from stitchkit.train import TrainConfig
from conftest import write_cifar_pickles


def test_key_depends_on_every_field():
    a = ModelSpec(width=8)
    assert config_key(a) == config_key(ModelSpec(width=8))
    assert config_key(a) != config_key(ModelSpec(width=8, seed=1))
    assert config_key(a) != config_key(ModelSpec(width=8, train=TrainConfig(lr=0.1)))


def test_put_get_roundtrip_and_atomic_files(tmp_path):
    store = Store(tmp_path)
    t = {"w": torch.arange(6.0).view(2, 3)}
    store.put({"x": 1}, {"acc": 0.5}, t)
    entry = store.get({"x": 1})
    assert entry.metrics == {"acc": 0.5} and torch.equal(entry.tensors["w"], t["w"])
    assert not list(tmp_path.rglob("*.tmp"))  # no temporary files left behind
    assert store.get({"x": 2}) is None


@pytest.mark.parametrize("damage", ["truncate", "flip", "empty"])
def test_corrupt_entry_is_detected_and_recomputed(tmp_path, damage):
    store = Store(tmp_path)
    store.put({"x": 1}, {"v": 1}, {"w": torch.ones(100)})
    path = store.path(config_key({"x": 1}))
    raw = path.read_bytes()
    path.write_bytes({"truncate": raw[: len(raw) // 2], "flip": raw[:-10] + bytes(10), "empty": b""}[damage])
    with pytest.warns(UserWarning, match="corrupt"):
        assert store.get({"x": 1}) is None
    calls = []
    entry = store.get_or_compute({"x": 1}, lambda: (calls.append(1) or {"v": 2}, {"w": torch.zeros(1)}))
    assert calls == [1] and entry.metrics == {"v": 2}


def test_failed_write_leaves_old_entry_intact(tmp_path, monkeypatch):
    store = Store(tmp_path)
    store.put({"x": 1}, {"v": 1}, {})
    import stitchkit.fileio as sio

    def boom(*a, **k):
        raise OSError("disk full")

    monkeypatch.setattr(sio.os, "replace", boom)
    with pytest.raises(OSError):
        store.put({"x": 1}, {"v": 2}, {})
    monkeypatch.undo()
    assert store.get({"x": 1}).metrics == {"v": 1}
    assert not list(tmp_path.rglob("*.tmp"))


def test_load_or_train_trains_once_then_loads(tmp_path, monkeypatch):
    write_cifar_pickles(tmp_path, n_train=50, n_test=20)
    spec = ModelSpec(model="resnet10", width=4, train=TrainConfig(epochs=1, batch_size=10, precision="fp32"))
    model, metrics = load_or_train(spec, device="cpu", root=tmp_path, progress=False)
    assert set(metrics) >= {"test", "history", "images_per_second"} and metrics["test"]["n"] == 20
    monkeypatch.setattr(cache, "train", lambda *a, **k: pytest.fail("trained twice"))
    again, _ = load_or_train(spec, device="cpu", root=tmp_path, progress=False)
    assert all(torch.equal(p, q) for p, q in zip(model.state_dict().values(), again.state_dict().values()))
    untrained = ModelSpec(model="resnet10", width=4, train=TrainConfig(epochs=0))
    _, m0 = load_or_train(untrained, device="cpu", root=tmp_path, progress=False)
    assert m0["history"] == []


def test_spec_validation():
    with pytest.raises(ValueError, match="valid: none, objects_vs_animals, random"):
        ModelSpec(labels="coarse")
    with pytest.raises(ValueError, match="valid: cifar10, mnist"):
        ModelSpec(dataset="svhn")


def test_label_transforms_reach_training_and_test_data(tmp_path):
    write_cifar_pickles(tmp_path, n_train=50, n_test=20)
    coarse = ModelSpec(labels="objects_vs_animals", train_size=20)
    train = cache.training_split(coarse, tmp_path)
    assert len(train) == 20 and train.classes == ("animal", "object") and set(train.labels.tolist()) <= {0, 1}
    assert set(cache.task_test_split(coarse, tmp_path).labels.tolist()) <= {0, 1}
    noisy = cache.training_split(ModelSpec(labels="random", label_noise=1.0, seed=0), tmp_path)
    clean = cache.training_split(ModelSpec(), tmp_path)
    assert not torch.equal(noisy.labels, clean.labels) and torch.equal(noisy.images, clean.images)
