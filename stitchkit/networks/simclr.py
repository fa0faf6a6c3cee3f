"""SimCLR (Chen et al. 2020) for Bansal et al.'s Figure 6: self-supervised training of a CutModel.

Two augmented views of every image in a batch go through the network up to its pooled vector
and a projection head (Linear-ReLU-Linear); the NT-Xent loss pulls each image's two views
together and pushes them from the other 2B - 2 views. The augmentations are SimCLR's for
CIFAR, drawn per image but applied to the whole batch at once (no per-image Python loop):
random resized crop (scale 0.2-1, aspect 3/4-4/3) with horizontal flip, as one affine
``grid_sample``; colour jitter (brightness, contrast, saturation 0.4; applied with
probability 0.8) and greyscale (probability 0.2). Hue jitter is left out.

After pre-training, the network's own classifier (``head``) is fitted as a linear probe on
the frozen pooled features of the training images, so the result is an ordinary classifier
that a stitch grid can use as sender or receiver.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from ..data.batches import NORMALISATION


def random_resized_crop_flip(x: torch.Tensor, generator: torch.Generator, scale=(0.2, 1.0),
                             ratio=(3 / 4, 4 / 3)) -> torch.Tensor:
    """Per-image random resized crop back to the input size, and horizontal flip, for a float
    batch (B, C, H, W), as one bilinear ``grid_sample`` with per-image affine grids."""
    b = x.shape[0]
    area = torch.empty(b).uniform_(*scale, generator=generator)
    log_r = torch.empty(b).uniform_(math.log(ratio[0]), math.log(ratio[1]), generator=generator)
    r = torch.exp(log_r)
    sw = torch.sqrt(area * r).clamp(max=1.0)  # crop width and height as fractions of the image
    sh = torch.sqrt(area / r).clamp(max=1.0)
    cx = (torch.rand(b, generator=generator) * 2 - 1) * (1 - sw)  # centre in [-1, 1] keeping the crop inside
    cy = (torch.rand(b, generator=generator) * 2 - 1) * (1 - sh)
    flip = torch.where(torch.rand(b, generator=generator) < 0.5, -1.0, 1.0)
    theta = torch.zeros(b, 2, 3)
    theta[:, 0, 0], theta[:, 0, 2] = sw * flip, cx
    theta[:, 1, 1], theta[:, 1, 2] = sh, cy
    grid = nn.functional.affine_grid(theta.to(x.device, x.dtype), list(x.shape), align_corners=False)
    return nn.functional.grid_sample(x, grid, mode="bilinear", padding_mode="reflection", align_corners=False)


def colour_distort(x: torch.Tensor, generator: torch.Generator, strength: float = 0.4, p_jitter: float = 0.8,
                   p_grey: float = 0.2) -> torch.Tensor:
    """Per-image brightness, contrast and saturation jitter (each factor in [1 - s, 1 + s], in
    random order per batch; with probability ``p_jitter``) and greyscale (``p_grey``) on a
    batch in [0, 1]."""
    b, dev = x.shape[0], x.device

    on = torch.rand(b, generator=generator) < p_jitter  # the jitter as a whole, per image

    def factor() -> torch.Tensor:
        f = torch.empty(b).uniform_(1 - strength, 1 + strength, generator=generator)
        return torch.where(on, f, torch.ones(b)).view(b, 1, 1, 1).to(dev, x.dtype)

    def grey(t: torch.Tensor) -> torch.Tensor:
        w = torch.tensor([0.299, 0.587, 0.114], device=dev, dtype=t.dtype).view(1, 3, 1, 1)
        return (t * w).sum(1, keepdim=True)

    ops = [lambda t: t * factor(),
           lambda t: (t - t.mean((1, 2, 3), keepdim=True)) * factor() + t.mean((1, 2, 3), keepdim=True),
           lambda t: (t - grey(t)) * factor() + grey(t)]
    for k in torch.randperm(3, generator=generator).tolist():
        x = ops[k](x).clamp(0, 1)
    to_grey = (torch.rand(b, generator=generator) < p_grey).view(b, 1, 1, 1).to(dev)
    return torch.where(to_grey, grey(x).expand_as(x), x)


def views(x: torch.Tensor, normalisation: str, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """Two augmented views of a normalised batch, normalised the same way."""
    mean, std = (torch.tensor(v, device=x.device, dtype=x.dtype).view(1, -1, 1, 1)
                 for v in NORMALISATION[normalisation])
    raw = (x * std + mean).clamp(0, 1)
    out = []
    for _ in range(2):
        v = colour_distort(random_resized_crop_flip(raw, generator), generator)
        out.append((v - mean) / std)
    return out[0], out[1]


def nt_xent(z1: torch.Tensor, z2: torch.Tensor, temperature: float = 0.5) -> torch.Tensor:
    """Normalised-temperature cross-entropy over 2B projected views: each view's positive is
    its pair, the other 2B - 2 views are negatives."""
    z = nn.functional.normalize(torch.cat([z1, z2]).float(), dim=1)
    sim = z @ z.T / temperature
    n = z1.shape[0]
    sim.fill_diagonal_(float("-inf"))
    target = torch.cat([torch.arange(n, 2 * n), torch.arange(0, n)]).to(z.device)
    return nn.functional.cross_entropy(sim, target)


class SimCLRNet(nn.Module):
    """A CutModel's layers up to its pooled vector, and a projection head (training only)."""

    def __init__(self, backbone, feature_dim: int, projection_dim: int = 128, seed: int = 0) -> None:
        super().__init__()
        self.backbone = backbone
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            self.projection = nn.Sequential(nn.Linear(feature_dim, feature_dim), nn.ReLU(),
                                            nn.Linear(feature_dim, projection_dim))
        self.backbone.head.requires_grad_(False)  # the classifier is fitted afterwards (linear probe)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.projection(self.backbone.forward_to(x, self.backbone.cuts[-1]))


