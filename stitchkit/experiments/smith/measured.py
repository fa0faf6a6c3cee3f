"""What the experiments measure, shared by every page: the Clustered-Noise sender, the
numerical rank at the receiver's first layer after a stitch (and at the same layer unstitched),
a zoo model's own accuracy, per-layer summaries over initialisations, and the swap of retrained
stitches into a table (the training-length control)."""

from __future__ import annotations

import zlib
from dataclasses import dataclass

import pandas as pd
import torch
from torch import nn

from ...base.hardware import as_device, channels_last_ok
from ...base.store import Store
from ...data import batches as data_mod
from ...data import colour_mnist
from ...data.datasets import DataSpec, combined_fingerprint, test_split
from ...measures.similarity import numerical_rank
from ...networks.models import CutModel
from ...networks.train import evaluate
from ...stitching.grid import load_stitched
from ...stitching.grid_spec import Net, StitchRecipe
from .config import CUT_LABELS, NOISE, StitchConfig

# --------------------------------------------------------------------------------------------
# Noise sender


@dataclass(frozen=True)
class NoiseSpec:
    """The Clustered-Noise sender's identity (its stitches' cache key)."""

    kind: str = "clustered_noise"
    seed: int = 0
    noise: float = 0.1
    train_per_class: int = 6000
    test_per_class: int = 1000


@dataclass
class NoiseSender:
    """A tensor-source sender (:class:`stitchkit.stitching.grid_spec.TensorSource`): fresh clustered noise in
    the receiver's shape at every cut (the paper regenerates it per cut)."""

    name: str
    spec: NoiseSpec

    def tensors(self, cut: str, shape: tuple[int, ...], split: str) -> tuple[torch.Tensor, torch.Tensor]:
        per_class = self.spec.train_per_class if split == "train" else self.spec.test_per_class
        seed = zlib.crc32(f"{self.spec.seed}/{cut}".encode())
        if self.spec.kind == "label_free_noise":  # one cluster for every class: no label information at all
            x, _ = colour_mnist.clustered_noise(shape, split, seed=seed, noise=self.spec.noise,
                                                per_class=10 * per_class, num_classes=1)
            return x, torch.arange(10).repeat_interleave(per_class)
        return colour_mnist.clustered_noise(shape, split, seed=seed, noise=self.spec.noise, per_class=per_class)


NOISE_KINDS = ("clustered_noise", "label_free_noise")


