"""Balogh & Jelasity J-T3 and J-T2: Ding et al.'s specificity and sensitivity tests. Each
representation's function F is its linear-probe accuracy (:mod:`stitchkit.measures.probes`); with A the
representation of highest F, the rank correlation between |F(A) - F(B)| and each dissimilarity
d(A, B) over every other B, bootstrapped over the B's. J-T3 (specificity) comes first: its
config and presets are the base of J-T2's (sensitivity: low-rank approximations of a layer,
:class:`stitchkit.measures.similarity.LowRank`)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch

from ...base.hardware import as_device
from ...base.progress import progress_bar
from ...base.store import Store
from ...data import splits
from ...data.datasets import DataSpec, test_split, train_split
from ...measures import similarity as sim
from ...measures.probes import probe_accuracy, probe_features
from ...measures.similarity import LowRank, pwcca, rank_list
from ...registry.scales import derive_presets, derived, param
from ...verdicts import controls, noise
from ...verdicts.claims import ClaimSpec
from ...verdicts.noise import Estimate
from ...verdicts.results import Control, at_least, more_than
from .common import ARCH_NAMES, NAMES, IdentConfig, dm_grid, network_accuracy
from .identification import PRESETS_T1

# The paper's Table 3, CIFAR-10 rows (Kendall's tau, Spearman's rho).
PAPER_T3 = {
    "resnet18": {"lcka": (0.8590, 0.9699), "pwcca": (0.7285, 0.8959), "opd": (0.7678, 0.9202),
                 "dm_func": (0.8571, 0.9698), "dm_struct": (0.8760, 0.9749)},
    "vit": {"lcka": (0.7189, 0.8701), "pwcca": (0.6502, 0.7848), "opd": (0.5314, 0.6818),
            "dm_func": (0.7818, 0.9207), "dm_struct": (0.6639, 0.8019)},
}
DING_MEASURES = ("lcka", "pwcca", "opd", "dm_func", "dm_struct")  # the columns of Tables 2-3

# Criteria, fixed before any run.
TAU_HIGH_MIN = 0.5  # J-T3: DM (func.)'s Kendall tau at least this
TAU_NEAR_BEST = 0.1  # J-T3: DM (func.)'s tau within this of the best measure's
F_RANGE_MIN = 10.0  # J-T3 control: the probe accuracies differ by at least this many points over S


# --------------------------------------------------------------------------------------------
# J-T3: Ding et al.'s specificity test


@dataclass(frozen=True)
class SpecificityConfig(IdentConfig):
    """J-T3: J-T1's networks and direct-matching grid, plus a linear probe per representation."""

    probe_images: int = param(50_000, "training images of each linear probe (paper: the training set)",
                              ge=100, le=50_000)
    probe_epochs: int = param(30, "Adam epochs of each linear probe", ge=1)


PRESETS_T3 = derive_presets(SpecificityConfig, PRESETS_T1, {"smoke": {"probe_images": 1000, "probe_epochs": 5},
                                                             "demo": {"probe_images": 5000}})
# One GPU: J-T1's gpu networks and direct-matching grid (read from its cache), each probe on 20,000 of the
# 50,000 training images for 15 epochs (1,185 steps; demo: 5,000 for 30, 600 steps). Not all 50,000: the
# probes see every block of a network at once, and the width-64 ResNet-18's eight blocks on 50,000 images
# are ~49 GB of float32 activations, held twice while one network's replace the last (~150 GB at the
# peak, more than the H200's memory); on 20,000, ~60 GB. J-T2 (below) derives its gpu preset from this one.
PRESETS_T3["gpu"] = derived(SpecificityConfig, PRESETS_T1["gpu"], probe_images=20_000, probe_epochs=15)


