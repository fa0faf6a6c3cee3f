"""Stitch layers, stitched models, task-loss matching (TLM) and direct matching (DM).

A stitched model runs the sender up to cut ``i``, a small trainable stitch, then the receiver
from cut ``j``: ``receiver.forward_from(j, stitch(sender.forward_to(x, i)))``. Both halves are
frozen (``requires_grad=False``) and by default kept in eval mode; ``frozen_bn="train"``
reproduces the quirk of Bansal's and Smith & Marcu's code, which left the frozen halves' BN in
train mode so that running statistics drift during stitch training.

Stitch kinds (``make_stitch``):

- ``bn_conv_bn``: BatchNorm -> kxk conv with bias -> BatchNorm (Bansal; Smith & Marcu);
  on vectors BatchNorm1d -> Linear -> BatchNorm1d.
- ``conv``: 1x1 conv with bias (Linear on vectors).
- ``resize_conv``: bilinear resize to the receiver's size when shapes differ, then 1x1 conv with
  bias (Balogh & Jelasity).
- ``strided_or_upsample``: Hernandez et al.: receiver smaller -> kxk conv with stride k
  (k = size ratio); receiver larger -> nearest upsample then 1x1 conv; no BN.
- ``identity``: no parameters (sanity checks).
"""

from __future__ import annotations

from typing import Iterable

import torch
from torch import nn

from .data import Batches, Split, index_batches
from .models import CutModel
from .train import TrainConfig, autocast, default_device, evaluate, train

STITCH_KINDS = ("bn_conv_bn", "conv", "resize_conv", "strided_or_upsample", "identity")
FROZEN_BN_MODES = ("eval", "train")


class Stitch(nn.Module):
    """A stitch: optional fixed ``pre`` (resize), then ``body`` (which holds the ``linear`` map)."""

    def __init__(self, body: nn.Module, linear: nn.Module | None, pre: nn.Module | None = None) -> None:
        super().__init__()
        self.pre = pre if pre is not None else nn.Identity()
        self.body = body
        self.linear = linear  # the affine map that direct matching sets; None if not a plain map

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        return self.body(self.pre(h))


class Resize(nn.Module):
    def __init__(self, size: tuple[int, int], mode: str) -> None:
        super().__init__()
        self.size, self.mode = size, mode

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        if tuple(h.shape[-2:]) == self.size:
            return h
        kw = {"align_corners": False} if self.mode == "bilinear" else {}
        return nn.functional.interpolate(h, size=self.size, mode=self.mode, **kw)