def noise_sender(cfg: StitchConfig, seed: int, kind: str = "clustered_noise", name: str = NOISE) -> NoiseSender:
    """The Clustered-Noise sender (the paper's), or with ``kind="label_free_noise"`` the negative
    control's: the same noise around one base for every class, so it carries no label information."""
    if kind not in NOISE_KINDS:
        raise ValueError(f"unknown noise kind {kind!r}; valid: {', '.join(NOISE_KINDS)}")
    test = 1000 if cfg.test_size is None else max(1, cfg.test_size // 10)
    return NoiseSender(name, NoiseSpec(kind=kind, seed=seed, train_per_class=cfg.noise_per_class, test_per_class=test))


# --------------------------------------------------------------------------------------------
# Rank


def first_layer_after(model: CutModel, cut: str) -> nn.Module:
    """The receiver's first layer after ``cut``: its first conv, or the classifier."""
    start = model.check_cut(cut)
    for piece in list(model.pieces.values())[start + 1:] + [model.head]:
        for m in piece.modules():
            if isinstance(m, (nn.Conv2d, nn.Linear)):
                return m
    raise ValueError(f"no conv or linear layer after cut {cut!r}")


@torch.no_grad()
def _layer_output(run, layer: nn.Module, inputs) -> torch.Tensor:
    """Flattened outputs of ``layer`` while ``run`` is applied to each of ``inputs``."""
    outs: list[torch.Tensor] = []
    hook = layer.register_forward_hook(lambda _m, _i, o: outs.append(o.float().reshape(o.shape[0], -1).cpu()))
    try:
        for x in inputs:
            run(x)
    finally:
        hook.remove()
    return torch.cat(outs)


def stitched_rank(sender, receiver: Net, cut: str, recipe: StitchRecipe, data: DataSpec, *, store: Store,
                  device=None, images: int | None = None) -> int:
    """Numerical rank at the receiver's first layer after the stitch, on the test data (the
    noise test set for a noise sender; ``images``: its first ``images // 10`` examples of each
    class); cached in the store."""
    spec = {"kind": "smith_rank", "sender": sender.spec, "receiver": receiver.spec, "cut": cut, "recipe": recipe,
            "data": data, **({"images": images} if images is not None else {})}

    def compute():
        device_ = as_device(device)
        stitched, _ = load_stitched(sender, receiver, cut, cut, recipe, data, device=device_, store=store)
        layer = first_layer_after(stitched.receiver, cut)
        if isinstance(sender, NoiseSender):
            shape = stitched.receiver.cut_shapes(tuple(test_split(data, recipe.test_size, recipe.subset_seed)
                                                       .images.shape[1:]))[cut]
            x, y = sender.tensors(cut, shape, "test")
            if images is not None and images < len(x):  # the first images // 10 of each class
                keep = torch.cat([torch.nonzero(y == c).flatten()[:max(1, images // 10)] for c in y.unique()])
                x = x[keep.sort().values]
            feats = _layer_output(stitched.top, layer, (b.to(device_) for b in x.split(500)))
        else:
            test = test_split(data, recipe.test_size, recipe.subset_seed)
            batches = data_mod.Batches(test, 500, normalisation=sender.spec.normalisation, device=device_,
                                       channels_last=channels_last_ok(stitched.sender))
            feats = _layer_output(stitched, layer, (x for x, _ in batches))
        return {"rank": numerical_rank(feats), "features": feats.shape[1], "n": feats.shape[0]}, {}

    salt = combined_fingerprint(data, receiver.spec.data, *([] if isinstance(sender, NoiseSender) else
                                                             [sender.spec.data]))
    return int(store.get_or_compute(spec, compute, salt=salt).metrics["rank"])


def baseline_rank(model: CutModel, cut: str, data: DataSpec, normalisation: str, test_size: int | None,
                  device=None) -> int:
    """Rank at the same layer of the unstitched model on ``data``'s test set."""
    device_ = as_device(device)
    test = test_split(data, test_size)
    batches = data_mod.Batches(test, 500, normalisation=normalisation, device=device_,
                               channels_last=channels_last_ok(model))
    return numerical_rank(_layer_output(model, first_layer_after(model, cut), (x for x, _ in batches)))


# --------------------------------------------------------------------------------------------
# Accuracy and tables


def recipe_net(cfg: StitchConfig, name: str, seed: int) -> Net:
    return Net(name, cfg.model(name, seed))


def accuracy_on(net: Net, data: DataSpec, test_size: int | None, *, store: Store, device=None,
                per_image: bool = False):
    """Test accuracy of a zoo model on ``data``'s test set (``per_image``: the (n,) bool array of
    which images it gets right, whose mean is that accuracy)."""
    device_ = as_device(device)
    model = net.load(device_, store, None, True)
    batches = data_mod.Batches(test_split(data, test_size), 500, normalisation=net.spec.normalisation,
                               device=device_, channels_last=channels_last_ok(model))
    out = evaluate(model, batches, device=device_, per_image=per_image)
    return out["correct"] if per_image else out["accuracy"]


def per_layer(table: pd.DataFrame, value: str = "accuracy") -> pd.DataFrame:
    """Mean, min, max and standard deviation of ``value`` over initialisations, per sender and cut."""
    g = table.groupby(["sender", "cut"], sort=False)[value]
    out = pd.DataFrame({"mean": g.mean(), "min": g.min(), "max": g.max(), "sd": g.std(ddof=1).fillna(0.0)})
    return out.reset_index().assign(layer=lambda t: t.cut.map(CUT_LABELS))


ACC = {"correct": "accuracy", "baseline_correct": "baseline"}  # per-image column -> accuracy column
