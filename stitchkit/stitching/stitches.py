"""Stitch layers, stitched models, direct-matching (DM) initialisation, task-loss matching (TLM).

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
  bias (Balogh & Jelasity); on ViT tokens (T, D) a Linear on every token.
- ``strided_or_upsample``: Hernandez et al.: receiver smaller -> kxk conv with stride k
  (k = size ratio); receiver larger -> nearest upsample then 1x1 conv; no BN.
- ``identity``: no parameters (sanity checks).

Direct matching (:func:`init_dm`) works for every kind: BatchNorm layers before the stitch's
affine layer take the sender's statistics (so they standardise), the affine layer is the float64
least-squares fit of the receiver's activations (rows = images x positions, or tokens), and
BatchNorm layers after it are set to the identity on the prediction (running statistics and
affine from its per-channel mean and std). Task-loss matching then fine-tunes from there;
``stitch_bn="frozen"`` keeps the stitch's BatchNorm statistics fixed while it does, so the stitch
stays the affine map DM found and only its parameters move.
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

import torch
from torch import nn

from ..base.hardware import MEASURE_PRECISION, as_device, channels_last_ok, measuring
from ..base.linalg import NormalEquations, to_rows
from ..data.batches import Batches, index_batches
from ..data.splits import Split
from ..networks.models import CutModel
from ..networks.train import TrainConfig, evaluate, train

STITCH_KINDS = ("bn_conv_bn", "conv", "resize_conv", "strided_or_upsample", "identity")
FROZEN_BN_MODES = ("eval", "train")
STITCH_BN_MODES = ("train", "frozen")
_BN = (nn.BatchNorm1d, nn.BatchNorm2d)


class Stitch(nn.Module):
    """A stitch: optional fixed ``pre`` (resize), then ``body`` (a module or a Sequential)."""

    def __init__(self, body: nn.Module, pre: nn.Module | None = None) -> None:
        super().__init__()
        self.pre = pre if pre is not None else nn.Identity()
        self.body = body

    def layers(self) -> list[nn.Module]:
        return list(self.body) if isinstance(self.body, nn.Sequential) else [self.body]

    def affine(self) -> nn.Module | None:
        """The stitch's conv/linear layer (None for the identity)."""
        return next((m for m in self.layers() if isinstance(m, (nn.Conv2d, nn.Linear))), None)

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
    """Stitch mapping per-example activations of ``in_shape`` to ``out_shape``: (C, H, W) maps,
    (T, D) tokens or (D,) vectors."""
    if kind not in STITCH_KINDS:
        raise ValueError(f"unknown stitch kind {kind!r}; valid: {', '.join(STITCH_KINDS)}")
    if kernel_size < 1 or kernel_size % 2 == 0:
        raise ValueError(f"kernel_size must be a positive odd integer, got {kernel_size}")
    in_shape, out_shape = tuple(in_shape), tuple(out_shape)
    if len(in_shape) != len(out_shape):
        raise ValueError(f"cannot stitch shape {in_shape} into {out_shape}: different kinds of activation")
    if kind == "identity":
        if in_shape != out_shape:
            raise ValueError(f"identity stitch needs equal shapes, got {in_shape} -> {out_shape}")
        return Stitch(nn.Identity())
    if len(in_shape) in (1, 2):  # pooled vectors (D,) or tokens (T, D): a Linear on the last axis
        if len(in_shape) == 2 and in_shape[0] != out_shape[0]:
            raise ValueError(f"token stitch needs equal token counts, got {in_shape} -> {out_shape}")
        d_in, d_out = in_shape[-1], out_shape[-1]
        lin = nn.Linear(d_in, d_out)
        if kind == "bn_conv_bn":
            if len(in_shape) == 2:
                raise ValueError("bn_conv_bn is defined on maps and vectors, not tokens; use 'conv'")
            return Stitch(nn.Sequential(nn.BatchNorm1d(d_in), lin, nn.BatchNorm1d(d_out)))
        return Stitch(lin)
    c_in, c_out = in_shape[0], out_shape[0]
    same_size = in_shape[1:] == out_shape[1:]
    if kind in ("bn_conv_bn", "conv") and not same_size:
        raise ValueError(f"{kind} stitch needs equal spatial sizes, got {in_shape[1:]} -> {out_shape[1:]}; "
                         "use 'resize_conv' or 'strided_or_upsample'")
    if kind == "bn_conv_bn":
        conv = nn.Conv2d(c_in, c_out, kernel_size, padding=kernel_size // 2, bias=True)
        return Stitch(nn.Sequential(nn.BatchNorm2d(c_in), conv, nn.BatchNorm2d(c_out)))
    if kind == "conv":
        return Stitch(nn.Conv2d(c_in, c_out, 1, bias=True))
    if kind == "resize_conv":
        return Stitch(nn.Conv2d(c_in, c_out, 1, bias=True), pre=Resize(out_shape[1:], "bilinear"))
    # Hernandez et al.
    h_in, h_out = in_shape[1], out_shape[1]
    if h_in > h_out:
        if h_in % h_out:
            raise ValueError(f"strided stitch needs an integer size ratio, got {h_in} -> {h_out}")
        k = h_in // h_out
        return Stitch(nn.Conv2d(c_in, c_out, k, stride=k, bias=True))
    return Stitch(nn.Conv2d(c_in, c_out, 1, bias=True), pre=Resize(out_shape[1:], "nearest"))


def identity_init(stitch: Stitch) -> Stitch:
    """Set a plain ``conv``/``linear`` stitch to the identity map (equal channel counts)."""
    lin = stitch.affine()
    if lin is None or len(stitch.layers()) != 1:
        raise ValueError("identity_init needs a stitch that is a single conv/linear layer ('conv' or 'resize_conv')")
    with torch.no_grad():
        w = lin.weight.view(lin.weight.shape[0], -1)
        if w.shape[0] != w.shape[1]:
            raise ValueError(f"identity needs equal channel counts, got {tuple(w.shape)}")
        w.copy_(torch.eye(w.shape[0]))
        lin.bias.zero_()
    return stitch


class StitchedModel(nn.Module):
    """sender[: cut_i] -> stitch -> receiver[cut_j :], halves frozen.

    ``frozen_bn``: the frozen halves' BatchNorm in ``eval`` mode (default) or ``train`` mode (the
    authors' code quirk). ``stitch_bn``: the stitch's own BatchNorm statistics update while it
    trains (``train``) or stay where initialisation put them (``frozen``).
    """

    def __init__(self, sender: CutModel, cut_i: str, receiver: CutModel, cut_j: str, stitch: Stitch,
                 frozen_bn: str = "eval", stitch_bn: str = "train") -> None:
        super().__init__()
        sender.check_cut(cut_i)
        receiver.check_cut(cut_j)
        if frozen_bn not in FROZEN_BN_MODES:
            raise ValueError(f"unknown frozen_bn {frozen_bn!r}; valid: {', '.join(FROZEN_BN_MODES)}")
        if stitch_bn not in STITCH_BN_MODES:
            raise ValueError(f"unknown stitch_bn {stitch_bn!r}; valid: {', '.join(STITCH_BN_MODES)}")
        self.sender, self.receiver, self.stitch = sender, receiver, stitch
        self.cut_i, self.cut_j, self.frozen_bn, self.stitch_bn = cut_i, cut_j, frozen_bn, stitch_bn
        for p in list(sender.parameters()) + list(receiver.parameters()):
            p.requires_grad_(False)
        self.train(False)

    def train(self, mode: bool = True) -> "StitchedModel":
        super().train(mode)
        if self.frozen_bn == "eval":  # frozen halves never update BN statistics
            self.sender.eval()
            self.receiver.eval()
        if self.stitch_bn == "frozen":
            hold_bn_statistics(self.stitch)
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


def hold_bn_statistics(stitch: nn.Module) -> None:
    """Put ``stitch``'s BatchNorm layers in eval mode, so their statistics stay where
    initialisation (direct matching) set them while the rest trains (``stitch_bn="frozen"``)."""
    for m in stitch.modules():
        if isinstance(m, _BN):
            m.eval()


def stitch_models(sender: CutModel, cut_i: str, receiver: CutModel, cut_j: str, *, kind: str = "bn_conv_bn",
                  frozen_bn: str = "eval", stitch_bn: str = "train", input_shape: tuple[int, ...] = (3, 32, 32),
                  sender_input_shape: tuple[int, ...] | None = None, kernel_size: int = 1, seed: int | None = None,
                  device: torch.device | str | None = None) -> StitchedModel:
    """A StitchedModel with a fresh stitch of ``kind`` sized from the two cut shapes, on
    ``device`` (default: the receiver's)."""
    if device is None:
        device = next(iter(receiver.parameters()), torch.empty(0)).device
    in_shape = sender.shape_at(cut_i, sender_input_shape or input_shape)
    out_shape = receiver.shape_at(cut_j, input_shape)
    with torch.random.fork_rng(devices=[]):
        if seed is not None:
            torch.manual_seed(seed)
        stitch = make_stitch(kind, in_shape, out_shape, kernel_size=kernel_size)
    return StitchedModel(sender, cut_i, receiver, cut_j, stitch.to(device), frozen_bn=frozen_bn,
                         stitch_bn=stitch_bn)


# --------------------------------------------------------------------------------------------
# Activations and batches over them


class TensorBatches:
    """(x, y) batches over tensors already on the device; shuffled per epoch by ``generator``.

    ``x`` may be a tuple of tensors with the same rows (several stitches' inputs for the same
    images): each batch then yields the tuple indexed alike, in the order one tensor would."""

    def __init__(self, x: torch.Tensor | tuple[torch.Tensor, ...], y: torch.Tensor, batch_size: int, *,
                 shuffle: bool = False, seed: int = 0, drop_last: bool = False) -> None:
        rows = {t.shape[0] for t in x} if isinstance(x, tuple) else {x.shape[0]}
        if rows != {y.shape[0]}:
            raise ValueError(f"x has {sorted(rows)} rows, y has {y.shape[0]}")
        self.x, self.y, self.batch_size = x, y, batch_size
        self.shuffle, self.drop_last = shuffle, drop_last
        self.generator = torch.Generator().manual_seed(seed)

    def __len__(self) -> int:
        n = self.y.shape[0]
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)

    def __iter__(self):
        for idx in index_batches(self.y.shape[0], self.batch_size, shuffle=self.shuffle, drop_last=self.drop_last,
                                 generator=self.generator, device=self.y.device):
            x = tuple(t[idx] for t in self.x) if isinstance(self.x, tuple) else self.x[idx]
            yield x, self.y[idx]


