"""One explicit train / evaluate loop with a pluggable objective.

``train(model, batches, cfg, objective=cross_entropy)`` optimises the parameters of ``model``
that require grad on the (x, y) batches yielded by ``batches`` (one pass = one epoch), with the
optimiser and schedule the recipe names, bf16 autocast where the hardware computes it natively
(``precision="auto"``, see :mod:`stitchkit.base.hardware`), a tqdm bar in the terminal, and an
optional per-epoch checkpoint from which an interrupted run resumes (its training time summed
over all segments). On CPU the same seed gives the same weights bit for bit. A checkpoint carries
a SHA-256 of its payload: one that is truncated, corrupt or from another model is named in a
warning, deleted, and training starts from the beginning.

An objective is ``objective(model, x, y) -> (loss, logits or None)``: :func:`cross_entropy`
(classification), :func:`mse` (regression onto a target representation, Hernandez et al.'s
similarity-trained stitch); Balogh & Jelasity's energy OOD loss plugs in the same way. An
objective with random state of its own (SimCLR's views) exposes ``get_state``/``set_state``,
and that state is checkpointed with the rest.
"""

from __future__ import annotations

import hashlib
import io
import math
import os
import time
import warnings
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Callable, ClassVar, Iterable, Protocol

import torch
from torch import nn

from ..base.fileio import atomic_write_bytes
from ..base.hardware import MEASURE_PRECISION, PRECISIONS, as_device, autocast, measuring, resolve_precision
from ..base.progress import progress_bar

OPTIMISERS = ("sgd", "adam")
SCHEDULES = ("constant", "multistep", "cosine", "warmup_cosine", "warmup_linear")


