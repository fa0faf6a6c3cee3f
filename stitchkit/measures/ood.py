"""Out-of-distribution detectors on a layer's activations (Balogh & Jelasity's OOD analysis).

A detector for layer ``cut`` of a network is a classifier whose *input* is that layer's
activations: a small ResNet (maps bilinearly resized to 32 x 32, in-channels = the layer's) or a
few transformer blocks (tokens). Following Liu et al. 2020 ("Energy-based out-of-distribution
detection") it is first trained to classify the layer's activations on the training images,
then fine-tuned with

    CE + weight * [ mean relu(E_in - m_in)^2 + mean relu(m_out - E_out)^2 ],  E = -logsumexp(logits),

where "in" are the layer's activations on training images and "out" its activations on an
auxiliary outlier set passed through the same network (``DetectorRecipe.exposure``: MNIST, or a
set generated offline from CIFAR-10 training images, :func:`exposure_split`). Its score is the
energy E: higher means more out of distribution. :func:`auroc` compares two sets of scores (0.5:
indistinguishable), :func:`auroc_replicates` also on every bootstrap resample of them, and
:func:`corrupt` / :func:`near_outliers` make the near-distribution outliers (CIFAR-10-C noise and
blur, patch-shuffled or cross-class-mixed images) a detector-sensitivity control scores.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
import torch
from torch import nn

from ..base.hardware import as_device, narrow_conv_guard
from ..base.progress import progress_bar
from ..base.store import Store
from ..data import batches as data_mod
from ..data import splits
from ..data.datasets import DataSpec, train_split
from ..networks.models import ClsPool, CutModel, EncoderBlock, build_model
from ..networks.network import ModelSpec
from ..networks.train import TrainConfig, lr_factor, make_optimizer


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
    # The outlier-exposure set fine-tuning pushes away: "mnist" (``aux``, MNIST digits: far from
    # CIFAR-10) or "cifar_generated" (generated offline from CIFAR-10 training images, nearer to
    # Liu et al.'s 300K Random Images: see :func:`exposure_split`). A default that leaves the keys
    # of the detectors trained before the field unchanged.
    exposure: str = "mnist"

    ALWAYS_IN_KEY: ClassVar[tuple[str, ...]] = ("joint_batch",)


EXPOSURES = ("mnist", "cifar_generated")

# Corruptions of Hendrycks & Dietterich's CIFAR-10-C (make_cifar_c.py), severity 1-5: the noise's
# standard deviation on [0, 1] pixels and the blur's sigma in pixels.
CIFAR_C_NOISE = (0.04, 0.06, 0.08, 0.09, 0.10)
CIFAR_C_BLUR = (0.4, 0.6, 0.7, 0.8, 1.0)
PATCH = 8  # patch-shuffled images: 8 x 8 patches of a 32 x 32 image, permuted
CORRUPTIONS = ("gaussian_noise", "gaussian_blur", "patch_shuffle", "class_mix", "smooth_noise")


def _gaussian_blur(x: torch.Tensor, sigma: float) -> torch.Tensor:
    """(N, C, H, W) float images blurred by a separable Gaussian (reflect padding)."""
    r = max(1, int(np.ceil(3 * sigma)))
    t = torch.arange(-r, r + 1, dtype=torch.float32)
    k = torch.exp(-t ** 2 / (2 * sigma ** 2))
    k = (k / k.sum()).to(x)
    c = x.shape[1]
    x = nn.functional.pad(x, (r, r, r, r), mode="reflect")
    x = nn.functional.conv2d(x, k.view(1, 1, 1, -1).repeat(c, 1, 1, 1), groups=c)
    return nn.functional.conv2d(x, k.view(1, 1, -1, 1).repeat(c, 1, 1, 1), groups=c)


def corrupt(images: torch.Tensor, kind: str, *, severity: int = 3, labels: torch.Tensor | None = None,
            seed: int = 0) -> torch.Tensor:
    """Near-distribution outliers made offline from ``images`` ((N, C, H, W) uint8; returns the same):

    - ``gaussian_noise`` / ``gaussian_blur``: CIFAR-10-C's corruptions at ``severity`` (1-5);
    - ``patch_shuffle``: the :data:`PATCH` x :data:`PATCH` patches of each image in a random order;
    - ``class_mix``: each image averaged with an image of another class (``labels`` needed);
    - ``smooth_noise``: textures, not the images: colour noise drawn at 2-8 pixels a side and
      upsampled (bicubic) to the images' size (``images`` give the shape only).
    """
    if kind not in CORRUPTIONS:
        raise ValueError(f"unknown corruption {kind!r}; valid: {', '.join(CORRUPTIONS)}")
    if not 1 <= severity <= 5:
        raise ValueError(f"severity must be 1..5 (CIFAR-10-C's), got {severity}")
    if images.dtype != torch.uint8 or images.ndim != 4:
        raise ValueError(f"images must be (N, C, H, W) uint8, got {tuple(images.shape)} {images.dtype}")
    g = torch.Generator().manual_seed(seed)
    x = images.cpu().float() / 255
    n, c, h, w = x.shape
    if kind == "gaussian_noise":
        x = x + CIFAR_C_NOISE[severity - 1] * torch.randn(x.shape, generator=g)
    elif kind == "gaussian_blur":
        x = _gaussian_blur(x, CIFAR_C_BLUR[severity - 1])
    elif kind == "patch_shuffle":
        if h % PATCH or w % PATCH:
            raise ValueError(f"patch_shuffle needs sides divisible by {PATCH}, got {h} x {w}")
        gh, gw = h // PATCH, w // PATCH
        p = x.reshape(n, c, gh, PATCH, gw, PATCH).permute(0, 2, 4, 1, 3, 5).reshape(n, gh * gw, c, PATCH, PATCH)
        order = torch.argsort(torch.rand(n, gh * gw, generator=g), dim=1)
        p = p[torch.arange(n)[:, None], order]
        x = p.reshape(n, gh, gw, c, PATCH, PATCH).permute(0, 3, 1, 4, 2, 5).reshape(n, c, h, w)
    elif kind == "class_mix":
        if labels is None or len(labels) != n:
            raise ValueError("class_mix needs the images' labels")
        y = labels.cpu()
        partner = torch.randint(0, n, (n,), generator=g)
        for _ in range(20):  # redraw partners of the same class
            same = y[partner] == y
            if not same.any():
                break
            partner[same] = torch.randint(0, n, (int(same.sum()),), generator=g)
        x = 0.5 * x + 0.5 * x[partner]
    else:  # smooth_noise
        out = torch.empty_like(x)
        sides = torch.tensor([2, 4, 8])[torch.randint(0, 3, (n,), generator=g)]
        for s in (2, 4, 8):
            idx = torch.nonzero(sides == s).flatten()
            if len(idx):
                low = torch.rand(len(idx), c, s, s, generator=g)
                out[idx] = nn.functional.interpolate(low, size=(h, w), mode="bicubic", align_corners=False)
        x = out
    return (x.clamp(0, 1) * 255).round().to(torch.uint8)


def near_outliers(split: splits.Split, kinds: tuple[str, ...], severity: int, seed: int = 0) -> splits.Split:
    """``split``'s images, image k corrupted by ``kinds[k % len(kinds)]`` (labels kept): paired
    image by image with the clean split, for a paired bootstrap."""
    x = split.images.clone()
    for m, kind in enumerate(kinds):
        idx = torch.arange(m, len(split), len(kinds))
        x[idx] = corrupt(split.images[idx], kind, severity=severity, labels=split.labels[idx], seed=seed + m)
    return splits.Split(x, split.labels, split.classes, split.fingerprint)


EXPOSURE_KINDS = ("patch_shuffle", "class_mix", "smooth_noise")  # the thirds of the generated set


def exposure_split(size: int | None, seed: int = 0, root=None) -> splits.Split:
    """The generated outlier-exposure set: ``size`` (None: 50,000) CIFAR-10 training images, a
    third patch-shuffled, a third averaged with an image of another class, a third smooth colour
    noise (textures). Natural-image statistics without a CIFAR-10 object, as in Liu et al.'s 300K
    Random Images; none of the near-outlier kinds the sensitivity control tests (noise, blur)."""
    train = train_split(DataSpec("cifar10"), root)
    size = len(train) if size is None else int(size)
    g = torch.Generator().manual_seed(seed)
    idx = torch.randint(0, len(train), (size,), generator=g)
    base = train.subset(idx)
    split = near_outliers(base, EXPOSURE_KINDS, 3, seed)
    return splits.Split(split.images, torch.zeros(size, dtype=torch.int64), split.classes, split.fingerprint)


def auroc_replicates(in_scores, out_scores, counts_in: np.ndarray, counts_out: np.ndarray | None = None) -> np.ndarray:
    """:func:`auroc` on the full samples, then on each bootstrap resample: (R+1,). ``counts_in``
    (R, n_in) says how often each in-distribution score is drawn in each resample (a
    :class:`stitchkit.verdicts.noise.Resampler`'s ``counts``); ``counts_out`` the same for the outliers,
    None when they are the same images (paired: one resample for both sides)."""
    a = np.asarray(in_scores, dtype=np.float64).ravel()
    b = np.asarray(out_scores, dtype=np.float64).ravel()
    if counts_out is None:
        if len(a) != len(b):
            raise ValueError(f"paired AUROC needs as many scores on each side, got {len(a)} and {len(b)}")
        counts_out = counts_in
    if counts_in.shape[1] != len(a) or counts_out.shape[1] != len(b):
        raise ValueError("the resample counts do not cover the scores")
    wi = np.concatenate([np.ones((1, len(a))), counts_in], axis=0)
    wo = np.concatenate([np.ones((1, len(b))), counts_out], axis=0)
    order = np.argsort(a, kind="stable")
    cum = np.concatenate([np.zeros((len(wi), 1)), np.cumsum(wi[:, order], axis=1)], axis=1)  # (R+1, n_in+1)
    s = a[order]
    below = cum[:, np.searchsorted(s, b, side="left")]  # weight of in-scores < each out-score
    upto = cum[:, np.searchsorted(s, b, side="right")]  # ... <= it
    num = (wo * (below + upto) / 2).sum(1)
    return num / (wi.sum(1) * wo.sum(1))


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
    aux = outlier_exposure(recipe, root)
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


def outlier_exposure(recipe: DetectorRecipe, root=None) -> splits.Split:
    """The outlier set a detector is fine-tuned against (``recipe.exposure``)."""
    if recipe.exposure not in EXPOSURES:
        raise ValueError(f"unknown outlier exposure {recipe.exposure!r}; valid: {', '.join(EXPOSURES)}")
    if recipe.exposure == "cifar_generated":
        return exposure_split(recipe.aux_size, recipe.seed, root)
    return train_split(DataSpec(recipe.aux.dataset, train_size=recipe.aux_size, size=recipe.aux.size), root)


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
    from ..data.datasets import combined_fingerprint

    device = as_device(device)
    store = store or Store()
    key = DetectorSpec(spec, cut, recipe)
    aux = (DataSpec("cifar10") if recipe.exposure == "cifar_generated" else
           DataSpec(recipe.aux.dataset, train_size=recipe.aux_size, size=recipe.aux.size))
    salt = combined_fingerprint(spec.data, DataSpec("cifar10", train_size=recipe.train_size), aux, root=root)
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
