"""One explicit train / evaluate loop.

``train(model, batches, cfg)`` optimises the parameters of ``model`` that require grad on the
(x, y) batches yielded by ``batches`` (one pass = one epoch), with the optimiser and schedule the
recipe names, bf16 autocast + channels_last where the device supports them (``precision="fp32"``
switches both off), a tqdm bar, and an optional per-epoch checkpoint from which an interrupted
run resumes. On CPU the same seed gives the same weights bit for bit.
"""

from __future__ import annotations

import io
import math
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Iterable, Protocol

import torch
from torch import nn
from tqdm.auto import tqdm

from .io import atomic_write_bytes

OPTIMISERS = ("sgd", "adam")
SCHEDULES = ("constant", "multistep", "cosine", "warmup_cosine")
PRECISIONS = ("bf16", "fp32")


def default_device() -> torch.device:
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def device_name(device: torch.device | str | None = None) -> str:
    device = torch.device(device or default_device())
    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    return f"cpu ({os.cpu_count()} cores, {torch.get_num_threads()} threads)"


@dataclass(frozen=True)
class TrainConfig:
    """Optimisation recipe. Lengths: ``steps`` if set, else ``epochs`` passes over the data."""

    epochs: float = 1.0  # passes over the training set (may be fractional)
    steps: int | None = None  # total optimiser steps; overrides epochs
    batch_size: int = 128  # examples per step
    optimizer: str = "sgd"  # sgd | adam
    lr: float = 0.05  # peak learning rate
    momentum: float = 0.9  # SGD only
    weight_decay: float = 1e-4  # L2 coupled to the gradient (torch's SGD/Adam convention)
    schedule: str = "multistep"  # constant | multistep | cosine | warmup_cosine
    milestones: tuple[float, ...] = (0.5, 0.75)  # multistep: fractions of total steps
    gamma: float = 0.2  # multistep: factor at each milestone
    warmup: float = 0.0  # warmup_cosine: fraction of steps of linear warmup
    augment: bool = True  # random crop (pad 4) + horizontal flip
    precision: str = "bf16"  # bf16 autocast + channels_last, or fp32
    seed: int = 0  # data order and augmentation

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

    def total_steps(self, steps_per_epoch: int) -> int:
        return self.steps if self.steps is not None else int(math.ceil(self.epochs * steps_per_epoch))

    def to_dict(self) -> dict:
        return asdict(self)


class BatchSource(Protocol):
    """Re-iterable: each ``iter()`` is one epoch of (x, y) batches; has ``generator``."""

    generator: torch.Generator

    def __iter__(self): ...

    def __len__(self) -> int: ...


def autocast(device: torch.device, precision: str):
    enabled = precision == "bf16" and (device.type == "cpu" or torch.cuda.is_bf16_supported())
    return torch.autocast(device.type, dtype=torch.bfloat16, enabled=enabled)


def make_optimizer(params: Iterable[nn.Parameter], cfg: TrainConfig) -> torch.optim.Optimizer:
    params = list(params)
    if not params:
        raise ValueError("no trainable parameters: every parameter has requires_grad=False")
    if cfg.optimizer == "sgd":
        return torch.optim.SGD(params, lr=cfg.lr, momentum=cfg.momentum, weight_decay=cfg.weight_decay)
    return torch.optim.Adam(params, lr=cfg.lr, weight_decay=cfg.weight_decay)


def lr_factor(cfg: TrainConfig, step: int, total: int) -> float:
    """Multiplier of ``cfg.lr`` at optimiser step ``step`` of ``total``."""
    t = step / max(total, 1)
    if cfg.schedule == "constant":
        return 1.0
    if cfg.schedule == "multistep":
        return cfg.gamma ** sum(t >= m for m in cfg.milestones)
    if cfg.schedule == "warmup_cosine" and t < cfg.warmup:
        return (step + 1) / max(cfg.warmup * total, 1)
    start = cfg.warmup if cfg.schedule == "warmup_cosine" else 0.0
    return 0.5 * (1 + math.cos(math.pi * (t - start) / max(1 - start, 1e-12)))


