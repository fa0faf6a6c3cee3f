"""The content-addressed store: stable keys, atomic writes, corrupt-entry recovery."""

from dataclasses import dataclass, field

import pytest
import torch

from stitchkit.base.store import Store, canonical, config_key
from stitchkit.data.datasets import DataSpec
from stitchkit.networks.network import ModelSpec
from stitchkit.networks.train import TrainConfig

# The key of this spec must never change: models trained on a GPU have to survive library growth.
PINNED_SPEC = ModelSpec(model="preact_resnet18", width=16, seed=1, train=TrainConfig(epochs=5))
PINNED_KEY = "34631e42dc3af99ee84ace93db6c1a4ab661309d5b7a158eba7e34e23916afae"


def test_key_of_a_fixed_spec_is_pinned():
    assert config_key(PINNED_SPEC) == PINNED_KEY, canonical(PINNED_SPEC)


def test_key_depends_on_every_field_that_differs_from_its_default():
    a = ModelSpec(width=8)
    assert config_key(a) == config_key(ModelSpec(width=8))
    assert config_key(a) != config_key(ModelSpec(width=8, seed=1))
    assert config_key(a) != config_key(ModelSpec(width=8, train=TrainConfig(lr=0.1)))
    assert config_key(a) != config_key(ModelSpec(width=8, data=DataSpec(train_size=100)))
    assert config_key(ModelSpec(train=TrainConfig(epochs=5))) == config_key(ModelSpec(train=TrainConfig(epochs=5.0)))


def test_adding_a_field_with_a_default_keeps_every_existing_key():
    def make(extra: bool):
        @dataclass(frozen=True)
        class Spec:
            width: int = 64
            nested: TrainConfig = field(default_factory=TrainConfig)
            if extra:
                new_option: str = "off"
        return Spec

    old, new = make(False), make(True)
    assert config_key(old(width=8)) == config_key(new(width=8))
    assert config_key(old(width=8)) != config_key(new(width=8, new_option="on"))


def test_a_field_always_in_the_key_retires_the_entries_computed_before_it():
    @dataclass(frozen=True)
    class Old:
        width: int = 64

    @dataclass(frozen=True)
    class Old_fixed:  # the same spec after a defect fix, with the field marking it
        width: int = 64
        fixed: bool = True
        ALWAYS_IN_KEY = ("fixed",)

    Old_fixed.__name__ = "Old"  # the same type name, as after an edit of the class
    assert canonical(Old_fixed()) == {"__type__": "Old", "fixed": True}
    assert config_key(Old()) != config_key(Old_fixed())


def test_precision_is_not_part_of_the_key():
    assert config_key(ModelSpec(train=TrainConfig(precision="bf16"))) == config_key(
        ModelSpec(train=TrainConfig(precision="fp32")))


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


def test_a_valid_entry_under_another_key_is_corrupt_and_recomputed(tmp_path):
    """Issue 50, finding 5: copying one entry's file over another's must not pass as the other."""
    store = Store(tmp_path)
    store.put({"x": 1}, {"v": 1}, {"w": torch.ones(3)})
    store.put({"x": 2}, {"v": 2}, {"w": torch.zeros(3)})
    store.path(config_key({"x": 2})).write_bytes(store.path(config_key({"x": 1})).read_bytes())
    with pytest.warns(UserWarning, match="hashes to .* not to its name"):
        assert store.get({"x": 2}) is None
    entry = store.get_or_compute({"x": 2}, lambda: ({"v": 22}, {"w": torch.zeros(3)}))
    assert entry.metrics == {"v": 22} and store.get({"x": 1}).metrics == {"v": 1}


def test_failed_write_leaves_old_entry_intact(tmp_path, monkeypatch):
    store = Store(tmp_path)
    store.put({"x": 1}, {"v": 1}, {})
    import stitchkit.base.fileio as sio

    def boom(*a, **k):
        raise OSError("disk full")

    monkeypatch.setattr(sio.os, "replace", boom)
    with pytest.raises(OSError):
        store.put({"x": 1}, {"v": 2}, {})
    monkeypatch.undo()
    assert store.get({"x": 1}).metrics == {"v": 1}
    assert not list(tmp_path.rglob("*.tmp"))