def specificity(cfg: SpecificityConfig, arch: str, *, device=None, store=None, progress: bool = True) -> dict:
    """Probe accuracy F of every (network, layer) (with its per-image results on the test
    images), the reference A (highest F), the five dissimilarities d(A, B) for every other B, and
    their rank correlations with |F(A) - F(B)|."""
    from scipy import stats

    device = as_device(device)
    store = store or Store()
    nets = cfg.nets(arch)
    layers = cfg.layers(nets[0])
    dm = dm_grid(cfg, nets, layers, device=device, store=store, progress=progress)  # J-T1's, from the cache
    data = DataSpec("cifar10")
    train = train_split(data)
    train = train.subset(splits.stratified_subset(train.labels, min(cfg.probe_images, len(train)), 0))
    test = test_split(data, cfg.measure_images, 0)
    f, correct, acts = {}, {}, {}
    for net in progress_bar(iterable=nets, desc=f"{arch}: linear probes", disable=not progress, unit="network"):
        model = net.load(device, store, None, progress)
        tr = sim.model_activations(model, train.images, layers, normalisation=net.spec.normalisation, device=device)
        te = acts[net.name] = sim.model_activations(model, test.images, layers,
                                                    normalisation=net.spec.normalisation, device=device)
        for layer in layers:
            c = correct[(net.name, layer)] = probe_accuracy(
                probe_features(tr[layer]), train.labels.to(device), probe_features(te[layer]), test.labels.to(device),
                epochs=cfg.probe_epochs, per_image=True)
            f[(net.name, layer)] = 100 * float(c.mean())
    measured: dict[tuple, dict] = {}  # (A, B) -> B's row: shared by the full table and the leave-one-out ones

    def row(ref: tuple[str, str], key: tuple[str, str]) -> dict:
        if (ref, key) not in measured:
            (net, layer), a, b = key, acts[ref[0]][ref[1]], acts[key[0]][key[1]]
            x, y = sim.preprocess(a, b, "pwcca")
            g = dm[(dm.sender == net) & (dm.cut_i == layer) & (dm.receiver == ref[0]) & (dm.cut_j == ref[1])].iloc[0]
            measured[(ref, key)] = {
                "network": net, "layer": layer, "F (%)": f[key], "|ΔF| (points)": abs(f[ref] - f[key]),
                "lcka": 1 - sim.linear_cka_gram(sim.flat(a), sim.flat(b)), "pwcca": pwcca(x, y),
                "opd": sim.procrustes_distance(x, y), "dm_struct": float(g.dm_residual),
                "dm_func": 1 - float(g.dm_accuracy / g.receiver_accuracy)}
        return measured[(ref, key)]

    def test_of(keys: list[tuple[str, str]]) -> tuple[tuple[str, str], pd.DataFrame]:
        """The reference A (highest F among ``keys``) and every other B's row."""
        a = max(keys, key=f.get)
        return a, pd.DataFrame([row(a, k) for k in keys if k != a])

    ref, table = test_of(list(f))
    # the networks' jackknife (specificity_claims): the test again with each network's representations left
    # out, the reference re-chosen among the rest (new dissimilarities only where A's network is left out)
    loo = {net.name: test_of([k for k in f if k[0] != net.name]) for net in nets} if len(nets) > 1 else {}
    corr = []
    for m in DING_MEASURES:
        tau = stats.kendalltau(table["|ΔF| (points)"], table[m])
        rho = stats.spearmanr(table["|ΔF| (points)"], table[m])
        corr.append({"measure": NAMES[m], "key": m, "tau": float(tau.statistic), "tau p": float(tau.pvalue),
                     "rho": float(rho.statistic), "rho p": float(rho.pvalue),
                     "paper tau": PAPER_T3[arch][m][0], "paper rho": PAPER_T3[arch][m][1]})
    return {"arch": arch, "probe": f, "probe_correct": correct, "reference": ref, "table": table,
            "networks": len(nets), "correlations": pd.DataFrame(corr).set_index("measure"),
            "accuracy": network_accuracy(dm), "leave_one_out": loo}


# --------------------------------------------------------------------------------------------
# The rank correlations' bootstrap and the claims J-T3 and J-T2 share


TAU_NOISE = "bootstrap over the representations B"


