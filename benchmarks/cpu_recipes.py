"""Candidate CPU training recipes for every architecture the book trains, measured: test accuracy
against training minutes on 2 CPU cores ("Networks a reader can believe", item 1).

Each candidate is a full :class:`stitchkit.networks.network.ModelSpec` (architecture, width, data, recipe)
trained by the library's own path (:func:`stitchkit.networks.network.load_or_train`: uint8 data on the
device, batch crop + flip, precision and memory format chosen by the hardware), so the number
measured here is the number a page adopting the recipe will get, and the network lands in the
artifact cache (``$STITCHKIT_CACHE``) under its key, for those pages to reuse. The test accuracy is
on all 10,000 test images, measured in fp32.

One JSON file per kind of CPU (``benchmarks/cpu-recipes/<capability>.json``: a CPU with native
bf16 and one without are measured and stated apart; the wall time of one tells nothing of the
other), rewritten after every candidate, so a run stopped by a time limit keeps what it finished
and the next one skips it. Each row records the wall seconds and the process's CPU seconds of the
training (a machine shared with other work inflates the first, not the second: the table gives
both, and the load average at the start and end), the precision and the CPU. ``--table`` writes
the Markdown table of every file (``benchmarks/cpu-recipes.md``). Nothing here is a page's
result: it chooses the recipe a page's preset will state.

    python benchmarks/cpu_recipes.py [--only NAME ...] [--budget SECONDS] [--list] [--table]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import resource
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import torch

from stitchkit.base.fileio import atomic_write_json, atomic_write_text
from stitchkit.base.hardware import cpu_capability, device_name, resolve_precision
from stitchkit.base.store import Store
from stitchkit.data.datasets import DataSpec
from stitchkit.networks.network import ModelSpec, load_or_train
from stitchkit.networks.train import TrainConfig

HERE = Path(__file__).resolve().parent
OUT_DIR = HERE / "cpu-recipes"


@dataclass(frozen=True)
class Candidate:
    network: str  # the book's network this recipe is for (the table row)
    target: float  # test accuracy the issue asks of it (fraction)
    spec: ModelSpec
    note: str = ""


def _fast(epochs: float, seed: int = 0, **kw) -> TrainConfig:
    """The short-schedule SGD recipe: batch 512, lr 0.2 after a 10% linear warm-up, cosine decay,
    wd 5e-4, Nesterov, label smoothing 0.1, crop + flip."""
    base = dict(epochs=epochs, batch_size=512, optimizer="sgd", lr=0.2, momentum=0.9, nesterov=True,
                weight_decay=5e-4, schedule="warmup_cosine", warmup=0.1, label_smoothing=0.1, augment=True, seed=seed)
    return TrainConfig(**{**base, **kw})


def _page(epochs: float, width_epochs: float = 5 / 24, seed: int = 0, **kw) -> TrainConfig:
    """Page's (2018) short recipe for the Myrtle CNN: batch 512, Nesterov, lr 0.4 after a linear
    warm-up over the first 5/24 of the run, then a linear decay to zero, label smoothing 0.2,
    wd 5e-4."""
    base = dict(epochs=epochs, batch_size=512, optimizer="sgd", lr=0.4, momentum=0.9, nesterov=True,
                weight_decay=5e-4, schedule="warmup_linear", warmup=width_epochs, label_smoothing=0.2,
                augment=True, seed=seed)
    return TrainConfig(**{**base, **kw})


def _adam(epochs: float, lr: float = 2e-3, seed: int = 0, **kw) -> TrainConfig:
    """Balogh & Jelasity's Adam (wd 1e-5) shortened: batch 512, a 10% warm-up then a cosine decay."""
    base = dict(epochs=epochs, batch_size=512, optimizer="adam", lr=lr, weight_decay=1e-5,
                schedule="warmup_cosine", warmup=0.1, augment=True, seed=seed)
    return TrainConfig(**{**base, **kw})


CIFAR = DataSpec("cifar10")