def make_stitch(kind: str, in_shape: tuple[int, ...], out_shape: tuple[int, ...], *, kernel_size: int = 1) -> Stitch:
    """Stitch mapping per-example activations of ``in_shape`` to ``out_shape`` ((C, H, W) or (D,))."""
    if kind not in STITCH_KINDS:
        raise ValueError(f"unknown stitch kind {kind!r}; valid: {', '.join(STITCH_KINDS)}")
    in_shape, out_shape = tuple(in_shape), tuple(out_shape)
    if len(in_shape) != len(out_shape):
        raise ValueError(f"cannot stitch shape {in_shape} into {out_shape}: one is a vector, the other a map")
    if kind == "identity":
        if in_shape != out_shape:
            raise ValueError(f"identity stitch needs equal shapes, got {in_shape} -> {out_shape}")
        return Stitch(nn.Identity(), None)
    c_in, c_out = in_shape[0], out_shape[0]
    if len(in_shape) == 1:  # pooled vectors
        lin = nn.Linear(c_in, c_out)
        if kind == "bn_conv_bn":
            return Stitch(nn.Sequential(nn.BatchNorm1d(c_in), lin, nn.BatchNorm1d(c_out)), None)
        return Stitch(lin, lin)
    same_size = in_shape[1:] == out_shape[1:]
    if kind in ("bn_conv_bn", "conv") and not same_size:
        raise ValueError(f"{kind} stitch needs equal spatial sizes, got {in_shape[1:]} -> {out_shape[1:]}; "
                         "use 'resize_conv' or 'strided_or_upsample'")
    if kind == "bn_conv_bn":
        conv = nn.Conv2d(c_in, c_out, kernel_size, padding=kernel_size // 2, bias=True)
        return Stitch(nn.Sequential(nn.BatchNorm2d(c_in), conv, nn.BatchNorm2d(c_out)), None)
    if kind == "conv":
        conv = nn.Conv2d(c_in, c_out, 1, bias=True)
        return Stitch(conv, conv)
    if kind == "resize_conv":
        conv = nn.Conv2d(c_in, c_out, 1, bias=True)
        return Stitch(conv, conv, pre=Resize(out_shape[1:], "bilinear"))
    # Hernandez et al.
    h_in, h_out = in_shape[1], out_shape[1]
    if h_in > h_out:
        if h_in % h_out:
            raise ValueError(f"strided stitch needs an integer size ratio, got {h_in} -> {h_out}")
        k = h_in // h_out
        conv = nn.Conv2d(c_in, c_out, k, stride=k, bias=True)
        return Stitch(conv, None)
    conv = nn.Conv2d(c_in, c_out, 1, bias=True)
    return Stitch(conv, conv, pre=Resize(out_shape[1:], "nearest"))


def identity_init(stitch: Stitch) -> Stitch:
    """Set a ``conv``/``linear`` stitch to the identity map (equal channel counts)."""
    lin = stitch.linear
    if lin is None:
        raise ValueError("identity_init needs a stitch with a plain linear map ('conv' or 'resize_conv')")
    with torch.no_grad():
        w = lin.weight.view(lin.weight.shape[0], -1)
        if w.shape[0] != w.shape[1]:
            raise ValueError(f"identity needs equal channel counts, got {tuple(w.shape)}")
        w.copy_(torch.eye(w.shape[0]))
        lin.bias.zero_()
    return stitch


class StitchedModel(nn.Module):
    """sender[: cut_i] -> stitch -> receiver[cut_j :], halves frozen."""

    def __init__(self, sender: CutModel, cut_i: str, receiver: CutModel, cut_j: str, stitch: nn.Module,
                 frozen_bn: str = "eval") -> None:
        super().__init__()
        sender.check_cut(cut_i)
        receiver.check_cut(cut_j)
        if frozen_bn not in FROZEN_BN_MODES:
            raise ValueError(f"unknown frozen_bn {frozen_bn!r}; valid: {', '.join(FROZEN_BN_MODES)}")
        self.sender, self.receiver, self.stitch = sender, receiver, stitch
        self.cut_i, self.cut_j, self.frozen_bn = cut_i, cut_j, frozen_bn
        for p in list(sender.parameters()) + list(receiver.parameters()):
            p.requires_grad_(False)
        self.train(False)

    def train(self, mode: bool = True) -> "StitchedModel":
        super().train(mode)
        if self.frozen_bn == "eval":  # frozen halves never update BN statistics
            self.sender.eval()
            self.receiver.eval()
        return self

    def bottom(self, x: torch.Tensor) -> torch.Tensor:
        """Sender activations at cut_i (no grad: the sender is frozen)."""
        with torch.no_grad():
            return self.sender.forward_to(x, self.cut_i)

    def top(self, h: torch.Tensor) -> torch.Tensor:
        """Logits from sender activations ``h``: stitch, then the receiver after cut_j."""
        return self.receiver.forward_from(self.cut_j, self.stitch(h))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.top(self.bottom(x))


class _Top(nn.Module):
    """The trainable part of a stitched model, fed cached sender activations."""

    def __init__(self, stitched: StitchedModel) -> None:
        super().__init__()
        self.stitched = stitched

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        return self.stitched.top(h)


class TensorBatches:
    """(x, y) batches over tensors already on the device; shuffled per epoch by ``generator``."""

    def __init__(self, x: torch.Tensor, y: torch.Tensor, batch_size: int, *, shuffle: bool = False,
                 seed: int = 0, drop_last: bool = False) -> None:
        self.x, self.y, self.batch_size = x, y, batch_size
        self.shuffle, self.drop_last = shuffle, drop_last
        self.generator = torch.Generator().manual_seed(seed)

    def __len__(self) -> int:
        n = self.x.shape[0]
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)

    def __iter__(self):
        for idx in index_batches(self.x.shape[0], self.batch_size, shuffle=self.shuffle, drop_last=self.drop_last,
                                 generator=self.generator, device=self.x.device):
            yield self.x[idx], self.y[idx]