def _tau_reps(table: pd.DataFrame, measures=DING_MEASURES, group: str | None = None) -> dict[str, np.ndarray]:
    """(R+1,) Kendall tau between |ΔF| and each measure's dissimilarity, on the representations B
    of ``table`` (row 0) and on each bootstrap resample of them (rows drawn with replacement,
    within each ``group``, e.g. a tested layer, whose taus are then averaged): the measures are
    resampled *jointly* (one draw of rows for all), so differences between their taus are
    bootstrapped as differences. A resample on which a tau is undefined (every drawn |ΔF| equal)
    is NaN."""
    import warnings
    import zlib

    from scipy import stats

    groups = [np.arange(len(table))] if group is None else list(table.groupby(group, sort=False).indices.values())
    rng = np.random.default_rng(zlib.crc32(f"tau:{len(table)}:{group}".encode()))
    y = table["|ΔF| (points)"].to_numpy(dtype=float)
    xs = {m: table[m].to_numpy(dtype=float) for m in measures}
    out = {m: np.empty(noise.RESAMPLES + 1) for m in measures}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a constant resample: NaN, counted below
        for r in range(noise.RESAMPLES + 1):
            draw = groups if r == 0 else [rng.choice(g, size=len(g), replace=True) for g in groups]
            for m in measures:
                taus = [stats.kendalltau(y[ix], xs[m][ix]).statistic for ix in draw]
                out[m][r] = np.nan if np.isnan(taus).all() else float(np.nanmean(taus))
    return out


def _tau_point(table: pd.DataFrame, measures=DING_MEASURES) -> dict[str, float]:
    """Kendall's tau between |ΔF| and each measure's dissimilarity on ``table``'s rows."""
    from scipy import stats

    return {m: float(stats.kendalltau(table["|ΔF| (points)"], table[m]).statistic) for m in measures}


def _tau_estimate(reps: np.ndarray, n_seeds: int, within: str = "", loo: np.ndarray | None = None,
                  bounds: tuple[float, float] = (-1.0, 1.0)) -> Estimate:
    """An Estimate from :func:`_tau_reps`-style replicates, dropping the (rare) undefined ones.
    Without ``loo`` the representations are resampled, not the ``n_seeds`` networks they come
    from: the estimate records one seed, and its method says what was resampled. With ``loo``
    (the statistic with each network's representations left out, :func:`specificity`'s
    jackknife), a t interval over the k networks: t(k-1) times the larger of the jackknife's
    standard error and the bootstrap's (the jackknife leaves out whole networks' B's, so it
    varies the B's too: their sum would count that twice), cut to the statistic's range
    ``bounds``; where a
    network left out leaves the statistic undefined (every remaining |ΔF|, or dissimilarity,
    tied), the representations' interval alone, its method saying so."""
    if loo is not None and not np.all(np.isfinite(loo)):
        e = _tau_estimate(reps, n_seeds, within)
        return Estimate(e.value, e.low, e.high, e.n_test, e.n_seeds,
                        e.method + "; the networks' jackknife is undefined (with a network left out every remaining "
                        "value ties), so network-to-network variance is not in it")
    if loo is not None:
        from scipy import stats

        reps, loo = np.asarray(reps, dtype=np.float64), np.asarray(loo, dtype=np.float64)
        keep = np.isfinite(reps)
        if not keep[0] or keep[1:].mean() < 0.5:
            raise ValueError(f"the statistic is undefined on the full sample or on {int((~keep[1:]).sum())} of "
                             f"{len(reps) - 1} resamples (more than half)")
        k = len(loo)
        # the B's sit inside the networks, so leaving a network out (a cluster jackknife) already varies them: its
        # standard error, not its sum with the bootstrap's, unless the bootstrap's is larger (a jackknife of a few
        # networks that happen to agree)
        se_jack = float(np.sqrt((k - 1) / k * ((loo - loo.mean()) ** 2).sum()))
        se_boot = float(reps[keep][1:].std(ddof=1))
        half = float(stats.t.ppf(0.5 + noise.LEVEL / 2, k - 1)) * max(se_jack, se_boot)
        dropped = int((~keep).sum())
        method = (f"t interval over the {k} networks (k - 1 degrees of freedom): the larger standard error of a "
                  "jackknife that leaves one network's representations out (the reference A re-chosen among the "
                  "rest) and a bootstrap over the representations B" + (f" within each {within}" if within else "")
                  + (f", {dropped} undefined resample(s) dropped" if dropped else "")
                  + f" (here the {'jackknife' if se_jack >= se_boot else 'bootstrap'}'s)")
        value = float(reps[0])
        return Estimate(value, max(value - half, bounds[0]), min(value + half, bounds[1]), None, k, method)
    return noise.from_defined_replicates(
        reps, n_test=None, n_seeds=1,
        method=TAU_NOISE + (f", resampled within each {within}" if within else "")
        + (f" (the {n_seeds} networks' representations pooled, the networks not resampled)" if n_seeds > 1 else ""))