# In the order to run them: the networks most pages share first.
CANDIDATES: dict[str, Candidate] = {
    "bansal-r18-w16-e10": Candidate(
        "Bansal's ResNet-18 (pre-activation)", 0.85,
        ModelSpec("preact_resnet18", 16, CIFAR, "cifar", 0, _fast(10)),
        "the issue's measured 10-epoch recipe (82.1% without Nesterov or smoothing) with both"),
    "myrtle-w16-e12": Candidate(
        "Bansal's Myrtle CNN", 0.90, ModelSpec("myrtle", 16, CIFAR, "cifar", 0, _page(12))),
    "hernandez-r1111-w16-e8": Candidate(
        "Hernandez's small ResNets (R1111)", 0.80, ModelSpec("r1111", 16, CIFAR, "cifar", 0, _fast(8))),
    "hernandez-resnet34-w8-e8": Candidate(
        "Hernandez's ResNet-34", 0.80, ModelSpec("resnet34", 8, CIFAR, "cifar", 0, _fast(8))),
    "balogh-vit-d64x6-e10": Candidate(
        "Balogh's ViT (dim 64, depth 6)", 0.60,
        ModelSpec("vit_ti", 64, CIFAR, "none", 0, _adam(10, lr=1e-3), options=(("depth", 6), ("heads", 2)))),
    "smith-vgg19-w8-digit-e3": Candidate(
        "Smith's VGG19 on Digit", 0.98,
        ModelSpec("vgg19", 8, DataSpec("cmnist_digit", size=32), "half", 0,
                  TrainConfig(epochs=3, batch_size=128, optimizer="sgd", lr=1e-2, momentum=0.9, weight_decay=1e-4,
                              schedule="warmup_cosine", warmup=0.05, clip_norm=1.0, augment=False),
                  options=(("hidden", 512), ("init", "fan_in"))),
        "all 60k images (demo: 15k), a cosine decay (demo: constant)"),
    "smith-r18-w16-digit-e3": Candidate(
        "Smith's ResNet-18 on Digit", 0.98,
        ModelSpec("resnet18_imagenet", 16, DataSpec("cmnist_digit"), "half", 0,
                  TrainConfig(epochs=3, batch_size=128, optimizer="sgd", lr=0.1, momentum=0.9, weight_decay=1e-4,
                              schedule="warmup_cosine", warmup=0.05, augment=False)),
        "all 60k images (demo: 15k), a cosine decay (paper and demo: constant)"),
    "balogh-r18-w16-e10": Candidate(
        "Balogh's ResNet-18 (BasicBlock, no normalisation)", 0.85,
        ModelSpec("resnet18", 16, CIFAR, "none", 0, _adam(10))),
    "hernandez-r2222-w16-e8": Candidate(
        "Hernandez's small ResNets (R2222)", 0.80, ModelSpec("r2222", 16, CIFAR, "cifar", 0, _fast(8))),
    "bansal-r164-d20-w8-e10": Candidate(
        "Bansal's ResNet-164 stand-in (depth 20)", 0.80,
        ModelSpec("preact_resnet164", 8, CIFAR, "cifar", 0, _fast(10), options=(("depth", 20),))),
    "myrtle-w24-e12": Candidate(
        "Bansal's Myrtle CNN", 0.90, ModelSpec("myrtle", 24, CIFAR, "cifar", 0, _page(12))),
    "bansal-r18-w16-e16": Candidate(
        "Bansal's ResNet-18 (pre-activation)", 0.85,
        ModelSpec("preact_resnet18", 16, CIFAR, "cifar", 0, _fast(16))),
    "hernandez-r1111-w16-e12": Candidate(
        "Hernandez's small ResNets (R1111)", 0.80, ModelSpec("r1111", 16, CIFAR, "cifar", 0, _fast(12)),
        "8 epochs reached 79.5%"),
    "myrtle-w32-e12": Candidate(
        "Bansal's Myrtle CNN", 0.90, ModelSpec("myrtle", 32, CIFAR, "cifar", 0, _page(12)),
        "width 16 reached 81.0%; on a CPU with native bf16, width 32 trains at about a third of width 16's rate"),
    "smith-vgg19-w8-digit-b64-e3": Candidate(
        "Smith's VGG19 on Digit", 0.98,
        ModelSpec("vgg19", 8, DataSpec("cmnist_digit", size=32), "half", 0,
                  TrainConfig(epochs=3, batch_size=64, optimizer="sgd", lr=1e-2, momentum=0.9, weight_decay=1e-4,
                              schedule="constant", clip_norm=1.0, augment=False),
                  options=(("hidden", 512), ("init", "fan_in"))),
        "demo's recipe (batch 64, constant lr) on all 60k images: batch 128 with a warm-up and cosine stayed at 18%"),
    "smith-vgg19-w8-digit-b64-e8": Candidate(
        "Smith's VGG19 on Digit", 0.98,
        ModelSpec("vgg19", 8, DataSpec("cmnist_digit", size=32), "half", 0,
                  TrainConfig(epochs=8, batch_size=64, optimizer="sgd", lr=1e-2, momentum=0.9, weight_decay=1e-4,
                              schedule="constant", clip_norm=1.0, augment=False),
                  options=(("hidden", 512), ("init", "fan_in"))),
        "3 epochs of the same reached 96.7%"),
    "smith-vgg19-w16-digit-b64-e6": Candidate(
        "Smith's VGG19 on Digit", 0.98,
        ModelSpec("vgg19", 16, DataSpec("cmnist_digit", size=32), "half", 0,
                  TrainConfig(epochs=6, batch_size=64, optimizer="sgd", lr=1e-2, momentum=0.9, weight_decay=1e-4,
                              schedule="constant", clip_norm=1.0, augment=False),
                  options=(("hidden", 512), ("init", "fan_in"))),
        "width 8 for 3 epochs reached 96.7%"),
    "balogh-r18-w16-e16": Candidate(
        "Balogh's ResNet-18 (BasicBlock, no normalisation)", 0.85,
        ModelSpec("resnet18", 16, CIFAR, "none", 0, _adam(16)), "10 epochs reached 80.0% (fp32)"),
    "hernandez-resnet34-w16-e8": Candidate(
        "Hernandez's ResNet-34", 0.80, ModelSpec("resnet34", 16, CIFAR, "cifar", 0, _fast(8)),
        "width 8 reached 77.2% (fp32); on native bf16 width 16 costs about what width 8 does"),
    "bansal-r164-d20-w16-e10": Candidate(
        "Bansal's ResNet-164 stand-in (depth 20)", 0.80,
        ModelSpec("preact_resnet164", 16, CIFAR, "cifar", 0, _fast(10), options=(("depth", 20),))),
    "balogh-vit-d64x6-e16": Candidate(
        "Balogh's ViT (dim 64, depth 6)", 0.60,
        ModelSpec("vit_ti", 64, CIFAR, "none", 0, _adam(16, lr=1e-3), options=(("depth", 6), ("heads", 2))),
        "10 epochs reached 57.6% (fp32)"),
    "myrtle-w16-e12-mul": Candidate(
        "Bansal's Myrtle CNN", 0.90,
        ModelSpec("myrtle", 16, CIFAR, "cifar", 0, _page(12), options=(("logit_scale", 0.125),)),
        "Page's logits times 0.125, which the lr of 0.4 assumes; without it width 16 reached 81.0% (fp32)"),
    "myrtle-w32-e12-mul": Candidate(
        "Bansal's Myrtle CNN", 0.90,
        ModelSpec("myrtle", 32, CIFAR, "cifar", 0, _page(12), options=(("logit_scale", 0.125),)),
        "Page's logits times 0.125; without it the same reached 83.7%"),
    "balogh-r18-w16-e24": Candidate(
        "Balogh's ResNet-18 (BasicBlock, no normalisation)", 0.85,
        ModelSpec("resnet18", 16, CIFAR, "none", 0, _adam(24)), "16 epochs of the same reached 82.9%"),
    "bansal-r164-d20-w16-e13": Candidate(
        "Bansal's ResNet-164 stand-in (depth 20)", 0.80,
        ModelSpec("preact_resnet164", 16, CIFAR, "cifar", 0, _fast(13), options=(("depth", 20),)),
        "10 epochs of the same reached 79.5%"),
    "balogh-vit-d128x4-e10": Candidate(
        "Balogh's ViT (dim 128, depth 4)", 0.60,
        ModelSpec("vit_ti", 128, CIFAR, "none", 0, _adam(10, lr=1e-3), options=(("depth", 4), ("heads", 2))),
        "dim 64, depth 6 for 16 epochs reached 62.3% in 24.9 min: on 2 cores a step of so small a ViT is bound by "
        "its elementwise work, so fewer, wider blocks may use the bf16 rate better"),
}