@dataclass(frozen=True)
class TrainConfig:
    """Optimisation recipe. Lengths: ``steps`` if set, else ``epochs`` passes over the data."""

    epochs: float = 1.0  # passes over the training set (may be fractional)
    steps: int | None = None  # total optimiser steps; overrides epochs
    batch_size: int = 128  # examples per step
    optimizer: str = "sgd"  # sgd | adam
    lr: float = 0.05  # peak learning rate
    momentum: float = 0.9  # SGD only
    nesterov: bool = False  # SGD only: Nesterov momentum
    weight_decay: float = 1e-4  # L2 coupled to the gradient (torch's SGD/Adam convention)
    schedule: str = "multistep"  # constant | multistep | cosine | warmup_cosine | warmup_linear
    milestones: tuple[float, ...] = (0.5, 0.75)  # multistep: fractions of total steps
    gamma: float = 0.2  # multistep: factor at each milestone
    warmup: float = 0.0  # warmup_cosine, warmup_linear: fraction of steps of linear warmup
    label_smoothing: float = 0.0  # cross-entropy's label smoothing (0: none)
    clip_norm: float | None = None  # clip the gradients' global L2 norm to this before each step (None: never)
    augment: bool = True  # random crop (pad 4) + horizontal flip
    precision: str = "auto"  # auto (bf16 where native, else fp32) | bf16 | fp32; never part of a cache key
    stop: float = 1.0  # run this fraction of the schedule's steps: a snapshot part-way through the run
    seed: int = 0  # data order and augmentation

    NOT_IN_KEY: ClassVar[tuple[str, ...]] = ("precision",)

    def __post_init__(self) -> None:
        if self.optimizer not in OPTIMISERS:
            raise ValueError(f"unknown optimizer {self.optimizer!r}; valid: {', '.join(OPTIMISERS)}")
        if self.schedule not in SCHEDULES:
            raise ValueError(f"unknown schedule {self.schedule!r}; valid: {', '.join(SCHEDULES)}")
        if self.precision not in PRECISIONS:
            raise ValueError(f"unknown precision {self.precision!r}; valid: {', '.join(PRECISIONS)}")
        if self.epochs < 0 or (self.steps is not None and self.steps < 0):
            raise ValueError(f"epochs and steps must be >= 0, got {self.epochs}, {self.steps}")
        if self.batch_size <= 0 or self.lr <= 0:
            raise ValueError(f"batch_size and lr must be positive, got {self.batch_size}, {self.lr}")
        if self.clip_norm is not None and not self.clip_norm > 0:
            raise ValueError(f"clip_norm must be positive or None, got {self.clip_norm}")
        if not 0 < self.stop <= 1:
            raise ValueError(f"stop must be in (0, 1], got {self.stop}")
        if not 0 <= self.label_smoothing < 1:
            raise ValueError(f"label_smoothing must be in [0, 1), got {self.label_smoothing}")
        if self.nesterov and (self.optimizer != "sgd" or self.momentum <= 0):
            raise ValueError(f"nesterov needs optimizer 'sgd' with momentum > 0, got {self.optimizer!r} "
                             f"with momentum {self.momentum}")

    def total_steps(self, steps_per_epoch: int) -> int:
        """The schedule's length in steps (the learning rate decays over these)."""
        return self.steps if self.steps is not None else int(math.ceil(self.epochs * steps_per_epoch))

    def stop_step(self, steps_per_epoch: int) -> int:
        """The step at which training stops: ``stop`` of the schedule's length (at least one)."""
        total = self.total_steps(steps_per_epoch)
        return total if self.stop >= 1 else max(1, round(self.stop * total))

    def to_dict(self) -> dict:
        return asdict(self)

    def describe(self) -> str:
        """The recipe in words, for a page's prose: "16 epochs at batch 512, SGD (Nesterov,
        momentum 0.9) at lr 0.2, a 10% linear warm-up then a cosine decay, weight decay 5e-4,
        label smoothing 0.1, crop + flip"."""
        length = (f"{self.steps:,} steps" if self.steps is not None
                  else f"{self.epochs:g} epoch{'' if self.epochs == 1 else 's'}")
        if self.optimizer == "sgd":
            opt = f"SGD ({'Nesterov, ' if self.nesterov else ''}momentum {self.momentum:g})"
        else:
            opt = "Adam"
        schedule = {
            "constant": "a constant learning rate",
            "multistep": ("the learning rate x" + f"{self.gamma:g} at " + " and ".join(f"{m:.0%}" for m in self.milestones)
                          + " of the steps" if self.milestones else "a constant learning rate"),
            "cosine": "a cosine decay",
            "warmup_cosine": f"a {self.warmup:.0%} linear warm-up then a cosine decay",
            "warmup_linear": f"a {self.warmup:.0%} linear warm-up then a linear decay to zero",
        }[self.schedule]
        parts = [f"{length} at batch {self.batch_size}", f"{opt} at lr {self.lr:g}", schedule,
                 f"weight decay {self.weight_decay:g}"]
        if self.label_smoothing:
            parts.append(f"label smoothing {self.label_smoothing:g}")
        if self.clip_norm is not None:
            parts.append(f"gradients clipped at norm {self.clip_norm:g}")
        parts.append("crop + flip" if self.augment else "no augmentation")
        return ", ".join(parts)


class BatchSource(Protocol):
    """Re-iterable: each ``iter()`` is one epoch of (x, y) batches; has ``generator``."""

    generator: torch.Generator

    def __iter__(self): ...

    def __len__(self) -> int: ...


Objective = Callable[[nn.Module, torch.Tensor, torch.Tensor], "tuple[torch.Tensor, torch.Tensor | None]"]


class History(list):
    """A run's per-epoch records (a list, as before), and the training seconds an earlier,
    interrupted run had already spent before this one resumed from its checkpoint."""

    def __init__(self, records=(), *, resumed_seconds: float = 0.0) -> None:
        super().__init__(records)
        self.resumed_seconds = float(resumed_seconds)