def _f_range(correct: dict, keys) -> np.ndarray:
    """(R+1,) the range (points) of probe accuracy F over the representations ``keys``, on the
    test images and each bootstrap resample of them."""
    m = np.stack([np.asarray(correct[k], dtype=np.float64) for k in keys], axis=1)
    acc = noise.resampler(m.shape[0], "test").means(m)
    return 100 * (acc.max(1) - acc.min(1))


def _dm_func_claims(tau: dict, paper: dict, tag: str, name: str, test: str, mean: str, ours: dict,
                    control: list[Control], loo: dict | None = None) -> list[dict]:
    """The two claims J-T2 and J-T3 share: functional DM's tau is high, and close to the best;
    ``tau``: measure -> (R+1,) replicates, ``ours``: what the page writes for each; ``loo``:
    measure -> the networks' jackknife taus (:func:`_tau_estimate`), or None (networks fixed)."""
    n_seeds, within = ours["n_seeds"], ours.get("within", "")
    dm = _tau_estimate(tau["dm_func"], n_seeds, within, None if loo is None else loo["dm_func"])
    stack = np.stack([tau[m] for m in DING_MEASURES], axis=1)
    gap_loo = None if loo is None else loo["dm_func"] - np.max(np.stack([loo[m] for m in DING_MEASURES], 1), axis=1)
    gap = _tau_estimate(tau["dm_func"] - np.max(stack, axis=1), n_seeds, within, gap_loo,  # the best, per resample
                        bounds=(-2.0, 0.0))
    best = max(DING_MEASURES, key=lambda m: tau[m][0])
    return [
        ClaimSpec(
            key=f"dm_func_high_{tag}", text=f"{name}: functional DM has a high rank correlation with the functional "
                                            f"difference in the {test} test",
            criterion=at_least(dm, TAU_HIGH_MIN, f"{mean}Kendall's tau of DM (func.)", unit="", digits=2),
            paper=f"tau {paper['dm_func'][0]:.4f}, rho {paper['dm_func'][1]:.4f}",
            ours=f"tau {dm.text(4)}, rho {ours['rho_dm']:.4f} ({ours['cases']})", controls=control, kind="no_stitch"),
        ClaimSpec(
            key=f"dm_func_near_best_{tag}", text=f"{name}: functional DM is at or close to the best measure",
            criterion=at_least(gap, -TAU_NEAR_BEST, f"{mean}tau of DM (func.) − the best", unit="", digits=2),
            paper=f"best {NAMES[max(paper, key=lambda k: paper[k][0])]} tau {max(v[0] for v in paper.values()):.4f}",
            ours=f"best {NAMES[best]} tau {tau[best][0]:.4f}; DM (func.) − best {gap.text(4)}", controls=control,
            kind="no_stitch"),
    ]


def leave_one_out(result: dict) -> pd.DataFrame:
    """J-T3's networks' jackknife (:func:`specificity`): per network left out, the reference A
    re-chosen among the other networks' representations, the number of B's, and each measure's
    Kendall tau between |ΔF| and its dissimilarity. Empty with one network."""
    rows = [{"network left out": net, "reference A": f"{ref[0]}, {ref[1]}", "B's": len(t),
             **{NAMES[m]: tau for m, tau in _tau_point(t).items()}}
            for net, (ref, t) in (result.get("leave_one_out") or {}).items()]
    return pd.DataFrame(rows)