def test_unkeyable_values_are_refused():
    with pytest.raises(TypeError, match="cannot key"):
        config_key({"x": object()})


def test_ledger_counts_computed_and_cached_entries_once(tmp_path, monkeypatch):
    from stitchkit.base import store as store_mod

    monkeypatch.setattr(store_mod, "_LEDGER", {})
    store = Store(tmp_path)
    a, b = ModelSpec(width=4), ModelSpec(width=8)
    store.put(a, {"train_seconds": 12.5}, {"w": torch.zeros(1)})
    Store(tmp_path).put(b, {"seconds": 3.0}, {})
    store_mod._LEDGER.clear()  # a new run finds both in the cache...
    assert store.get(a) is not None and store.get(a) is not None  # ... and reads one twice
    c = ModelSpec(width=16)
    store.get_or_compute(c, lambda: ({"seconds": 1.0}, {}))  # and computes a third
    summary = store_mod.ledger_summary()
    assert summary["new_seconds"] == 1.0 and summary["cached_seconds"] == 12.5
    assert sorted(summary["entries"].values()) == [1.0, 12.5]
    assert all(len(k) == 16 for k in summary["entries"])
    assert summary["unrecorded"] == 0
    d = ModelSpec(width=32)
    store.put(d, {"accuracy": 0.5}, {})  # an entry made before compute times were recorded...
    store_mod._LEDGER.clear()
    store.get(d)  # ... found in the cache: its cost is unknown, and the summary says so
    assert store_mod.ledger_summary()["unrecorded"] == 1


def test_atomic_writes_get_an_ordinary_files_mode_not_0600(tmp_path):
    # issue 50: a shared cache (the cluster set-up) needs its entries readable by the other users
    import os
    import stat

    from stitchkit.base.fileio import atomic_write_bytes

    old = os.umask(0o022)
    try:
        path = atomic_write_bytes(tmp_path / "x.bin", b"data")
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == 0o644


