"""Out-of-distribution detectors on a layer's activations (Balogh & Jelasity's OOD analysis).

A detector for layer ``cut`` of a network is a classifier whose *input* is that layer's
activations: a small ResNet (maps bilinearly resized to 32 x 32, in-channels = the layer's) or a
few transformer blocks (tokens). Following Liu et al. 2020 ("Energy-based out-of-distribution
detection") it is first trained to classify the layer's activations on the training images,
then fine-tuned with

    CE + weight * [ mean relu(E_in - m_in)^2 + mean relu(m_out - E_out)^2 ],  E = -logsumexp(logits),

where "in" are the layer's activations on training images and "out" its activations on an
auxiliary outlier set passed through the same network. Its score is the energy E: higher means
more out of distribution. :func:`auroc` compares two sets of scores (0.5: indistinguishable).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
import torch
from torch import nn

from . import data as data_mod
from .datasets import DataSpec, train_split
from .hardware import as_device, narrow_conv_guard
from .models import ClsPool, CutModel, EncoderBlock, build_model
from .progress import progress_bar
from .store import Store
from .train import TrainConfig, make_optimizer, lr_factor
from .zoo import ModelSpec


@dataclass(frozen=True)
class DetectorRecipe:
    """How every detector is built and trained."""

    conv_model: str = "resnet18"  # registry name of the detector for conv maps
    conv_width: int = 64
    vit_blocks: int = 2  # transformer blocks of the detector for tokens
    train_size: int | None = None  # training images (in-distribution); None: all
    aux: DataSpec = field(default_factory=lambda: DataSpec("mnist_grey3", size=32))  # the outlier set
    aux_size: int | None = None
    pretrain_epochs: float = 10.0
    finetune_epochs: float = 10.0
    batch_size: int = 128  # in-distribution images per step (outliers: twice as many while fine-tuning)
    lr: float = 1e-3  # Adam, cosine
    m_in: float = -25.0
    m_out: float = -7.0
    weight: float = 0.1
    seed: int = 0
    # Fine-tuning passes the in-distribution and the outlier batch through the detector as one
    # batch (as Liu et al.'s code does), so its BatchNorm normalises them together. Our first
    # version made two passes, each batch normalised by its own statistics in training; its
    # detectors are not reused (the field is always in the key).
    joint_batch: bool = True

    ALWAYS_IN_KEY: ClassVar[tuple[str, ...]] = ("joint_batch",)


@dataclass(frozen=True)
class DetectorSpec:
    """One detector's cache key: the network, its layer, the recipe."""

    network: ModelSpec
    cut: str
    recipe: DetectorRecipe


class _Resize(nn.Module):
    def __init__(self, size: int) -> None:
        super().__init__()
        self.size = size

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        if h.shape[-1] == self.size:
            return h
        return nn.functional.interpolate(h, size=(self.size, self.size), mode="bilinear", align_corners=False)


class _TokenDetector(nn.Module):
    def __init__(self, dim: int, heads: int, blocks: int, num_classes: int) -> None:
        super().__init__()
        self.blocks = nn.Sequential(*[EncoderBlock(dim, heads) for _ in range(blocks)])
        self.pool = ClsPool(dim)
        self.head = nn.Linear(dim, num_classes)

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        return self.head(self.pool(self.blocks(h)))