def specificity_claims(result: dict) -> tuple[dict, list[ClaimSpec]]:
    arch = result["arch"]
    tag = "rn" if arch == "resnet18" else "vit"
    name = ARCH_NAMES[arch]
    c = result["correlations"]
    rho = {k: float(c.loc[NAMES[k], "rho"]) for k in DING_MEASURES}
    tau = _tau_reps(result["table"])
    n_seeds = int(result.get("networks", 1))
    spread = noise.from_replicates(_f_range(result["probe_correct"], list(result["probe"])),
                                   n_test=len(next(iter(result["probe_correct"].values()))))
    n = len(result["table"])
    numbers = {**{f"{tag}_tau_{k}": float(v[0]) for k, v in tau.items()}, **{f"{tag}_rho_{k}": v for k, v in rho.items()},
               f"{tag}_representations": n + 1, f"{tag}_f_range": spread.value,
               f"{tag}_f_ref": result["probe"][result["reference"]]}
    control = [controls.premise(spread, F_RANGE_MIN, "the probe tells the representations apart (there are functional "
                                "differences to rank)", what="range of probe accuracy F over the representations")]
    jack = leave_one_out(result)  # the networks' jackknife: each tau with one network's representations left out
    loo = {m: jack[NAMES[m]].to_numpy(dtype=float) for m in DING_MEASURES} if len(jack) > 1 else None
    diff = _tau_estimate(tau["lcka"] - tau["pwcca"], n_seeds, loo=None if loo is None else loo["lcka"] - loo["pwcca"],
                         bounds=(-2.0, 2.0))
    numbers.update({f"{tag}_lcka_minus_pwcca": diff.value, f"{tag}_lcka_minus_pwcca_low": diff.low,
                    f"{tag}_lcka_minus_pwcca_high": diff.high})
    p = PAPER_T3[arch]
    ours = {"n_seeds": n_seeds, "rho_dm": rho["dm_func"], "cases": f"n = {n}"}
    claims = _dm_func_claims(tau, p, tag, name, "specificity", "", ours, control, loo) + [
        ClaimSpec(
            key=f"pwcca_below_lcka_{tag}", text=f"{name}: PWCCA ranks below LCKA in the specificity test (as Ding et "
                                                "al. found)",
            criterion=more_than(diff, 0.0, "tau of LCKA − tau of PWCCA (bootstrapped jointly)", unit="", digits=3),
            paper=f"PWCCA {p['pwcca'][0]:.4f} vs LCKA {p['lcka'][0]:.4f}",
            ours=f"PWCCA {tau['pwcca'][0]:.4f} vs LCKA {tau['lcka'][0]:.4f}; difference {diff.text(4)}",
            controls=control, kind="no_stitch"),
    ]
    return numbers, claims


# --------------------------------------------------------------------------------------------
# J-T2: Ding et al.'s sensitivity test
#
# Low-rank approximations of one layer (principal components over channels or token features,
# every position or token a row, fitted on the probe's training images) are representations
# that differ in function. As in the authors' exec_compute_low_rank_sim_metrics.py, the layer of
# several networks (seeds 0, 1, 2 at demo; the authors' script: two; Ding et al.: several seeds),
# each at a list of ranks, gives the representations; F is each one's linear-probe accuracy; A the one of highest F; d(A, B) each
# measure's dissimilarity to every other B, of A's network or another. With one network every
# measure monotone in rank ranked the B's alike (LCKA = PWCCA = 0.8177 at demo, on the networks used
# until 2026-12-07). DM fits its stitch from B (source) to A (target) on K training images and feeds
# the top of A's network the stitched B on the test images (DM func.); its relative residual is DM
# (struct.).


PAPER_T2 = {
    "resnet18": {"lcka": (0.5687, 0.7217), "pwcca": (0.6276, 0.7767), "opd": (0.5484, 0.7176),
                 "dm_func": (0.7896, 0.9169), "dm_struct": (0.6583, 0.8068)},
    "vit": {"lcka": (0.4851, 0.6320), "pwcca": (0.8260, 0.9453), "opd": (0.7321, 0.8621),
            "dm_func": (0.7448, 0.8885), "dm_struct": (0.7856, 0.9057)},
}