@torch.no_grad()
def sender_activations(sender: CutModel, cut: str, split: Split, *, normalisation: str, batch_size: int = 500,
                       device: torch.device | str | None = None, precision: str = "bf16") -> torch.Tensor:
    """Activations of the frozen sender at ``cut`` for every image of ``split`` (eval mode, no grad).

    Returns (N, *shape) on ``device``, stored in bf16 when ``precision == 'bf16'`` (what the top
    consumes under autocast anyway) else float32. Compute once, reuse for every receiver and epoch.
    """
    device = torch.device(device or default_device())
    was = sender.training
    sender.eval()
    dtype = torch.bfloat16 if precision == "bf16" else torch.float32
    out = []
    for x, _ in Batches(split, batch_size, normalisation=normalisation, device=device,
                        channels_last=precision == "bf16"):
        with autocast(device, precision):
            out.append(sender.forward_to(x, cut).to(dtype))
    sender.train(was)
    return torch.cat(out)


def can_cache_activations(cfg: TrainConfig, frozen_bn: str) -> bool:
    """Sender activations are fixed (computable once) only without augmentation and with the
    sender's BatchNorm in eval mode."""
    return not cfg.augment and frozen_bn == "eval"


def train_stitch(stitched: StitchedModel, train_split: Split, cfg: TrainConfig, *, normalisation: str,
                 device: torch.device | str | None = None, activations: torch.Tensor | None = None,
                 desc: str = "stitch", progress: bool = True) -> list[dict]:
    """Task-loss matching: train only the stitch on the task, halves frozen.

    Without augmentation and with eval-mode halves the sender's activations on ``train_split``
    are computed once (or taken from ``activations``) and every epoch reuses them.
    """
    device = torch.device(device or default_device())
    cl = cfg.precision == "bf16"
    if can_cache_activations(cfg, stitched.frozen_bn):
        if activations is None:
            activations = sender_activations(stitched.sender, stitched.cut_i, train_split,
                                             normalisation=normalisation, device=device, precision=cfg.precision)
        batches = TensorBatches(activations, train_split.labels.to(device), cfg.batch_size, shuffle=True,
                                seed=cfg.seed)
        return train(_Top(stitched), batches, cfg, device=device, desc=desc, progress=progress)
    if activations is not None:
        raise ValueError("cached activations need augment=False and frozen_bn='eval'")
    batches = Batches(train_split, cfg.batch_size, normalisation=normalisation, shuffle=True, augment=cfg.augment,
                      seed=cfg.seed, device=device, channels_last=cl)
    return train(stitched, batches, cfg, device=device, desc=desc, progress=progress)


def evaluate_stitch(stitched: StitchedModel, test_split: Split, *, normalisation: str,
                    device: torch.device | str | None = None, precision: str = "bf16",
                    activations: torch.Tensor | None = None, batch_size: int = 500) -> dict[str, float]:
    """Accuracy and loss of the stitched model on ``test_split`` (from cached activations if given)."""
    device = torch.device(device or default_device())
    if activations is not None:
        batches = TensorBatches(activations, test_split.labels.to(device), batch_size)
        return evaluate(_Top(stitched), batches, device=device, precision=precision)
    batches = Batches(test_split, batch_size, normalisation=normalisation, device=device,
                      channels_last=precision == "bf16")
    return evaluate(stitched, batches, device=device, precision=precision)


# --------------------------------------------------------------------------------------------
# Direct matching: least squares on (examples x positions, channels) rows


def to_rows(h: torch.Tensor) -> torch.Tensor:
    """(N, C, H, W) -> (N*H*W, C) with positions as rows; (N, D) unchanged."""
    if h.ndim == 4:
        return h.permute(0, 2, 3, 1).reshape(-1, h.shape[1])
    if h.ndim == 2:
        return h
    raise ValueError(f"expected (N, C, H, W) or (N, D) activations, got shape {tuple(h.shape)}")


class NormalEquations:
    """Accumulates [X 1]^T [X 1] and [X 1]^T Y in float64, chunk by chunk, then solves.

    Solving uses the eigendecomposition of the Gram matrix with a relative cut-off on singular
    values (``rtol``), i.e. the minimum-norm least-squares solution on the numerical range.
    """

    def __init__(self, bias: bool = True) -> None:
        self.bias = bias
        self.xtx: torch.Tensor | None = None
        self.xty: torch.Tensor | None = None
        self.n = 0

    def update(self, x: torch.Tensor, y: torch.Tensor) -> None:
        x, y = x.to(torch.float64), y.to(torch.float64)  # (n, p), (n, q)
        if x.shape[0] != y.shape[0]:
            raise ValueError(f"row counts differ: X has {x.shape[0]}, Y has {y.shape[0]}")
        if self.bias:
            x = torch.cat([x, torch.ones_like(x[:, :1])], dim=1)
        xtx, xty = x.T @ x, x.T @ y
        self.xtx = xtx if self.xtx is None else self.xtx + xtx
        self.xty = xty if self.xty is None else self.xty + xty
        self.n += x.shape[0]

    def solve(self, rtol: float = 1e-6) -> tuple[torch.Tensor, torch.Tensor | None]:
        """W (p, q) and b (q,) (None without bias), float64."""
        if self.xtx is None:
            raise ValueError("no rows accumulated")
        evals, evecs = torch.linalg.eigh(self.xtx)
        keep = evals > (rtol ** 2) * evals.max().clamp_min(0)
        inv = torch.where(keep, 1.0 / evals.clamp_min(torch.finfo(torch.float64).tiny), torch.zeros_like(evals))
        beta = evecs @ (inv[:, None] * (evecs.T @ self.xty))
        return (beta[:-1], beta[-1]) if self.bias else (beta, None)