def train(model: nn.Module, batches: BatchSource, cfg: TrainConfig, *, device: torch.device | str | None = None,
          checkpoint: str | os.PathLike | None = None, desc: str = "train", progress: bool = True) -> list[dict]:
    """Train ``model``'s trainable parameters; returns per-epoch records (loss, accuracy, lr).

    ``batches`` yields (x, y) on ``device``. If ``checkpoint`` is given, the state is saved there
    atomically after every epoch and a run finding it resumes from it.
    """
    device = torch.device(device or default_device())
    steps_per_epoch = len(batches)
    total = cfg.total_steps(steps_per_epoch)
    optimiser = make_optimizer((p for p in model.parameters() if p.requires_grad), cfg)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimiser, lambda s: lr_factor(cfg, s, total))
    step, history = 0, []
    if checkpoint is not None and Path(checkpoint).exists():
        state = torch.load(checkpoint, map_location=device, weights_only=False)
        model.load_state_dict(state["model"])
        optimiser.load_state_dict(state["optimizer"])
        scheduler.load_state_dict(state["scheduler"])
        batches.generator.set_state(state["generator"])
        step, history = state["step"], state["history"]
    bar = tqdm(total=total, initial=step, desc=desc, disable=not progress, unit="step", leave=False)
    while step < total:
        model.train()
        loss_sum = torch.zeros((), device=device)
        correct = torch.zeros((), device=device, dtype=torch.long)
        seen = 0
        for x, y in batches:
            with autocast(device, cfg.precision):
                logits = model(x)
                loss = nn.functional.cross_entropy(logits.float(), y)
            optimiser.zero_grad(set_to_none=True)
            loss.backward()
            optimiser.step()
            scheduler.step()
            step += 1
            bar.update(1)
            loss_sum += loss.detach() * y.numel()
            correct += (logits.argmax(1) == y).sum()
            seen += y.numel()
            if step % 50 == 0 and not torch.isfinite(loss):
                break
            if step >= total:
                break
        record = {"epoch": len(history) + 1, "step": step, "loss": loss_sum.item() / max(seen, 1),
                  "train_accuracy": correct.item() / max(seen, 1), "lr": optimiser.param_groups[0]["lr"]}
        if not math.isfinite(record["loss"]):
            raise FloatingPointError(
                f"{desc}: training loss became {record['loss']} by step {step} (lr {cfg.lr}, optimizer "
                f"{cfg.optimizer}); lower the learning rate or use precision='fp32'")
        history.append(record)
        bar.set_postfix(loss=f"{record['loss']:.3f}", acc=f"{record['train_accuracy']:.3f}")
        if checkpoint is not None:
            buf = io.BytesIO()
            torch.save({"model": model.state_dict(), "optimizer": optimiser.state_dict(),
                        "scheduler": scheduler.state_dict(), "generator": batches.generator.get_state(),
                        "step": step, "history": history}, buf)
            atomic_write_bytes(checkpoint, buf.getvalue())
    bar.close()
    return history


@torch.no_grad()
def predict(model: nn.Module, batches: Iterable, *, device: torch.device | str | None = None,
            precision: str = "bf16") -> tuple[torch.Tensor, torch.Tensor]:
    """Logits (N, K) float32 and labels (N,) over ``batches``, model in eval mode."""
    device = torch.device(device or default_device())
    was_training = model.training
    model.eval()
    logits, labels = [], []
    for x, y in batches:
        with autocast(device, precision):
            logits.append(model(x).float())
        labels.append(y)
    model.train(was_training)
    return torch.cat(logits), torch.cat(labels)


def evaluate(model: nn.Module, batches: Iterable, *, device: torch.device | str | None = None,
             precision: str = "bf16") -> dict[str, float]:
    """Accuracy and mean cross-entropy over ``batches`` (model in eval mode, no grad)."""
    logits, labels = predict(model, batches, device=device, precision=precision)
    return {"accuracy": (logits.argmax(1) == labels).float().mean().item(),
            "loss": nn.functional.cross_entropy(logits, labels).item(), "n": int(labels.numel())}