@dataclass(frozen=True)
class SensitivityConfig(SpecificityConfig):
    """J-T2: low-rank approximations of the last blocks of two of J-T1's networks."""

    ranks: int = param(14, "ranks per layer, geometrically spaced from full rank to 1 (paper 13-16)", ge=2)
    rn_blocks: int = param(4, "ResNet-18: the last k blocks are tested (paper 4)", ge=1, le=8)
    vit_fraction: float = param(0.5, "ViT: the last fraction of its blocks is tested (paper 6 of 12)", gt=0, le=1)
    sensitivity_networks: int = param(3, "networks whose low-rank approximations of each tested layer are compared "
                                      "(seeds 0 .. k-1; the authors' code: two; three, the fewest whose jackknife "
                                      "leaves a pair of networks)", ge=2)


PRESETS_T2 = derive_presets(SensitivityConfig, PRESETS_T3,
                            {"smoke": {"ranks": 5, "rn_blocks": 2, "sensitivity_networks": 2}})


def sensitivity_layers(cfg: SensitivityConfig, arch: str, layers: list[str]) -> list[str]:
    k = cfg.rn_blocks if arch == "resnet18" else max(1, int(round(cfg.vit_fraction * len(layers))))
    return layers[-k:]


@torch.no_grad()
def _dm_func(model, layer: str, src_train, tgt_train, src_test, labels) -> tuple[float, float]:
    """Accuracy of the network's top after ``layer`` fed the DM stitch of ``src`` onto ``tgt``, and
    the fit's relative residual."""
    from ...stitching.stitches import init_dm, make_stitch

    shape = tuple(src_train.shape[1:])
    stitch = make_stitch("resize_conv", shape, shape).to(src_train.device)
    resid = init_dm(stitch, src_train, tgt_train)["dm_residual"]
    stitch.eval()
    pred = torch.cat([model.forward_from(layer, stitch(x)).argmax(1) for x in src_test.split(500)])
    return float((pred == labels).float().mean()), resid


@torch.no_grad()
def _top_accuracy(model, layer: str, h: torch.Tensor, labels: torch.Tensor) -> tuple[float, np.ndarray]:
    """The network's top after ``layer`` fed ``h``: accuracy and per-image results."""
    pred = torch.cat([model.forward_from(layer, x).argmax(1) for x in h.split(500)])
    ok = (pred == labels).cpu().numpy()
    return float(ok.mean()), ok


