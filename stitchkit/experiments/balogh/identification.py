"""Balogh & Jelasity J-T1 (layer identification), its presets (``PRESETS_T1``) and the
measurements: the structural measures (PWCCA, OPD, linear CKA with its bootstrap over the measure
images) between every layer of two networks, the DM and TLM grids, the similarity matrix of every
ordered pair of networks per measure, the identification table beside the paper's Table 1, the
length control's retrained stitches (each case's own-layer stitch and its strongest rival), and
the size of the paper-scale grid. The claims are in :mod:`.identification_verdicts`."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import torch

from ...base.hardware import as_device
from ...base.progress import progress_bar
from ...base.store import Store
from ...data.datasets import DataSpec, test_split
from ...measures import similarity as sim
from ...measures.similarity import CKABootstrap, pwcca
from ...networks import zoo
from ...stitching.grid import stitch_grid
from ...stitching.grid_spec import Net
from .common import ARCH_NAMES, NAMES, IdentConfig, dm_grid, network_accuracy, tlm_retrained

MEASURES = ("pwcca", "opd", "lcka", "tlm", "dm_struct", "dm_func")  # J-T1's six, in Table 1's order
HIGHER_IS_SIMILAR = {"pwcca": False, "opd": False, "lcka": True, "tlm": True, "dm_struct": False, "dm_func": True}
MEASURE_SAMPLE = "J-T1 measure images"  # the resampler of the structural measures' images (not the accuracies')

# The paper's Table 1 (% of cases identified: intra-network, inter-network).
PAPER_T1 = {
    "resnet18": {"pwcca": (100, 12.50), "opd": (100, 19.17), "lcka": (100, 96.11), "tlm": (63.75, 35.28),
                 "dm_struct": (100, 92.50), "dm_func": (100, 66.39)},
    "vit": {"pwcca": (100, 8.33), "opd": (100, 18.33), "lcka": (100, 34.81), "tlm": (24.17, 10.00),
            "dm_struct": (100, 25.19), "dm_func": (100, 11.85)},
}


# J-T1's presets. Its config (common.IdentConfig) is the base of the other Balogh & Jelasity figures'
# configs, and their presets derive from these (detectors.PRESETS_OOD, ding.PRESETS_T3 and PRESETS_T2).
PRESETS_T1 = zoo.at_scale({
    # CI: seconds. Two tiny networks per architecture, a short TLM on 500 images, every accuracy on 200
    # test images (a grid's cost is mostly its stitches' evaluations: 500 made the smoke runs of J-T1, J-F1
    # and J-F2 the suite's longest).
    "smoke": IdentConfig(networks=2, measure_images=200, test_size=200, dm_images=50, tlm_epochs=1,
                         tlm_train_size=500, tlm_inter_pairs=1),
    # 2 CPU cores: three networks per architecture (the zoo's demo rows of BALOGH_RESNET18 and BALOGH_VIT);
    # TLM 2 epochs on 2,500 images at batch 64 (78 steps), within every network and for one
    # pair of networks both ways; every accuracy on all 10,000 test images (issue 46; was 2,000).
    "demo": IdentConfig(networks=3, measure_images=1000, test_size=None, tlm_epochs=2, tlm_train_size=2500,
                        tlm_batch=64, tlm_inter_pairs=2),
    # One GPU: the paper's networks (the zoo's gpu rows: ResNet-18 width 64, ViT-Ti dim 192 depth 12, all
    # 50k images, 30 and 40 epochs), three per architecture (the fewest the networks' jackknife needs);
    # every measure on the paper's 1,000 images, DM on its K = 100, every accuracy on all 10k test images;
    # TLM at the paper's batch 256 for 2 epochs on 10,000 images (78 steps, the demo's count, which moved
    # TLM 14-21 points off its DM start on the demo networks used until 2026-12-07; paper: 30 epochs on 50k,
    # 5,860 steps), within every network and between one pair both ways (paper: all 90 ordered pairs of 10
    # networks). The ViT's 12 blocks make its grids 144 layer pairs a pair of networks: 1,872 DM and 1,040
    # TLM stitches in all and ~300 at 4x for the length control, about 40 minutes of H100 (not yet measured;
    # see stitchkit.book.gpu_estimates).
    "gpu": IdentConfig(networks=3, tlm_epochs=2, tlm_train_size=10_000, tlm_inter_pairs=2),
    "paper": IdentConfig(),
}, resnet18=zoo.BALOGH_RESNET18, vit=zoo.BALOGH_VIT)


@dataclass(frozen=True)
class IdentResult:
    """One architecture's layer identification (:func:`layer_identification`): every similarity
    matrix of its networks, per ordered pair and measure, and the grids the stitching measures
    come from (with their per-image results, which the claims resample)."""

    arch: str
    layers: list[str]  # the networks' layers, in order
    # (sender, receiver) -> measure -> (L, L) array, rows the source layer i, columns the target j
    matrices: dict[tuple[str, str], dict[str, np.ndarray]]
    dm: pd.DataFrame  # the direct-matching grid over every ordered pair of networks
    tlm: pd.DataFrame  # the TLM grid within every network and between the config's inter_pairs
    accuracy: dict[str, float]  # network -> its test accuracy
    # (sender, receiver) -> (R+1, L, L): linear CKA on the measure images (element 0) and on each
    # bootstrap resample of them; empty: linear CKA enters fixed on its images
    lcka_reps: dict[tuple[str, str], np.ndarray] = field(default_factory=dict)
    measure_images: int | None = None  # the structural measures' test images


# --------------------------------------------------------------------------------------------
# Representations and the structural measures


def activations_by_network(cfg: IdentConfig, nets: list[Net], images: torch.Tensor, *, device=None, store=None,
                           progress: bool = True) -> dict[str, dict[str, torch.Tensor]]:
    """Every network's activations (float32) at each of its layers on ``images``: network name ->
    layer -> (N, ...), each network's read in one pass by
    :func:`stitchkit.measures.similarity.model_activations`."""
    device = as_device(device)
    store = store or Store()
    out = {}
    for net in nets:
        model = net.load(device, store, None, progress)
        out[net.name] = sim.model_activations(model, images, cfg.layers(net), normalisation=net.spec.normalisation,
                                              device=device)
    return out


def structural(acts_a: dict[str, torch.Tensor], acts_b: dict[str, torch.Tensor],
               grams: tuple[dict[str, torch.Tensor], dict[str, torch.Tensor]] | None = None,
               boot: CKABootstrap | None = None) -> dict[str, np.ndarray]:
    """PWCCA and OPD distances and linear CKA between every layer of A (rows, the source) and
    every layer of B (columns, the target), with Balogh & Jelasity's preprocessing. ``grams``:
    the layers' centred Gram matrices (A's, B's), computed here when None. ``boot`` (a
    :class:`stitchkit.measures.similarity.CKABootstrap` on these images): also ``"lcka_reps"``,
    (R+1, L_A, L_B) the linear CKA on the images (element 0, which is then ``"lcka"``) and on each
    bootstrap resample of them. PWCCA and OPD are computed on the images as they are (too costly
    to resample: see :func:`layer_identification`)."""
    la, lb = list(acts_a), list(acts_b)
    if grams is None:
        ga = {k: sim.centered_gram(sim.flat(v)) for k, v in acts_a.items()}
        gb = ga if acts_b is acts_a else {k: sim.centered_gram(sim.flat(v)) for k, v in acts_b.items()}
    else:
        ga, gb = grams
    out = {m: np.zeros((len(la), len(lb))) for m in ("pwcca", "opd", "lcka")}
    reps = np.zeros((boot.w.shape[1], len(la), len(lb))) if boot is not None else None
    for i, ka in enumerate(la):
        for j, kb in enumerate(lb):
            if boot is not None:
                reps[:, i, j] = boot.replicates(ga[ka], gb[kb])
                out["lcka"][i, j] = reps[0, i, j]
            else:
                out["lcka"][i, j] = sim.cka_from_grams(ga[ka], gb[kb])
            x, y = sim.preprocess(acts_a[ka], acts_b[kb], "pwcca")
            out["pwcca"][i, j] = pwcca(y, x)
            out["opd"][i, j] = sim.procrustes_distance(x, y)
    if reps is not None:
        out["lcka_reps"] = reps
    return out


def _matrix(rows: pd.DataFrame, value: str, layers_a: list[str], layers_b: list[str]) -> np.ndarray:
    m = rows.pivot(index="cut_i", columns="cut_j", values=value)
    return m.loc[layers_a, layers_b].to_numpy(dtype=float)


# --------------------------------------------------------------------------------------------
# The similarity matrices and the identification table


def identified(matrix: np.ndarray, higher_is_similar: bool) -> np.ndarray:
    """Per target layer j (column): is no source layer i strictly more similar than i = j?"""
    m = matrix if higher_is_similar else -matrix
    return np.array([m[j, j] >= m[:, j].max() for j in range(m.shape[1])])


def layer_identification(cfg: IdentConfig, arch: str, *, device=None, store=None,
                         progress: bool = True) -> IdentResult:
    """Every similarity matrix of ``arch``'s networks (per ordered pair and measure), linear CKA
    on each bootstrap resample of the measure images, and the grids they come from
    (:class:`IdentResult`).

    Only linear CKA is bootstrapped over the measure images, in Gram form (measured at `demo` on
    2 busy CPU cores, 1,000 resamples: the 9 pairs of networks' structural measures took 167 s
    instead of 151 s for ResNet-18, 275 s instead of 280 s for the ViT, each Gram matrix now
    computed once per network). PWCCA and OPD are not: recomputing them on one resample of the
    1,000 images costs as much as the measures themselves (10 s a ResNet-18 pair of networks,
    17 s a ViT pair, about 4 minutes for the page's 18 pairs), so even 20 resamples would add
    about 14 times the page's cost with its stitches cached (about 6 minutes). Their
    identification enters fixed on the measure images (the networks are still resampled), and
    the claims say so."""
    store = store or Store()
    nets = cfg.nets(arch)
    layers = cfg.layers(nets[0])
    cut_pairs = [(i, j) for i in layers for j in layers]
    data = DataSpec("cifar10")
    dm = dm_grid(cfg, nets, layers, device=device, store=store, progress=progress)
    tlm_pairs = [(k, k) for k in range(len(nets))] + cfg.inter_pairs()
    tlm = pd.concat([stitch_grid([nets[a]], [nets[b]], cut_pairs, cfg.recipe(tlm=True), data, device=device,
                                 store=store, progress=progress) for a, b in tlm_pairs], ignore_index=True)
    images = test_split(data, cfg.measure_images, 0).images
    acts = activations_by_network(cfg, nets, images, device=device, store=store, progress=progress)
    grams = {n: {k: sim.centered_gram(sim.flat(v)) for k, v in h.items()} for n, h in acts.items()}
    boot = CKABootstrap(len(images), MEASURE_SAMPLE)
    matrices: dict[tuple[str, str], dict[str, np.ndarray]] = {}
    lcka_reps: dict[tuple[str, str], np.ndarray] = {}
    pairs = [(a.name, b.name) for a in nets for b in nets]
    for a, b in progress_bar(iterable=pairs, desc=f"{arch}: structural measures", disable=not progress,
                             unit="pair"):
        m = structural(acts[a], acts[b], (grams[a], grams[b]), boot)
        lcka_reps[(a, b)] = m.pop("lcka_reps")
        rows = dm[(dm.sender == a) & (dm.receiver == b)]
        m["dm_struct"] = _matrix(rows, "dm_residual", layers, layers)
        m["dm_func"] = _matrix(rows.assign(rel=rows.dm_accuracy / rows.receiver_accuracy), "rel", layers, layers)
        t = tlm[(tlm.sender == a) & (tlm.receiver == b)]
        if len(t):
            m["tlm"] = _matrix(t.assign(rel=t.accuracy / t.receiver_accuracy), "rel", layers, layers)
        matrices[(a, b)] = m
    boot.forget()
    return IdentResult(arch=arch, layers=layers, matrices=matrices, dm=dm, tlm=tlm, accuracy=network_accuracy(dm),
                       lcka_reps=lcka_reps, measure_images=len(images))


def identification_table(result: IdentResult, *, same_cases_as_tlm: bool = False) -> pd.DataFrame:
    """Per measure: % of (pair, layer) cases identified within networks and between networks,
    with the number of cases, beside the paper's Table 1. ``same_cases_as_tlm``: between
    networks, count only the pairs TLM was run on."""
    rows = []
    arch = result.arch
    for m in MEASURES:
        within, between = [], []
        for (a, b), mats in result.matrices.items():
            if m not in mats or (same_cases_as_tlm and "tlm" not in mats):
                continue
            (within if a == b else between).extend(identified(mats[m], HIGHER_IS_SIMILAR[m]).tolist())
        rows.append({"measure": NAMES[m], "key": m,
                     "intra (%)": 100 * float(np.mean(within)) if within else float("nan"),
                     "intra cases": len(within), "paper intra (%)": PAPER_T1[arch][m][0],
                     "inter (%)": 100 * float(np.mean(between)) if between else float("nan"),
                     "inter cases": len(between), "paper inter (%)": PAPER_T1[arch][m][1]})
    return pd.DataFrame(rows).set_index("measure")


# --------------------------------------------------------------------------------------------
# The training-length control's stitches, and the paper-scale cost


NEAR_RIVALS = 3  # the training-length control retrains at most this many rivals per target layer


def _within_noise(correct: dict, i: str, j: str) -> bool:
    """Whether source layer ``i``'s stitch into ``j`` is within noise of (or above) ``j``'s own: the
    paired 95% interval of its accuracy minus the own stitch's, over the test images, reaches 0."""
    a, b = correct.get((i, j)), correct.get((j, j))
    if a is None or b is None:
        return False
    d = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    return bool(d.mean() + 1.96 * d.std(ddof=1) / np.sqrt(len(d)) >= 0)


def identification_longer(cfg: IdentConfig, result: IdentResult, *, device=None, store=None,
                          progress: bool = True) -> pd.DataFrame:
    """The training-length control of J-T1's TLM claims, like for like: for every case TLM is
    judged on (pair, target layer j), identified or not, the stitch that decides it, the
    strongest rival (the most accurate source layer i != j in the grid), *and its reference*,
    j's own stitch (within a network the self-stitch, between networks the corresponding
    layer's), retrained with :data:`LONGER` times the epochs; with them, up to
    :data:`NEAR_RIVALS` - 1 more rivals whose 1x interval against the own stitch reaches 0 (one
    row per rival). Longer TLM raises both (own-layer
    stitches gained up to 7 points at 4x at demo), so identification can move either way.
    One row per case: sender, receiver, target j, rival i, the grid's and the longer relative
    accuracies of both, whether j is still identified, and the longer stitches' accuracies and
    per-image results (``own_correct``, ``rival_correct``) for the re-judged claims."""
    t = result.tlm
    layers = result.layers
    cases, cells = [], []
    for (a, b), g in t.groupby(["sender", "receiver"], sort=False):
        acc = g.pivot(index="cut_i", columns="cut_j", values="accuracy").loc[layers, layers].to_numpy(dtype=float)
        correct = {(r.cut_i, r.cut_j): r.correct for r in g.itertuples()} if "correct" in g else {}
        recv = float(g.receiver_accuracy.iloc[0])
        for jj, j in enumerate(layers):
            col = acc[:, jj].copy()
            col[jj] = -np.inf
            order = [int(k) for k in np.argsort(-col) if np.isfinite(col[k])]
            # the strongest rival, and (like for like) the next ones whose paired 95% interval against the
            # own stitch reaches 0 or above: a rival within noise at 1x could overtake at 4x as well
            picked = order[:1] + [k for k in order[1:] if _within_noise(correct, layers[k], j)][:NEAR_RIVALS - 1]
            for ii in picked:
                cases.append((a, b, j, layers[ii], acc[jj, jj] / recv, acc[ii, jj] / recv))
                cells += [(a, b, j, j), (a, b, layers[ii], j)]
    cols = ["sender", "receiver", "j", "rival i", "own", "rival", "own longer", "rival longer", "identified_longer",
            "own_accuracy", "rival_accuracy", "own_correct", "rival_correct"]
    if not cases:
        return pd.DataFrame(columns=cols)
    out = tlm_retrained(cfg, result.arch, list(dict.fromkeys(cells)), device=device, store=store, progress=progress)
    longer = {(r.sender, r.receiver, r.cut_i, r.cut_j): r for r in out.itertuples()}
    rows = []
    for a, b, j, i, own, rival in cases:
        o, r = longer[(a, b, j, j)], longer[(a, b, i, j)]
        rows.append([a, b, j, i, own, rival, float(o.relative), float(r.relative), bool(o.accuracy >= r.accuracy),
                     float(o.accuracy), float(r.accuracy), o.correct, r.correct])
    return pd.DataFrame(rows, columns=cols)


def paper_work(arch: str = "resnet18", cfg: IdentConfig | None = None) -> dict:
    """The size of J-T1's paper-scale TLM grid for ``arch``, counted from its preset: every
    ordered pair of networks (within and between), every layer pair, trained by TLM."""
    cfg = cfg or PRESETS_T1["paper"]
    layers = len(cfg.layers(cfg.nets(arch)[0]))
    pairs = cfg.networks + len(cfg.inter_pairs())
    stitches = pairs * layers ** 2
    images = cfg.tlm_train_size or 50_000
    return {"what": f"J-T1 {ARCH_NAMES[arch]} rows ({cfg.networks} networks, TLM for every ordered pair and layer "
                    "pair; DM on top is negligible)",
            "stitches": stitches, "epochs": cfg.tlm_epochs, "images": images,
            "image_passes": stitches * cfg.tlm_epochs * images}