def build_detector(shape: tuple[int, ...], recipe: DetectorRecipe, num_classes: int = 10, *,
                   heads: int = 1) -> nn.Module:
    """A detector for activations of ``shape`` ((C, H, W) maps or (T, D) tokens)."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(recipe.seed)
        if len(shape) == 3:
            body = build_model(recipe.conv_model, width=recipe.conv_width, num_classes=num_classes,
                               in_channels=shape[0])
            return nn.Sequential(_Resize(32), body)
        if len(shape) == 2:
            return _TokenDetector(shape[1], heads, recipe.vit_blocks, num_classes)
    raise ValueError(f"no detector for activations of shape {shape}: give (C, H, W) maps or (T, D) tokens")


def energy(logits: torch.Tensor) -> torch.Tensor:
    """E = -logsumexp(logits) per example (float32)."""
    return -torch.logsumexp(logits.float(), dim=1)


def energy_loss(logits_in: torch.Tensor, y: torch.Tensor, logits_out: torch.Tensor, recipe: DetectorRecipe):
    ce = nn.functional.cross_entropy(logits_in, y)
    e_in, e_out = energy(logits_in), energy(logits_out)
    hinge = (nn.functional.relu(e_in - recipe.m_in) ** 2).mean() + (nn.functional.relu(recipe.m_out - e_out) ** 2).mean()
    return ce + recipe.weight * hinge


def auroc(in_scores, out_scores) -> float:
    """Area under the ROC curve of telling ``out_scores`` (positives, higher = more OOD) from
    ``in_scores``: P(out > in) + P(out = in) / 2 (Mann-Whitney). 0.5: indistinguishable."""
    from scipy.stats import rankdata

    a = np.asarray(in_scores, dtype=np.float64).ravel()
    b = np.asarray(out_scores, dtype=np.float64).ravel()
    if not len(a) or not len(b):
        raise ValueError(f"auroc needs scores on both sides, got {len(a)} and {len(b)}")
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        raise ValueError("auroc: scores contain NaN or inf")
    ranks = rankdata(np.concatenate([a, b]))
    return float((ranks[len(a):].sum() - len(b) * (len(b) + 1) / 2) / (len(a) * len(b)))


@torch.no_grad()
def _acts(model: CutModel, cut: str, x: torch.Tensor) -> torch.Tensor:
    return model.forward_to(x, cut).float()


def _heads(shape: tuple[int, ...]) -> int:
    """Attention heads of a token detector: one per 64 features (ViT-Ti: 3), at least one."""
    return max(1, shape[-1] // 64) if shape[-1] % max(1, shape[-1] // 64) == 0 else 1


def _epochs(batches, epochs: float):
    """Yield batches for ``epochs`` passes (fractional allowed) and the step count."""
    total = max(1, int(round(epochs * len(batches))))
    done = 0
    while done < total:
        for b in batches:
            yield b
            done += 1
            if done >= total:
                return


def finetune_logits(detector: nn.Module, a_in: torch.Tensor, a_out: torch.Tensor, *, joint: bool = True):
    """The detector's logits on in-distribution and outlier activations in a fine-tuning step:
    one pass over both (``joint``; BatchNorm in training mode normalises them together) or one
    pass each."""
    if not joint:
        return detector(a_in), detector(a_out)
    both = detector(torch.cat([a_in, a_out]))
    return both[:len(a_in)], both[len(a_in):]


def train_detector(network: CutModel, spec: ModelSpec, cut: str, recipe: DetectorRecipe, *, device=None,
                   root=None, progress: bool = True) -> tuple[nn.Module, dict]:
    """Pre-train (cross-entropy) then fine-tune (energy margins) a detector for ``cut`` of
    ``network``; returns it (eval mode) and its training metrics."""
    device = as_device(device)
    network.eval()
    train = train_split(DataSpec("cifar10", train_size=recipe.train_size), root)
    aux = train_split(DataSpec(recipe.aux.dataset, train_size=recipe.aux_size, size=recipe.aux.size), root)
    shape = tuple(network.shape_at(cut, tuple(train.images.shape[1:])))
    det = build_detector(shape, recipe, train.num_classes, heads=_heads(shape))
    det.to(device).train()
    opt = make_optimizer(det.parameters(), TrainConfig(optimizer="adam", lr=recipe.lr, weight_decay=0.0))
    ins = data_mod.Batches(train, recipe.batch_size, normalisation=spec.normalisation, shuffle=True, drop_last=True,
                           seed=recipe.seed, device=device)
    outs = data_mod.Batches(aux, 2 * recipe.batch_size, normalisation=spec.normalisation, shuffle=True,
                            drop_last=True, seed=recipe.seed + 1, device=device)
    history = {}
    t0 = time.perf_counter()
    with narrow_conv_guard(det, device):
        _train_phases(det, network, cut, recipe, opt, ins, outs, history, progress)
    history["seconds"] = time.perf_counter() - t0  # the compute a page's empty-cache estimate counts
    return det.eval(), history


def _train_phases(det, network, cut, recipe, opt, ins, outs, history, progress) -> None:
    for phase, epochs in (("pretrain", recipe.pretrain_epochs), ("finetune", recipe.finetune_epochs)):
        if epochs <= 0:
            continue
        total = max(1, int(round(epochs * len(ins))))
        sched = TrainConfig(optimizer="adam", lr=recipe.lr, schedule="cosine", epochs=epochs)
        out_iter = iter(_epochs(outs, 1e9)) if phase == "finetune" else None
        loss_sum = 0.0
        steps = _epochs(ins, epochs)
        for step, (x, y) in enumerate(progress_bar(iterable=steps, total=total, desc=f"detector {cut} {phase}",
                                                   disable=not progress)):
            for g in opt.param_groups:
                g["lr"] = recipe.lr * lr_factor(sched, step, total)
            if out_iter is None:
                loss = nn.functional.cross_entropy(det(_acts(network, cut, x)), y)
            else:
                xo, _ = next(out_iter)
                if recipe.joint_batch:  # the frozen network is in eval mode: one forward serves both
                    both = _acts(network, cut, torch.cat([x, xo]))
                    a_in, a_out = both[:len(x)], both[len(x):]
                else:
                    a_in, a_out = _acts(network, cut, x), _acts(network, cut, xo)
                logits, logits_out = finetune_logits(det, a_in, a_out, joint=recipe.joint_batch)
                loss = energy_loss(logits, y, logits_out, recipe)
            if not torch.isfinite(loss):
                raise FloatingPointError(f"detector for {cut}: loss is {float(loss)} at {phase} step {step}")
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            loss_sum += float(loss.detach())
        history[f"{phase}_loss"] = loss_sum / total


def load_or_train_detector(network: CutModel, spec: ModelSpec, cut: str, recipe: DetectorRecipe, *, device=None,
                           store: Store | None = None, root=None, progress: bool = True) -> tuple[nn.Module, dict]:
    """The detector for ``cut`` of the network ``spec`` (trained once, then read from the store)."""
    from .datasets import combined_fingerprint

    device = as_device(device)
    store = store or Store()
    key = DetectorSpec(spec, cut, recipe)
    salt = combined_fingerprint(spec.data, DataSpec("cifar10", train_size=recipe.train_size),
                                DataSpec(recipe.aux.dataset, train_size=recipe.aux_size, size=recipe.aux.size), root=root)
    trained = {}

    def compute():
        det, hist = train_detector(network, spec, cut, recipe, device=device, root=root, progress=progress)
        trained["det"] = det
        return hist, det.state_dict()

    entry = store.get_or_compute(key, compute, salt=salt)
    if "det" in trained:
        return trained["det"], entry.metrics
    train = train_split(DataSpec("cifar10", train_size=recipe.train_size), root)
    shape = tuple(network.shape_at(cut, tuple(train.images.shape[1:])))
    det = build_detector(shape, recipe, train.num_classes, heads=_heads(shape))
    det.load_state_dict(entry.tensors)
    return det.to(device).eval(), entry.metrics


@torch.no_grad()
def scores(detector: nn.Module, activations: torch.Tensor, batch_size: int = 500) -> torch.Tensor:
    """Energies of ``activations`` (N, ...) under ``detector`` (float32, on the CPU)."""
    detector.eval()
    return torch.cat([energy(detector(a)).cpu() for a in activations.split(batch_size)])