def sensitivity(cfg: SensitivityConfig, arch: str, *, device=None, store=None, progress: bool = True) -> dict:
    """Per tested layer, the authors' design: the layer of ``cfg.sensitivity_networks`` networks
    (seeds 0, 1, ...), each at every rank of :func:`rank_list`, are the representations; F is each
    one's probe accuracy, A the one of highest F, and every other B (the other ranks of A's
    network *and* every rank of the other networks) is compared with A by the five measures
    (DM: B's stitch onto A, fed to the top of A's network). Returns the rows, the rank
    correlations per layer and their mean, and the probes' per-image results."""
    from scipy import stats

    device = as_device(device)
    store = store or Store()
    nets = cfg.nets(arch)[:cfg.sensitivity_networks]
    if len(nets) < 2:
        raise ValueError(f"the sensitivity test compares representations of at least 2 networks, got {len(nets)} "
                         "(networks and sensitivity_networks must be >= 2)")
    data = DataSpec("cifar10")
    train = train_split(data)
    train = train.subset(splits.stratified_subset(train.labels, min(cfg.probe_images, len(train)), 0))
    dm_index = splits.stratified_subset(train.labels, min(cfg.dm_images, len(train)), 0)
    test = test_split(data, cfg.measure_images, 0)
    ytr, yte = train.labels.to(device), test.labels.to(device)
    models = {net.name: net.load(device, store, None, progress) for net in nets}
    layers = sensitivity_layers(cfg, arch, cfg.layers(nets[0]))
    rows, corr, accuracy, probe_correct, jack = [], [], {}, {}, {}
    for layer in progress_bar(iterable=layers, desc=f"{arch}: low-rank approximations", disable=not progress,
                              unit="layer"):
        tr, te, lra = {}, {}, {}
        for net in nets:
            norm = net.spec.normalisation
            tr[net.name] = sim.model_activations(models[net.name], train.images, [layer], normalisation=norm,
                                                 device=device)[layer]
            te[net.name] = sim.model_activations(models[net.name], test.images, [layer], normalisation=norm,
                                                 device=device)[layer]
            lra[net.name] = LowRank(tr[net.name])
        ranks = {n: rank_list(lra[n].full, cfg.ranks) for n in lra}
        f = {}
        for n, rs in ranks.items():
            for r in rs:
                ok = probe_accuracy(probe_features(lra[n](tr[n], r)), ytr, probe_features(lra[n](te[n], r)), yte,
                                    epochs=cfg.probe_epochs, per_image=True)
                probe_correct[(n, layer, r)] = ok
                f[(n, r)] = 100 * float(ok.mean())
        refs: dict[tuple, tuple] = {}  # A -> its training and test representation and its network's own accuracy
        measured: dict[tuple, dict] = {}  # (A, B) -> B's row: shared by the full test and the jackknife's

        def row(ref: tuple, key: tuple) -> dict:
            if ref not in refs:  # the DM fit's K training images only are projected (rows are independent)
                a_te = lra[ref[0]](te[ref[0]], ref[1])
                refs[ref] = (lra[ref[0]](tr[ref[0]][dm_index], ref[1]), a_te,
                             _top_accuracy(models[ref[0]], layer, a_te, yte)[0])
            if (ref, key) not in measured:
                (a_fit, a_te, own), (n, r) = refs[ref], key
                b_fit, b_te = lra[n](tr[n][dm_index], r), lra[n](te[n], r)
                acc, resid = _dm_func(models[ref[0]], layer, b_fit, a_fit, b_te, yte)
                x, y = sim.positions_as_examples(a_te), sim.positions_as_examples(b_te)
                measured[(ref, key)] = {
                    "layer": layer, "reference": f"{ref[0]} rank {ref[1]}", "network": n, "rank": r,
                    "same network": n == ref[0], "F (%)": f[key], "|ΔF| (points)": abs(f[ref] - f[key]),
                    "lcka": 1 - sim.linear_cka_gram(sim.flat(a_te), sim.flat(b_te)),
                    "pwcca": pwcca(x, y), "opd": sim.procrustes_distance(x, y), "dm_struct": resid,
                    "dm_func": 1 - acc / own if own > 0 else float("nan")}
            return measured[(ref, key)]

        def test_of(keys: list[tuple]) -> pd.DataFrame:
            """Every B's row against the reference A, the highest F among ``keys``."""
            a = max(keys, key=f.get)
            return pd.DataFrame([row(a, k) for k in keys if k != a])

        part = test_of(list(f))
        ref = max(f, key=f.get)
        accuracy[layer] = refs[ref][2]
        # the networks' jackknife (sensitivity_claims): this layer's test with each network's representations
        # left out, the reference re-chosen among the rest
        for net in nets:
            jack.setdefault(net.name, []).append(test_of([k for k in f if k[0] != net.name]))
        for m in DING_MEASURES:
            tau = stats.kendalltau(part["|ΔF| (points)"], part[m])
            rho = stats.spearmanr(part["|ΔF| (points)"], part[m])
            corr.append({"layer": layer, "measure": m, "tau": float(tau.statistic), "tau p": float(tau.pvalue),
                         "rho": float(rho.statistic), "rho p": float(rho.pvalue),
                         "F range": max(f.values()) - min(f.values())})
        rows.append(part)
    per_layer = pd.DataFrame(corr)
    mean = per_layer.groupby("measure")[["tau", "rho"]].mean()
    signif = per_layer.assign(sig=per_layer["tau p"] < 0.05).groupby("measure").sig.mean()
    summary = pd.DataFrame([{"measure": NAMES[m], "key": m, "tau": float(mean.loc[m, "tau"]),
                             "paper tau": PAPER_T2[arch][m][0], "rho": float(mean.loc[m, "rho"]),
                             "paper rho": PAPER_T2[arch][m][1], "layers with tau p < 0.05": float(signif.loc[m])}
                            for m in DING_MEASURES]).set_index("measure")
    return {"arch": arch, "table": pd.concat(rows, ignore_index=True), "per_layer": per_layer,
            "correlations": summary, "layer_accuracy": accuracy, "probe_correct": probe_correct,
            "networks": [n.name for n in nets],
            "leave_one_out": {n: pd.concat(parts, ignore_index=True) for n, parts in jack.items()}}