class objective:  # noqa: N801 (a callable used like a function)
    """The train loop's objective for a :class:`SimCLRNet`: NT-Xent on two views (labels unused).

    Its views come from its own generator, whose state travels in the training checkpoint
    (``get_state``/``set_state``), so an interrupted run resumes with the same augmentations."""

    def __init__(self, normalisation: str, temperature: float, seed: int) -> None:
        self.normalisation, self.temperature = normalisation, temperature
        self.generator = torch.Generator().manual_seed(seed)

    def __call__(self, model: SimCLRNet, x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, None]:
        v1, v2 = views(x, self.normalisation, self.generator)
        z = model(torch.cat([v1, v2]))
        return nt_xent(z[:len(x)], z[len(x):], self.temperature), None

    def get_state(self) -> torch.Tensor:
        return self.generator.get_state()

    def set_state(self, state: torch.Tensor) -> None:
        self.generator.set_state(state)


def linear_probe(model, features: torch.Tensor, labels: torch.Tensor, *, epochs: int = 30, lr: float = 1e-3,
                 batch_size: int = 256, seed: int = 0) -> list[float]:
    """Fit ``model.head`` (a Linear) on frozen pooled ``features`` (N, D) with Adam and cross-entropy;
    returns the training loss per epoch."""
    head = model.head
    head.requires_grad_(True)
    g = torch.Generator().manual_seed(seed)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        head.reset_parameters()
    opt = torch.optim.Adam(head.parameters(), lr=lr)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, epochs)
    losses = []
    for _ in range(epochs):
        perm = torch.randperm(len(features), generator=g).to(features.device)
        total = 0.0
        for idx in perm.split(batch_size):
            loss = nn.functional.cross_entropy(head(features[idx]), labels[idx])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            total += float(loss.detach()) * len(idx)
        sched.step()
        losses.append(total / len(features))
    return losses