def _file(capability: str) -> Path:
    return OUT_DIR / (capability.replace(", ", "-").replace(" ", "-").lower() + ".json")


def _read(path: Path) -> dict:
    if not path.exists():
        return {"rows": []}
    doc = json.loads(path.read_text())
    if not isinstance(doc, dict) or not isinstance(doc.get("rows"), list):
        raise SystemExit(f"{path}: not a recipe-benchmark file (expected an object with a 'rows' list)")
    return doc


def _cpu_seconds() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def run(names: list[str], budget: float, threads: int = 2) -> None:
    torch.set_num_threads(min(threads, os.cpu_count() or 1))
    capability = cpu_capability()
    path = _file(capability)
    doc = _read(path)
    done = {r["name"] for r in doc["rows"]}
    store = Store()
    t_start = time.perf_counter()
    for name in names:
        if name in done:
            print(f"{name}: measured already ({path.name}); skipped", flush=True)
            continue
        if time.perf_counter() - t_start > budget:
            print(f"budget spent; not starting {name}", flush=True)
            break
        cand = CANDIDATES[name]
        load0, cpu0, wall0 = os.getloadavg()[0], _cpu_seconds(), time.perf_counter()
        _, metrics = load_or_train(cand.spec, store=store)
        wall, cpu = time.perf_counter() - wall0, _cpu_seconds() - cpu0
        acc = float(metrics["test"]["accuracy"])
        cached = wall < 0.5 * float(metrics.get("train_seconds") or 0.0)
        row = dict(name=name, network=cand.network, target=cand.target, note=cand.note,
                   model=cand.spec.model, width=cand.spec.width, options=dict(cand.spec.options),
                   data=asdict(cand.spec.data), normalisation=cand.spec.normalisation, recipe=asdict(cand.spec.train),
                   test_accuracy=round(acc, 4), n_test=10_000, meets_target=acc >= cand.target,
                   train_seconds=round(float(metrics["train_seconds"]), 1),
                   cpu_seconds=None if cached else round(cpu, 1),
                   images_per_second=round(float(metrics.get("images_per_second") or 0.0), 1),
                   precision=metrics.get("precision"), compiled=metrics.get("compiled"),
                   trained_on=metrics.get("device"), from_cache=cached,
                   load_average=[round(load0, 2), round(os.getloadavg()[0], 2)], threads=torch.get_num_threads(),
                   date=dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"))
        doc["rows"].append(row)
        doc.update(cpu=device_name("cpu"), capability=capability, precision=resolve_precision("auto", "cpu"),
                   torch=torch.__version__)
        atomic_write_json(path, doc)
        print(f"{name}: {100 * acc:.2f}% (target {100 * cand.target:.0f}%) in {row['train_seconds'] / 60:.1f} min "
              f"({row['images_per_second']:,.0f} img/s, {row['precision']})", flush=True)
    table()


def table() -> Path:
    """``benchmarks/cpu-recipes.md``: one table per kind of CPU, a row per candidate."""
    lines = ["# CPU training recipes: test accuracy against training minutes (2 cores)", "",
             "Written by `benchmarks/cpu_recipes.py --table` from `benchmarks/cpu-recipes/*.json`. Each row is one",
             "network trained once (seed 0) by the library's own training path; accuracy on all 10,000 test images.",
             "Wall minutes are the training's (on both cores unless the row says 1 thread). CPU minutes / threads leaves out the time the process waited for the cores,",
             "but still counts its threads' spinning, so a run that shared the cores with other work reads high in",
             "both. Load: the 1-minute load average at the start and the end; the run itself counts about 2 on two",
             "cores, so above 2 other work shared them and the times are inflated (accuracy is not affected).", ""]
    for f in sorted(OUT_DIR.glob("*.json")):
        doc = _read(f)
        cpu = re.sub(r", \d+ threads?", "", str(doc.get("cpu", f.stem)))  # each row says its own threads
        lines += [f"## {cpu} — training precision {doc.get('precision')}", "",
                  "| candidate | network | recipe | test acc. | target | wall min | CPU min / threads | img/s | load |",
                  "|---|---|---|---|---|---|---|---|---|"]
        for r in doc["rows"]:
            rec = r["recipe"]
            length = f"{rec['steps']} steps" if rec.get("steps") else f"{rec['epochs']:g} ep"
            recipe = (f"w{r['width']} {length}, b{rec['batch_size']} {rec['optimizer']} lr {rec['lr']:g} "
                      f"{rec['schedule']}, wd {rec['weight_decay']:g}"
                      + (f", ls {rec['label_smoothing']:g}" if rec.get("label_smoothing") else "")
                      + (", Nesterov" if rec.get("nesterov") else ""))
            threads = r.get("threads", 2)
            cpu = "—" if r.get("cpu_seconds") is None else f"{r['cpu_seconds'] / 60 / threads:.1f}"
            mark = "yes" if r["meets_target"] else "**no**"
            lines.append(f"| `{r['name']}` | {r['network']}{' (' + r['note'] + ')' if r.get('note') else ''} | {recipe} | {100 * r['test_accuracy']:.2f}% | "
                         f"≥ {100 * r['target']:.0f}% ({mark}) | {r['train_seconds'] / 60:.1f}{'' if threads == 2 else f' ({threads} thread)'} | {cpu} | "
                         f"{r['images_per_second']:,.0f} | {r['load_average'][0]}–{r['load_average'][1]} |")
        lines.append("")
    out = HERE / "cpu-recipes.md"
    atomic_write_text(out, "\n".join(lines))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", nargs="*", choices=sorted(CANDIDATES), help="candidates to run (default: all, in order)")
    ap.add_argument("--budget", type=float, default=float("inf"), help="stop starting candidates after this many seconds")
    ap.add_argument("--threads", type=int, default=2, help="threads of the training (default 2: both cores; 1 on a "
                    "machine shared with other work, where two threads wait on each other far more than one is slowed)")
    ap.add_argument("--list", action="store_true", help="list the candidates and exit")
    ap.add_argument("--table", action="store_true", help="only rewrite benchmarks/cpu-recipes.md")
    args = ap.parse_args()
    if args.list:
        for name, c in CANDIDATES.items():
            print(f"{name}: {c.network}, target {100 * c.target:.0f}%")
        return
    if args.table:
        print(table())
        return
    run(args.only or list(CANDIDATES), args.budget, args.threads)


if __name__ == "__main__":
    main()
