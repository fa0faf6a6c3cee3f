"""Bansal, Nakkiran & Barak 2021, "Revisiting model stitching to compare neural representations".

Recipe (paper App. A, catalogue): pre-activation ResNet-18 of width k on CIFAR-10 with the CIFAR
mean/std normalisation; models trained with SGD (momentum 0.9, lr 0.05, x0.2 at 32k and 48k of
64k steps, weight decay 1e-4, batch 128, crop+flip); stitch = BatchNorm -> 1x1 conv -> BatchNorm
(BN1d -> Linear -> BN1d on the pooled vector) between blocks, trained with Adam (lr 1e-3,
cosine decay) with both halves frozen.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
import torch
from tqdm.auto import tqdm

from ..cache import ModelSpec, StitchSpec, Store, eval_split, load_or_stitch, load_or_train
from ..data import Batches
from ..stitching import ActivationCache
from ..train import TrainConfig, default_device, evaluate


@dataclass(frozen=True)
class ConnectivityConfig:
    """Settings of B-F2A (stitching connectivity of two seeds, random bottom as reference)."""

    model: str = "preact_resnet18"  # registry name
    width: int = 64  # k: stage widths k, 2k, 4k, 8k (paper: 64)
    train_size: int | None = None  # training images per model (None = all 50k)
    model_epochs: float = 0.0  # model training length in passes (ignored when model_steps is set)
    model_steps: int | None = 64_000  # model training length in SGD steps (paper: 64k)
    model_lr: float = 0.05  # SGD peak learning rate
    model_batch: int = 128  # images per SGD step
    stitch_epochs: float = 10.0  # stitch training passes (paper: not stated)
    stitch_train_size: int | None = None  # images used to train each stitch (None = all)
    stitch_augment: bool = True  # crop+flip while training stitches (off: sender activations cached)
    stitch_lr: float = 1e-3  # Adam, cosine decay
    stitch_batch: int = 128  # images per stitch step
    test_size: int | None = None  # test images for every accuracy (None = all 10k)
    frozen_bn: str = "eval"  # eval | train (Bansal's code left frozen BN in train mode)
    seeds: tuple[int, int] = (0, 1)  # (receiver/top, sender/bottom) initialisation seeds
    random_seed: int = 2  # seed of the untrained reference bottom
    precision: str = "bf16"  # bf16 autocast + channels_last, or fp32

    def model_spec(self, seed: int, trained: bool = True) -> ModelSpec:
        # an untrained model is the same recipe with zero steps (its cache key says so)
        train = TrainConfig(epochs=self.model_epochs if trained else 0.0,
                            steps=self.model_steps if trained else None, batch_size=self.model_batch,
                            optimizer="sgd", lr=self.model_lr, momentum=0.9,
                            weight_decay=1e-4, schedule="multistep", milestones=(0.5, 0.75), gamma=0.2,
                            augment=True, precision=self.precision, seed=seed)
        return ModelSpec(model=self.model, width=self.width, dataset="cifar10", normalisation="cifar",
                         train_size=self.train_size, seed=seed, train=train)

    def stitch_train(self) -> TrainConfig:
        return TrainConfig(epochs=self.stitch_epochs, batch_size=self.stitch_batch, optimizer="adam",
                           lr=self.stitch_lr, weight_decay=0.0, schedule="cosine", augment=self.stitch_augment,
                           precision=self.precision, seed=0)


PRESETS = {
    # CI: seconds. Tiny width, a few hundred images; checks the plumbing, not the science.
    "smoke": ConnectivityConfig(width=4, train_size=512, model_epochs=1, model_steps=None, stitch_epochs=1,
                                stitch_train_size=256, stitch_augment=False, test_size=500),
    # 2 CPU cores, ~15 min: width 16, 5 epochs on all 50k (milestones at 50%/75%). Stitches:
    # 2 epochs on 10k images without augmentation (sender activations cached), Adam at lr 1e-2
    # and batch 32: at the paper's lr 1e-3 / batch 128 the ~150 steps a CPU can afford leave the
    # stitch far from converged (the BN-conv-BN output scale grows by ~lr per step).
    "demo": ConnectivityConfig(width=16, model_epochs=5, model_steps=None, stitch_epochs=2,
                               stitch_train_size=10_000, stitch_augment=False, stitch_lr=1e-2, stitch_batch=32),
    # GPU: the paper's model recipe (64k steps); stitch epochs are not stated in the paper.
    "paper": ConnectivityConfig(),
}


def connectivity(cfg: ConnectivityConfig, *, device: torch.device | str | None = None, store: Store | None = None,
                 progress: bool = True) -> tuple[pd.DataFrame, dict]:
    """Stitch sender (seed 1, and an untrained seed-2 copy) into the receiver (seed 0) at every cut.

    Returns a table (one row per cut and sender: accuracy, penalty) and a dict of model metrics
    (test accuracy of the receiver and sender on the evaluation set, training throughput).
    """
    device = torch.device(device or default_device())
    top_seed, bottom_seed = cfg.seeds
    receiver, top_metrics = load_or_train(cfg.model_spec(top_seed), device=device, store=store, progress=progress)
    sender, bottom_metrics = load_or_train(cfg.model_spec(bottom_seed), device=device, store=store, progress=progress)
    random_bottom, _ = load_or_train(cfg.model_spec(cfg.random_seed, trained=False), device=device, store=store,
                                     progress=progress)
    test = eval_split("cifar10", cfg.test_size)
    batches = Batches(test, 500, normalisation="cifar", device=device, channels_last=cfg.precision == "bf16")
    receiver_acc = evaluate(receiver, batches, device=device, precision=cfg.precision)["accuracy"]
    sender_acc = evaluate(sender, batches, device=device, precision=cfg.precision)["accuracy"]
    senders = {"trained (seed %d)" % bottom_seed: (sender, cfg.model_spec(bottom_seed)),
               "random bottom": (random_bottom, cfg.model_spec(cfg.random_seed, trained=False))}
    acts = ActivationCache()
    rows = []
    cuts = receiver.cuts
    bar = tqdm(total=len(cuts) * len(senders), desc="stitches", disable=not progress)
    for cut in cuts:
        for label, (model, spec) in senders.items():
            stitch_spec = StitchSpec(sender=spec, receiver=cfg.model_spec(top_seed), cut_i=cut, cut_j=cut,
                                     kind="bn_conv_bn", frozen_bn=cfg.frozen_bn, train=cfg.stitch_train(),
                                     train_size=cfg.stitch_train_size, test_size=cfg.test_size)
            entry = load_or_stitch(stitch_spec, model, receiver, device=device, store=store, activations=acts,
                                   progress=progress)
            acc = entry.metrics["accuracy"]
            rows.append({"cut": cut, "sender": label, "accuracy": acc, "penalty": receiver_acc - acc})
            bar.update(1)
        acts.drop_cut(cut)
    bar.close()
    models = {"receiver_accuracy": receiver_acc, "sender_accuracy": sender_acc,
              "receiver_images_per_second": top_metrics.get("images_per_second"),
              "receiver_train_seconds": top_metrics.get("train_seconds"),
              "sender_train_seconds": bottom_metrics.get("train_seconds")}
    return pd.DataFrame(rows), models


# Verdict criteria for B-F2A, fixed before any run (percentage points of test error).
CONNECTED_MAX_PENALTY = 0.03  # Table 1 / Sec. 4: "up to 3% error" at every layer
RANDOM_EARLY_MAX_PENALTY = 0.05  # random bottom at the stem: "low penalty"
RANDOM_LATE_MIN_PENALTY = 0.20  # random bottom, mean of the last two cuts: "high penalty"


def connectivity_summary(table: pd.DataFrame, models: dict) -> tuple[dict[str, float], list[dict]]:
    """Named numbers (in %) and claim verdicts for B-F2A from ``connectivity``'s output."""
    trained = table[table.sender.str.startswith("trained")].set_index("cut")
    rand = table[table.sender == "random bottom"].set_index("cut")
    cuts = list(trained.index)
    worst_cut = trained.penalty.idxmax()
    numbers = {
        "receiver_accuracy": 100 * models["receiver_accuracy"],
        "sender_accuracy": 100 * models["sender_accuracy"],
        "trained_max_penalty": 100 * trained.penalty.max(),
        "trained_mean_penalty": 100 * trained.penalty.mean(),
        "random_first_penalty": 100 * rand.penalty.iloc[0],
        "random_late_penalty": 100 * rand.penalty.iloc[-2:].mean(),
        "receiver_train_minutes": (models["receiver_train_seconds"] or 0.0) / 60,
        "receiver_images_per_second": models["receiver_images_per_second"] or 0.0,
    }
    claims = [
        dict(key="connected",
             text="Two independently seeded networks are stitching connected: penalty close to 0 at every layer",
             criterion=f"max penalty over all {len(cuts)} cuts ≤ {100 * CONNECTED_MAX_PENALTY:.0f} points",
             paper="up to 3% error at every layer (Table 1, Fig. 2A)",
             ours=f"max {numbers['trained_max_penalty']:.2f} points (at {worst_cut}), "
                  f"mean {numbers['trained_mean_penalty']:.2f}",
             holds=trained.penalty.max() <= CONNECTED_MAX_PENALTY),
        dict(key="random_early",
             text="A random (untrained) bottom stitches with low penalty at the earliest layer",
             criterion=f"penalty at '{cuts[0]}' ≤ {100 * RANDOM_EARLY_MAX_PENALTY:.0f} points",
             paper="low penalty early (Fig. 2A, Fig. 5)",
             ours=f"{numbers['random_first_penalty']:.2f} points",
             holds=rand.penalty.iloc[0] <= RANDOM_EARLY_MAX_PENALTY),
        dict(key="random_late",
             text="A random bottom stitches with high penalty at late layers",
             criterion=f"mean penalty at '{cuts[-2]}' and '{cuts[-1]}' ≥ {100 * RANDOM_LATE_MIN_PENALTY:.0f} points",
             paper="high penalty late (Fig. 2A, Fig. 5)",
             ours=f"{numbers['random_late_penalty']:.2f} points",
             holds=rand.penalty.iloc[-2:].mean() >= RANDOM_LATE_MIN_PENALTY),
    ]
    return numbers, claims