def least_squares(x: torch.Tensor, y: torch.Tensor, *, bias: bool = True, rtol: float = 1e-6,
                  chunk: int = 65536) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Least-squares affine map X (n, p) -> Y (n, q) via float64 normal equations."""
    ne = NormalEquations(bias)
    for s in range(0, x.shape[0], chunk):
        ne.update(x[s:s + chunk], y[s:s + chunk])
    return ne.solve(rtol)


@torch.no_grad()
def fit_direct_matching(stitched: StitchedModel, split: Split, *, normalisation: str, batch_size: int = 100,
                        device: torch.device | str | None = None, precision: str = "fp32",
                        rtol: float = 1e-6) -> StitchedModel:
    """Direct matching: set the stitch's linear map to the least-squares fit of the receiver's
    activations at cut_j from the (resized) sender activations at cut_i, rows = images x positions.
    """
    lin = getattr(stitched.stitch, "linear", None)
    if lin is None:
        raise ValueError("direct matching needs a stitch with a plain linear map: kind 'conv' or 'resize_conv'")
    device = torch.device(device or default_device())
    ne = NormalEquations(bias=True)
    stitched.eval()
    for x, _ in Batches(split, batch_size, normalisation=normalisation, device=device):
        with autocast(device, precision):
            hx = stitched.stitch.pre(stitched.sender.forward_to(x, stitched.cut_i))
            hy = stitched.receiver.forward_to(x, stitched.cut_j)
        ne.update(to_rows(hx.float()), to_rows(hy.float()))
    w, b = ne.solve(rtol)
    lin.weight.copy_(w.T.reshape(lin.weight.shape).to(lin.weight.dtype))
    lin.bias.copy_(b.to(lin.bias.dtype))
    return stitched


def stitch_models(sender: CutModel, cut_i: str, receiver: CutModel, cut_j: str, *, kind: str = "bn_conv_bn",
                  frozen_bn: str = "eval", input_shape: tuple[int, ...] = (3, 32, 32), kernel_size: int = 1,
                  seed: int | None = None, device: torch.device | str | None = None) -> StitchedModel:
    """Build a StitchedModel with a fresh stitch of ``kind`` sized from the two cut shapes."""
    in_shape = sender.cut_shapes(input_shape)[sender.cuts[sender.check_cut(cut_i)]]
    out_shape = receiver.cut_shapes(input_shape)[receiver.cuts[receiver.check_cut(cut_j)]]
    with torch.random.fork_rng(devices=[]):
        if seed is not None:
            torch.manual_seed(seed)
        stitch = make_stitch(kind, in_shape, out_shape, kernel_size=kernel_size)
    device = torch.device(device or default_device())
    return StitchedModel(sender, cut_i, receiver, cut_j, stitch.to(device), frozen_bn=frozen_bn)


def penalty(receiver_accuracy: float, stitched_accuracies: Iterable[float]) -> list[float]:
    """Stitching penalty = stitched error - receiver error = receiver acc - stitched acc."""
    return [receiver_accuracy - a for a in stitched_accuracies]


class ActivationCache:
    """Sender activations kept in memory by (sender key, cut, split tag), shared across receivers."""

    def __init__(self) -> None:
        self._store: dict[tuple[str, str, str], torch.Tensor] = {}

    def get(self, key: tuple[str, str, str], compute) -> torch.Tensor:
        if key not in self._store:
            self._store[key] = compute()
        return self._store[key]

    def drop_cut(self, cut: str) -> None:
        """Free every entry at ``cut`` (call when a loop over cuts moves on)."""
        for k in [k for k in self._store if k[1] == cut]:
            del self._store[k]