class _Payload:
    """A pickle whose loading would write a file: the marker proves the code ran."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        from pathlib import Path

        return (Path(self.marker).write_text, ("ran",))


def _first_format(config, metrics, tensors) -> bytes:
    """An entry file as the first format wrote it: the whole document pickled after a checksummed header."""
    import hashlib
    import io

    buf = io.BytesIO()
    torch.save({"config": canonical(config), "metrics": metrics, "tensors": tensors}, buf)
    payload = buf.getvalue()
    return b"STITCHKIT-ENTRY 1 " + hashlib.sha256(payload).hexdigest().encode() + b"\n" + payload


def test_a_planted_cache_entry_with_a_valid_checksum_runs_nothing(tmp_path):
    """Issue 66, finding 1: an entry was unpickled (weights_only=False) before its key was checked,
    so a file with a valid checksum header ran its payload. Planted in either format, under the
    right key and with the right checksum, nothing runs and the entry is recomputed."""
    import hashlib
    import io
    import json

    store = Store(tmp_path / "store")
    marker = tmp_path / "ran.txt"
    path = store.path(config_key({"x": 1}))
    path.parent.mkdir(parents=True)
    path.write_bytes(_first_format({"x": 1}, {"v": _Payload(marker)}, {}))
    with pytest.warns(UserWarning, match="not tensors and plain data"):
        assert store.get({"x": 1}) is None
    assert not marker.exists()
    buf = io.BytesIO()
    torch.save({"metrics": {"v": _Payload(marker)}, "tensors": {}}, buf)
    rest = json.dumps({"config": canonical({"x": 1}), "salt": None}).encode() + b"\n" + buf.getvalue()
    path.write_bytes(b"STITCHKIT-ENTRY 2 " + hashlib.sha256(rest).hexdigest().encode() + b"\n" + rest)
    with pytest.warns(UserWarning, match="not tensors and plain data"):
        assert store.get({"x": 1}) is None
    assert not marker.exists()
    # planted under another key: refused from its identity line, before its payload is read at all
    other = store.path(config_key({"x": 2}))
    other.parent.mkdir(parents=True, exist_ok=True)
    other.write_bytes(b"STITCHKIT-ENTRY 2 " + hashlib.sha256(rest).hexdigest().encode() + b"\n" + rest)
    with pytest.warns(UserWarning, match="hashes to .* not to its name"):
        assert store.get({"x": 2}) is None
    assert not marker.exists()


def test_an_entry_of_the_first_format_is_read_and_migrated(tmp_path):
    """The cache format changed: a network cached before is read (safely) and rewritten in the
    second format, not trained again."""
    import numpy as np

    store = Store(tmp_path)
    path = store.path(config_key({"x": 1}))
    path.parent.mkdir(parents=True)
    w = torch.arange(4.0)
    path.write_bytes(_first_format({"x": 1}, {"acc": 0.5, "history": [{"loss": 1.0}], "packed": b"\x01"}, {"w": w}))
    entry = store.get({"x": 1})
    assert entry.metrics == {"acc": 0.5, "history": [{"loss": 1.0}], "packed": b"\x01"} and torch.equal(entry.tensors["w"], w)
    assert path.read_bytes().startswith(b"STITCHKIT-ENTRY 2 ")
    again = store.get({"x": 1})
    assert again.metrics == entry.metrics and torch.equal(again.tensors["w"], w)
    # a first-format entry whose metrics hold numpy scalars migrates too (its network is not trained again)
    path3 = store.path(config_key({"x": 5}))
    path3.parent.mkdir(parents=True, exist_ok=True)
    path3.write_bytes(_first_format({"x": 5}, {"acc": np.float64(0.75), "n": np.int64(4)}, {"w": w}))
    got5 = store.get({"x": 5}).metrics
    assert got5 == {"acc": 0.75, "n": 4} and type(got5["n"]) is int
    assert store.get({"x": 5}).metrics == got5 and path3.read_bytes().startswith(b"STITCHKIT-ENTRY 2 ")
    # numpy scalars become Python numbers; other objects are refused at write time, naming them
    store.put({"x": 3}, {"n": np.int64(3), "f": np.float64(0.25), "b": np.bool_(True)}, {})
    got = store.get({"x": 3}).metrics
    assert got == {"n": 3, "f": 0.25, "b": True} and type(got["n"]) is int and type(got["b"]) is bool
    with pytest.raises(TypeError, match=r"metrics\['arr'\] is a numpy.ndarray"):
        store.put({"x": 4}, {"arr": np.zeros(3)}, {})
    assert store.get({"x": 4}) is None


def test_a_planted_training_checkpoint_runs_nothing(tmp_path):
    """A training checkpoint (partial/) is read as tensors and plain data only: a planted one is
    refused as unusable and training starts over."""
    from stitchkit.networks.train import read_checkpoint, write_checkpoint

    marker = tmp_path / "ran.txt"
    write_checkpoint(tmp_path / "c.pt", {"model": {}, "optimizer": {}, "scheduler": {}, "generator": _Payload(marker),
                                         "step": 0, "history": []})
    with pytest.raises(ValueError, match="refused unread"):
        read_checkpoint(tmp_path / "c.pt")
    assert not marker.exists()


def test_claim_lets_the_caller_compute_in_its_own_frame(tmp_path):
    """Issue 63: a claim is get_or_compute taken apart (get; lock; get again; the caller computes
    and puts), so the computation runs in the caller's frame; a claimed entry already stored is
    yielded as it is, and claim_all locks the absent keys of several together."""
    store = Store(tmp_path)
    with store.claim({"x": 1}, salt="s") as slot:
        assert slot.entry is None
        entry = slot.put({"v": 1}, {"w": torch.ones(2)})
    assert slot.entry is entry and store.get({"x": 1}, salt="s").metrics == {"v": 1}
    with store.claim({"x": 1}, salt="s") as again:
        assert again.entry.metrics == {"v": 1} and again.entry.key == config_key({"x": 1}, "s")
    store.put({"y": 2}, {"v": 2}, {})
    with store.claim_all([{"y": 2}, {"y": 3}]) as slots:
        assert [s.entry is None for s in slots] == [False, True]
        assert (tmp_path.parent / "locks" / f"{config_key({'y': 3})}.lock").exists()
        assert not (tmp_path.parent / "locks" / f"{config_key({'y': 2})}.lock").exists()
        slots[1].put({"v": 3}, {})
    assert store.get({"y": 3}).metrics == {"v": 3}