def cross_entropy(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Classification: mean cross-entropy of ``model(x)`` (B, K) against labels ``y`` (B,)."""
    logits = model(x)
    return nn.functional.cross_entropy(logits.float(), y), logits


def smoothed_cross_entropy(label_smoothing: float) -> Objective:
    """:func:`cross_entropy` with ``label_smoothing`` (what :func:`train` uses for a recipe that
    names one)."""
    def objective(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        logits = model(x)
        return nn.functional.cross_entropy(logits.float(), y, label_smoothing=label_smoothing), logits
    return objective


def mse(model: nn.Module, x: torch.Tensor, target: torch.Tensor) -> tuple[torch.Tensor, None]:
    """Regression: mean squared error between ``model(x)`` and ``target`` (same shape)."""
    return nn.functional.mse_loss(model(x).float(), target.float()), None


def make_optimizer(params: Iterable[nn.Parameter], cfg: TrainConfig) -> torch.optim.Optimizer:
    params = list(params)
    if not params:
        raise ValueError("no trainable parameters: every parameter has requires_grad=False")
    # on a GPU, one fused kernel per step for all parameters (no per-tensor launches); the CPU path is unchanged
    fused = {"fused": True} if all(p.is_cuda for p in params) else {}
    if cfg.optimizer == "sgd":
        return torch.optim.SGD(params, lr=cfg.lr, momentum=cfg.momentum, weight_decay=cfg.weight_decay,
                               **({"nesterov": True} if cfg.nesterov else {}), **fused)
    return torch.optim.Adam(params, lr=cfg.lr, weight_decay=cfg.weight_decay, **fused)


def lr_factor(cfg: TrainConfig, step: int, total: int) -> float:
    """Multiplier of ``cfg.lr`` at optimiser step ``step`` of ``total``."""
    t = step / max(total, 1)
    if cfg.schedule == "constant":
        return 1.0
    if cfg.schedule == "multistep":
        return cfg.gamma ** sum(t >= m for m in cfg.milestones)
    if cfg.schedule in ("warmup_cosine", "warmup_linear") and t < cfg.warmup:
        return (step + 1) / max(cfg.warmup * total, 1)
    start = cfg.warmup if cfg.schedule in ("warmup_cosine", "warmup_linear") else 0.0
    if cfg.schedule == "warmup_linear":  # then a linear decay to zero (a one-cycle without the momentum cycle)
        return max(0.0, 1 - (t - start) / max(1 - start, 1e-12))
    return 0.5 * (1 + math.cos(math.pi * (t - start) / max(1 - start, 1e-12)))


def train(model: nn.Module, batches: BatchSource, cfg: TrainConfig, *, device: torch.device | str | None = None,
          objective: Objective = cross_entropy, checkpoint: str | os.PathLike | None = None, desc: str = "train",
          progress: bool = True, on_step: Callable[[int], None] | None = None, compile: bool = False) -> list[dict]:
    """Train ``model``'s trainable parameters; returns per-epoch records (loss, accuracy, lr,
    cumulative seconds).

    ``batches`` yields (x, y) on ``device``. If ``checkpoint`` is given, the state is saved there
    atomically after every epoch and a run finding it resumes from it; ``seconds`` then counts
    the time of every segment. Training stops at ``cfg.stop`` of the schedule's steps;
    ``on_step(step)`` is called after every optimiser step (e.g. to store snapshots).
    ``compile``: run the objective's forward through ``torch.compile(model)`` (same parameters;
    the checkpoint and the returned model stay the plain module).
    """
    device = as_device(device)
    precision = resolve_precision(cfg.precision, device)
    classifying = objective is cross_entropy
    if classifying and cfg.label_smoothing:
        objective = smoothed_cross_entropy(cfg.label_smoothing)
    steps_per_epoch = len(batches)
    total = cfg.total_steps(steps_per_epoch)
    optimiser = make_optimizer((p for p in model.parameters() if p.requires_grad), cfg)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimiser, lambda s: lr_factor(cfg, s, total))
    step, history, seconds_before = 0, [], 0.0
    if checkpoint is not None and Path(checkpoint).exists():
        # A failed resume may have loaded part of the state: keep the starting state to go back to.
        initial_model = {k: v.detach().clone() for k, v in model.state_dict().items()}
        initial_generator = batches.generator.get_state()
        initial_objective = objective.get_state() if hasattr(objective, "get_state") else None
        try:
            state = read_checkpoint(checkpoint)  # on the CPU: the generator state must stay there
            if not 0 <= state["step"] <= total or not isinstance(state["history"], list):
                raise ValueError(f"step {state['step']} of {total} or history does not fit this run")
            if state.get("precision", precision) != precision:  # older checkpoints did not say: trusted
                raise ValueError(f"it was trained in {state['precision']} and this run trains in {precision}: "
                                 "one model would mix both")
            model.load_state_dict(state["model"])
            optimiser.load_state_dict(state["optimizer"])
            scheduler.load_state_dict(state["scheduler"])
            batches.generator.set_state(state["generator"])
            if hasattr(objective, "set_state") and "objective" in state:
                objective.set_state(state["objective"])
            step, history = int(state["step"]), list(state["history"])
            seconds_before = history[-1]["seconds"] if history else 0.0
        except Exception as exc:  # truncated, corrupt, another model's: start over
            reason = " ".join(str(exc).split())
            reason = reason if len(reason) <= 200 else reason[:200] + "..."
            warnings.warn(f"{desc}: training checkpoint {checkpoint} is unusable ({type(exc).__name__}: {reason}); "
                          "deleted, training from the start", stacklevel=2)
            Path(checkpoint).unlink(missing_ok=True)
            model.load_state_dict(initial_model)
            batches.generator.set_state(initial_generator)
            if initial_objective is not None:
                objective.set_state(initial_objective)
            optimiser = make_optimizer((p for p in model.parameters() if p.requires_grad), cfg)
            scheduler = torch.optim.lr_scheduler.LambdaLR(optimiser, lambda s: lr_factor(cfg, s, total))
            step, history, seconds_before = 0, [], 0.0
    step_model = torch.compile(model) if compile else model
    stop_at = cfg.stop_step(steps_per_epoch)
    bar = progress_bar(total=stop_at, initial=step, desc=desc, disable=not progress, unit="step")
    t0 = time.perf_counter()
    while step < stop_at:
        model.train()
        loss_sum = torch.zeros((), device=device)
        correct = torch.zeros((), device=device, dtype=torch.long)
        seen = 0
        for x, y in batches:
            with autocast(device, precision):
                try:
                    loss, logits = objective(step_model, x, y)
                except Exception as exc:  # compilation failed (no usable compiler, ...): train eagerly
                    if step_model is model:
                        raise
                    warnings.warn(f"{desc}: torch.compile failed ({type(exc).__name__}: {str(exc)[:200]}); "
                                  "training without it (STITCHKIT_COMPILE=0 skips the attempt)", stacklevel=2)
                    step_model = model
                    loss, logits = objective(model, x, y)
            optimiser.zero_grad(set_to_none=True)
            loss.backward()
            if cfg.clip_norm is not None:
                torch.nn.utils.clip_grad_norm_([p for g in optimiser.param_groups for p in g["params"]], cfg.clip_norm)
            optimiser.step()
            scheduler.step()
            step += 1
            bar.update(1)
            if on_step is not None:
                on_step(step)
            loss_sum += loss.detach() * y.shape[0]
            if logits is not None:
                correct += (logits.argmax(1) == y).sum()
            seen += y.shape[0]
            if step % 50 == 0 and not torch.isfinite(loss):
                break
            if step >= stop_at:
                break
        record = {"epoch": len(history) + 1, "step": step, "loss": loss_sum.item() / max(seen, 1),
                  "train_accuracy": correct.item() / max(seen, 1) if classifying else None,
                  "lr": optimiser.param_groups[0]["lr"],
                  "seconds": seconds_before + time.perf_counter() - t0}
        if not math.isfinite(record["loss"]):
            raise FloatingPointError(
                f"{desc}: training loss became {record['loss']} by step {step} (lr {cfg.lr}, optimizer "
                f"{cfg.optimizer}); lower the learning rate or use precision='fp32'")
        history.append(record)
        bar.set_postfix(loss=f"{record['loss']:.3f}")
        if checkpoint is not None:
            write_checkpoint(checkpoint, {"model": model.state_dict(), "optimizer": optimiser.state_dict(),
                                          "scheduler": scheduler.state_dict(),
                                          "generator": batches.generator.get_state(), "step": step,
                                          "history": history, "precision": precision,
                                          **({"objective": objective.get_state()}
                                             if hasattr(objective, "get_state") else {})})
    bar.close()
    return History(history, resumed_seconds=seconds_before)


_CHECKPOINT_MAGIC = b"STITCHKIT-CHECKPOINT"


def write_checkpoint(path: str | os.PathLike, state: dict) -> None:
    """Atomically write ``state`` as a header line ``STITCHKIT-CHECKPOINT 1 <sha256 of payload>``
    followed by the ``torch.save`` payload."""
    buf = io.BytesIO()
    torch.save(state, buf)
    payload = buf.getvalue()
    header = b"%s 1 %s\n" % (_CHECKPOINT_MAGIC, hashlib.sha256(payload).hexdigest().encode())
    atomic_write_bytes(path, header + payload)


def read_checkpoint(path: str | os.PathLike, device: torch.device | str = "cpu") -> dict:
    """Read a checkpoint written by :func:`write_checkpoint` (or, without the header, a plain
    ``torch.save`` file of an older version), as tensors and plain data only (``weights_only``);
    raises ValueError if its checksum or contents are wrong."""
    raw = Path(path).read_bytes()
    if raw.startswith(_CHECKPOINT_MAGIC):
        head, _, payload = raw.partition(b"\n")
        parts = head.split(b" ")
        if len(parts) != 3 or hashlib.sha256(payload).hexdigest().encode() != parts[2]:
            raise ValueError("checksum mismatch (truncated or corrupt)")
        raw = payload
    try:  # tensors and plain data only: a checkpoint never runs code (a planted pickle is refused)
        state = torch.load(io.BytesIO(raw), map_location=device, weights_only=True)
    except Exception as exc:
        raise ValueError(f"not tensors and plain data, refused unread ({type(exc).__name__})") from None
    if not isinstance(state, dict):
        raise ValueError("not a checkpoint (not a dict)")
    missing = {"model", "optimizer", "scheduler", "generator", "step", "history"} - set(state)
    if missing:
        raise ValueError(f"missing {', '.join(sorted(missing))}")
    return state


@torch.no_grad()
def predict(model: nn.Module, batches: Iterable, *, device: torch.device | str | None = None,
            precision: str = MEASURE_PRECISION) -> tuple[torch.Tensor, torch.Tensor]:
    """Logits (N, K) float32 and labels (N,) over ``batches``, model in eval mode; computed in
    fp32 unless ``precision`` says otherwise (a measurement: see :mod:`stitchkit.base.hardware`)."""
    device = as_device(device)
    was_training = model.training
    model.eval()
    logits, labels = [], []
    for x, y in batches:
        with measuring(device, precision):
            logits.append(model(x).float())
        labels.append(y)
    model.train(was_training)
    return torch.cat(logits), torch.cat(labels)


def evaluate(model: nn.Module, batches: Iterable, *, device: torch.device | str | None = None,
             precision: str = MEASURE_PRECISION, per_image: bool = False) -> dict[str, Any]:
    """Accuracy and mean cross-entropy over ``batches`` (model in eval mode, no grad).
    ``per_image``: also ``correct``, a numpy bool array (N,) in batch order (for the paired
    bootstrap of :mod:`stitchkit.verdicts.noise`)."""
    logits, labels = predict(model, batches, device=device, precision=precision)
    correct = logits.argmax(1) == labels
    out: dict[str, Any] = {"accuracy": correct.float().mean().item(),
                           "loss": nn.functional.cross_entropy(logits, labels).item(), "n": int(labels.numel())}
    if per_image:
        out["correct"] = correct.cpu().numpy()
    return out