@torch.no_grad()
def activations(model: CutModel, cut: str, split: Split, *, normalisation: str, batch_size: int = 500,
                device: torch.device | str | None = None, precision: str = "auto",
                dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """Activations ``(N, *shape)`` of the frozen ``model`` at ``cut`` for every image of ``split``
    (eval mode, no grad), stored as ``dtype`` on ``device``. Compute once, reuse for every
    receiver and epoch."""
    device = as_device(device)
    was = model.training
    model.eval()
    out = []
    for x, _ in Batches(split, batch_size, normalisation=normalisation, device=device,
                        channels_last=channels_last_ok(model)):
        with measuring(device, precision):
            out.append(model.forward_intermediates(x, [cut])[cut].to(dtype))
    model.train(was)
    return torch.cat(out)


@torch.no_grad()
def activations_between(model: CutModel, cut_from: str, cut_to: str, h: torch.Tensor, *, batch_size: int = 500,
                        device: torch.device | str | None = None, precision: str = "auto",
                        dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """Activations at ``cut_to`` continued from activations ``h`` at an earlier ``cut_from`` of
    the same frozen ``model`` (eval mode, no grad), batch by batch: what :func:`activations`
    returns at ``cut_to`` when ``h`` came from it at ``cut_from`` in float32 with the same batch
    size, for the cost of the pieces in between."""
    device = as_device(device)
    was = model.training
    model.eval()
    out = []
    for x in h.split(batch_size):
        with measuring(device, precision):
            out.append(model.forward_between(x.to(device), cut_from, cut_to).to(dtype))
    model.train(was)
    return torch.cat(out)


@torch.no_grad()
def boundary_dtype(model: CutModel, cut: str, image_shape: tuple[int, ...], *,
                   device: torch.device | str | None = None, precision: str = "auto") -> torch.dtype:
    """The dtype the forward hands on at ``cut`` under ``precision`` (under bf16 autocast some
    boundaries are bfloat16, others float32, as the piece's last operation leaves them). Activations
    stored in that dtype hold exactly what the next piece reads, so continuing from them
    (:func:`activations_between`) gives what a forward from the images gives; stored rounded, not."""
    device = as_device(device)
    was = model.training
    model.eval()
    with measuring(device, precision):
        out = model.forward_intermediates(torch.zeros(1, *image_shape, device=device), [cut])[cut].dtype
    model.train(was)
    return out


class _Top(nn.Module):
    """The trainable part of a stitched model, fed cached sender activations."""

    def __init__(self, stitched: StitchedModel) -> None:
        super().__init__()
        self.stitched = stitched

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        return self.stitched.top(h)


# --------------------------------------------------------------------------------------------
# Direct matching


def _fit_rows(layer: nn.Module, h: torch.Tensor) -> torch.Tensor:
    """Input rows of ``layer`` (Linear, or Conv2d with any kernel/stride/padding) for input ``h``."""
    if isinstance(layer, nn.Linear):
        return to_rows(h)
    k, s, p = layer.kernel_size, layer.stride, layer.padding
    cols = nn.functional.unfold(h, kernel_size=k, stride=s, padding=p)  # (N, C*kh*kw, L)
    return cols.transpose(1, 2).reshape(-1, cols.shape[1])


def _chunks(n: int, row_elems: int, budget: int = 1 << 24) -> Iterable[slice]:
    step = max(1, budget // max(row_elems, 1))
    for s in range(0, n, step):
        yield slice(s, s + step)


@torch.no_grad()
def _set_bn_identity_stats(bn: nn.Module, h: torch.Tensor, *, identity_affine: bool) -> None:
    """Running statistics of ``bn`` from ``h``'s per-channel mean/variance; the affine either
    (1, 0) (the BN standardises) or (std, mean) (the BN is the identity on ``h``)."""
    rows = to_rows(h.double()) if h.ndim != 2 else h.double()
    mean, var = rows.mean(0), rows.var(0, unbiased=False)
    bn.running_mean.copy_(mean.to(bn.running_mean.dtype))
    bn.running_var.copy_(var.to(bn.running_var.dtype))
    if identity_affine:
        bn.weight.copy_(torch.sqrt(var + bn.eps).to(bn.weight.dtype))
        bn.bias.copy_(mean.to(bn.bias.dtype))
    else:
        bn.weight.fill_(1.0)
        bn.bias.zero_()


@torch.no_grad()
def init_dm(stitch: Stitch, x: torch.Tensor, y: torch.Tensor, *, rtol: float = 1e-6) -> dict[str, float]:
    """Direct-matching initialisation of ``stitch`` from sender activations ``x`` (N, ...) and
    receiver activations ``y`` (N, ...) on the same N images (float32 or float64).

    BatchNorm layers before the affine layer standardise their input (statistics from the data,
    unit affine); the affine layer is the least-squares fit (float64 normal equations, bias
    column, rank cut-off ``rtol``) of the receiver's rows from its input rows; BatchNorm layers
    after it become the identity on the prediction. Returns the fit's relative squared residual
    ``||pred - y||^2 / ||y||^2`` (``dm_residual``). In eval mode the stitch then computes exactly
    the least-squares map.
    """
    layers = stitch.layers()
    affine = stitch.affine()
    was = stitch.training
    stitch.eval()
    try:
        if affine is None:  # identity stitch: nothing to fit
            resid = (stitch(x.float()) - y.float()).double().pow(2).sum() / y.double().pow(2).sum().clamp_min(1e-300)
            return {"dm_residual": float(resid)}
        h = stitch.pre(x.float())
        pos = layers.index(affine)
        for m in layers[:pos]:
            if isinstance(m, _BN):
                _set_bn_identity_stats(m, h, identity_affine=False)
            h = m(h)
        ne = NormalEquations(bias=True)
        y_rows_all = to_rows(y.float())
        per_image = y_rows_all.shape[0] // y.shape[0]
        width = h[:1].numel()
        for sl in _chunks(h.shape[0], width * max(per_image, 1)):
            ne.update(_fit_rows(affine, h[sl]), to_rows(y[sl].float()))
        w, b = ne.solve(rtol)  # (p, q), (q,)
        affine.weight.copy_(w.T.reshape(affine.weight.shape).to(affine.weight.dtype))
        affine.bias.copy_(b.to(affine.bias.dtype))
        h = affine(h)
        for m in layers[pos + 1:]:
            if isinstance(m, _BN):
                _set_bn_identity_stats(m, h, identity_affine=True)
            h = m(h)
        resid = (h.double() - y.double()).pow(2).sum() / y.double().pow(2).sum().clamp_min(1e-300)
        return {"dm_residual": float(resid)}
    finally:
        stitch.train(was)


# --------------------------------------------------------------------------------------------
# Task-loss matching and evaluation


def training_batches(x: torch.Tensor | tuple[torch.Tensor, ...], y: torch.Tensor, cfg: TrainConfig) -> TensorBatches:
    """The batches task-loss matching trains a stitch on from tensors already on the device (a
    sender's activations; the images a stitch between hooked networks reads, in
    :mod:`stitchkit.comparing.adapter`; several senders' activations for a stacked pass): ``cfg``'s
    batch size, reshuffled every epoch from ``cfg``'s seed, the last short batch kept."""
    return TensorBatches(x, y, cfg.batch_size, shuffle=True, seed=cfg.seed)


def stitch_batches(stitched: StitchedModel, train_split: Split, cfg: TrainConfig, *, normalisation: str,
                   device: torch.device | str | None = None, activations: torch.Tensor | None = None,
                   labels: torch.Tensor | None = None) -> tuple[nn.Module, TensorBatches | Batches]:
    """What task-loss matching trains, and on what: (module, batches) for
    :func:`stitchkit.networks.train.train` with ``cfg``.

    With ``activations`` (the sender's, at cut_i, for every image of ``train_split``; or a
    tensor source's with its ``labels``) the module is the stitched model's top, fed those
    activations in shuffled batches; otherwise it is the whole stitched model, fed (possibly
    augmented) image batches on which the frozen sender runs at each step. A caller that trains
    the stitch itself (the grid) passes these straight to ``train``; :func:`train_stitch` does so too.
    """
    device = as_device(device)
    if activations is not None:
        y = (labels if labels is not None else train_split.labels).to(device)
        return _Top(stitched), training_batches(activations, y, cfg)
    return stitched, Batches(train_split, cfg.batch_size, normalisation=normalisation, shuffle=True,
                             augment=cfg.augment, seed=cfg.seed, device=device,
                             channels_last=channels_last_ok(stitched.sender))


def train_stitch(stitched: StitchedModel, train_split: Split, cfg: TrainConfig, *, normalisation: str,
                 device: torch.device | str | None = None, activations: torch.Tensor | None = None,
                 labels: torch.Tensor | None = None, desc: str = "stitch", progress: bool = True) -> list[dict]:
    """Task-loss matching: train only the stitch on the task, halves frozen, on the batches
    :func:`stitch_batches` makes (from ``activations`` if given, else from the images)."""
    device = as_device(device)
    model, batches = stitch_batches(stitched, train_split, cfg, normalisation=normalisation, device=device,
                                    activations=activations, labels=labels)
    return train(model, batches, cfg, device=device, desc=desc, progress=progress)


class _Stacked(nn.Module):
    """Several stitches into the same receiver cut, trained in one pass: each stitch maps its own
    sender's activations, the outputs are concatenated on the batch axis and the frozen receiver
    tail (BatchNorm in eval mode, so per-image) runs once on the lot."""

    def __init__(self, members: Sequence[StitchedModel]) -> None:
        super().__init__()
        first = members[0]
        for m in members:
            if m.receiver is not first.receiver or m.cut_j != first.cut_j:
                raise ValueError("stacked stitches must share one receiver and one receiver cut, got "
                                 f"{m.cut_j!r} and {first.cut_j!r}")
            if m.frozen_bn != "eval":
                raise ValueError("stacked stitches need the receiver's BatchNorm in eval mode (frozen_bn='eval'), "
                                 f"got {m.frozen_bn!r}")
        self.members = nn.ModuleList(members)

    def forward(self, hs: tuple[torch.Tensor, ...]) -> torch.Tensor:
        first = self.members[0]
        h = torch.cat([m.stitch(x) for m, x in zip(self.members, hs)])
        return first.receiver.forward_from(first.cut_j, h)


class StackedCrossEntropy:
    """Sum over the stacked stitches of each one's mean cross-entropy (so each stitch gets the
    gradient it would get alone), recording each one's loss per step."""

    def __init__(self, k: int) -> None:
        self.k, self.steps = k, []

    def __call__(self, model: nn.Module, xs: tuple[torch.Tensor, ...], y: torch.Tensor):
        logits = model(xs)
        per = nn.functional.cross_entropy(logits.float(), y.repeat(self.k), reduction="none").view(self.k, -1).mean(1)
        self.steps.append((per.detach(), y.shape[0]))
        return per.sum(), None

    def per_stitch(self, history: list[dict]) -> list[list[dict]]:
        """Each stitch's per-epoch history, from the pass's ``history`` and the per-step losses
        recorded (an epoch ends at its record's step): its own loss; lr and the shared seconds."""
        k = self.k
        per = torch.stack([p for p, _ in self.steps]).double().cpu() if self.steps else torch.zeros(0, k)
        sizes = torch.tensor([n for _, n in self.steps], dtype=torch.float64)
        out: list[list[dict]] = [[] for _ in range(k)]
        start = 0
        for rec in history:
            end = rec["step"]
            w = sizes[start:end]
            mean = (per[start:end] * w[:, None]).sum(0) / max(float(w.sum()), 1.0)
            for i in range(k):
                out[i].append({**rec, "loss": float(mean[i]), "train_accuracy": None})
            start = end
        return out


def stacked_batches(members: Sequence[StitchedModel], activations: Sequence[torch.Tensor], labels: torch.Tensor,
                    cfg: TrainConfig, *,
                    device: torch.device | str | None = None) -> tuple[nn.Module, TensorBatches, StackedCrossEntropy]:
    """What a stacked pass of task-loss matching trains, on what and against what: (module,
    batches, objective) for :func:`stitchkit.networks.train.train` with ``cfg`` and
    ``objective=objective``; ``objective.per_stitch(history)`` then splits the pass's history into
    each stitch's. The same batches, schedule and per-stitch gradients as :func:`train_stitch` run
    on each stitch alone, but one receiver-tail pass per step for all of them. The grid passes
    these straight to ``train``."""
    device = as_device(device)
    k = len(members)
    if len(activations) != k:
        raise ValueError(f"{k} stitches but {len(activations)} activation tensors")
    batches = training_batches(tuple(activations), labels.to(device), cfg)
    return _Stacked(members), batches, StackedCrossEntropy(k)


def evaluate_stitch(stitched: StitchedModel, test_split: Split | None, *, normalisation: str,
                    device: torch.device | str | None = None, precision: str = MEASURE_PRECISION,
                    activations: torch.Tensor | None = None, labels: torch.Tensor | None = None,
                    batch_size: int = 500, per_image: bool = False) -> dict[str, Any]:
    """Accuracy and loss of the stitched model on ``test_split`` (from activations if given);
    ``per_image``: also ``correct`` (N,) bool, in the split's order."""
    device = as_device(device)
    if activations is not None:
        y = (labels if labels is not None else test_split.labels).to(device)
        batches = TensorBatches(activations, y, batch_size)
        return evaluate(_Top(stitched), batches, device=device, precision=precision, per_image=per_image)
    batches = Batches(test_split, batch_size, normalisation=normalisation, device=device,
                      channels_last=channels_last_ok(stitched.sender))
    return evaluate(stitched, batches, device=device, precision=precision, per_image=per_image)