def sensitivity_leave_one_out(result: dict) -> pd.DataFrame:
    """J-T2's networks' jackknife (:func:`sensitivity`): per network left out, the number of B's
    and each measure's Kendall tau averaged over the tested layers (each layer's reference A
    re-chosen among the other networks' representations; a layer whose tau is undefined is left
    out of the mean, as in :func:`_tau_reps`). Empty before the jackknife was kept."""
    import warnings

    rows = []
    for net, t in (result.get("leave_one_out") or {}).items():
        per = [_tau_point(g) for _, g in t.groupby("layer", sort=False)]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # every layer undefined: NaN, which _tau_estimate reports
            rows.append({"network left out": net, "B's": len(t),
                         **{NAMES[m]: float(np.nanmean([p[m] for p in per])) for m in DING_MEASURES}})
    return pd.DataFrame(rows)


def sensitivity_claims(result: dict) -> tuple[dict, list[ClaimSpec]]:
    arch = result["arch"]
    tag = "rn" if arch == "resnet18" else "vit"
    name = ARCH_NAMES[arch]
    c = result["correlations"]
    rho = {k: float(c.loc[NAMES[k], "rho"]) for k in DING_MEASURES}
    tau = _tau_reps(result["table"], group="layer")
    n_seeds = len(result["networks"])
    cases = result["per_layer"].layer.nunique()
    pc = result["probe_correct"]
    ranges = np.stack([_f_range(pc, [k for k in pc if k[1] == layer]) for layer in result["per_layer"].layer.unique()],
                      axis=1)
    spread = noise.from_replicates(ranges.min(1), n_test=len(next(iter(pc.values()))))
    jack = sensitivity_leave_one_out(result)  # the networks' jackknife: mean taus with one network left out
    loo = {m: jack[NAMES[m]].to_numpy(dtype=float) for m in DING_MEASURES} if len(jack) > 1 else None
    diff = _tau_estimate(tau["dm_func"] - tau["lcka"], n_seeds, "layer",
                         None if loo is None else loo["dm_func"] - loo["lcka"], bounds=(-2.0, 2.0))
    numbers = {**{f"{tag}_tau_{k}": float(v[0]) for k, v in tau.items()}, **{f"{tag}_rho_{k}": v for k, v in rho.items()},
               f"{tag}_layers": cases, f"{tag}_networks": n_seeds, f"{tag}_f_range_min": spread.value,
               f"{tag}_dm_minus_lcka": diff.value, f"{tag}_dm_minus_lcka_low": diff.low,
               f"{tag}_dm_minus_lcka_high": diff.high}
    control = [controls.premise(spread, F_RANGE_MIN, "every tested layer's representations differ in function (the "
                                "probe's accuracy spans enough to rank)",
                                what="smallest range of probe accuracy F over a layer's representations")]
    p = PAPER_T2[arch]
    ours = {"n_seeds": n_seeds, "within": "layer", "rho_dm": rho["dm_func"],
            "cases": f"{cases} layers, {n_seeds} networks"}
    claims = _dm_func_claims(tau, p, tag, name, "sensitivity", "mean ", ours, control, loo) + [
        ClaimSpec(
            key=f"lcka_below_dm_{tag}", text=f"{name}: LCKA is less sensitive than functional DM (LCKA does poorly in "
                                             "the sensitivity test, as Ding et al. found)",
            criterion=more_than(diff, 0.0, "mean tau of DM (func.) − mean tau of LCKA (bootstrapped jointly)",
                                unit="", digits=3),
            paper=f"LCKA {p['lcka'][0]:.4f} vs DM (func.) {p['dm_func'][0]:.4f}",
            ours=f"LCKA {tau['lcka'][0]:.4f} vs DM (func.) {tau['dm_func'][0]:.4f}; difference {diff.text(4)}",
            controls=control, kind="no_stitch"),
    ]
    return numbers, claims
