"""B-F2A, stitching connectivity (Bansal, Nakkiran & Barak 2021, Figure 2A and Section 4): the other
architectures beside the base ResNet-18 (one panel each), the page's tables and figures, and its
training-length control. The base ResNet-18's recipe, grid and claims are the part's shared core,
:mod:`.common`; the training-length control's machinery is :mod:`.length`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable

import numpy as np
import pandas as pd
import torch

from ...data.datasets import DataSpec
from ...networks import network, zoo
from ...pagekit import plotting
from ...registry.scales import param
from ...stitching.grid import stitch_grid
from ...stitching.grid_spec import Net, StitchRecipe
from ...verdicts import controls
from ...verdicts.claims import ClaimSpec
from ...verdicts.results import Control, Criterion, at_most
from .common import (BEYOND, CONNECTED_MAX_PENALTY, RANDOM, RANDOM_EARLY_MAX_PENALTY, RANDOM_LATE_MIN_PENALTY, SELF,
                     TRAINED, ConnectivityConfig, beyond_self, boot, connectivity_claims, estimate_numbers,
                     extend_presets, points, positions, replicate_networks, replicate_vectors)
from .length import LengthCheck, LengthPart, retrain_longer

__all__ = [
    # B-F2A's other architectures and training-length control
    "ARCHS", "ArchitecturesConfig", "PRESETS_F2A", "SEED_CLAIMS_F2A", "architectures", "architectures_summary",
    "deciding_cuts", "spread", "training_length_control",
    # B-F2A's tables and figures
    "architectures_table", "penalty_table", "plot_architectures", "plot_judged", "plot_penalty",
]


# --------------------------------------------------------------------------------------------
# B-F2A's other architectures (one panel each beside the base ResNet-18)

ARCHS = {"resnet18_x0.5": "ResNet-18 x0.5", "resnet18_x2": "ResNet-18 x2", "resnet164": "ResNet-164",
         "myrtle": "Myrtle CNN", "vit": "ViT"}


@dataclass(frozen=True)
class ArchitecturesConfig(ConnectivityConfig):
    """B-F2A: the base ResNet-18 panel (with the random bottom) and one panel per other architecture."""

    other_archs: tuple[str, ...] = param(tuple(ARCHS), "architectures beside the base ResNet-18, one panel each: "
                                         + ", ".join(ARCHS), items={"choices": tuple(ARCHS)}, unique=True)
    arch_cuts: int | None = param(None, "cuts per other architecture, spread from first to last; None: every cut",
                                  ge=2)
    resnet164: zoo.Recipe = zoo.recipe_field("the ResNet-164s' recipe (zoo.BANSAL_RESNET164 at the preset's scale)")
    myrtle: zoo.Recipe = zoo.recipe_field("the Myrtle CNNs' recipe (zoo.BANSAL_MYRTLE at the preset's scale)")
    vit: zoo.Recipe = zoo.recipe_field("the ViTs' recipe (zoo.BANSAL_VIT at the preset's scale)")

    # the recipes the page's width and length parameters override (pagekit.page.held_recipes), as arch_model passes them
    RECIPE_OVERRIDES = {"width": ("net",), "model_epochs": ("net", "resnet164")}

    def arch_model(self, arch: str, seed: int, *, trained: bool = True) -> network.ModelSpec:
        if arch in ("resnet18_x0.5", "resnet18_x2"):
            return zoo.bansal_resnet18(self.net, seed, width=self.width, width_factor=0.5 if arch.endswith("0.5") else 2.0,
                                       epochs=self.model_epochs, final_bn=self.final_bn, trained=trained)
        if arch == "resnet164":
            return zoo.bansal_resnet164(self.resnet164, seed, epochs=self.model_epochs, trained=trained)
        if arch == "myrtle":
            return zoo.bansal_myrtle(self.myrtle, seed, trained=trained)
        if arch == "vit":
            return zoo.bansal_vit(self.vit, seed, trained=trained)
        raise ValueError(f"unknown architecture {arch!r}; valid: {', '.join(ARCHS)}")

    def networks(self) -> list[network.ModelSpec]:
        """B-F2A's trained networks (a batch trains them ahead): the base panel's, each other
        architecture's two seeds, and the seed-variance component's."""
        return [*super().networks(), *(self.arch_model(a, s) for a in self.other_archs for s in self.seeds),
                *replicate_networks(self)]

    def arch_recipe(self, arch: str) -> StitchRecipe:
        """The stitch of Bansal et al. App. A.4: BN -> 1x1 conv -> BN between conv blocks; one
        Linear on every token between transformer blocks."""
        return replace(self.recipe(), kind="conv") if arch == "vit" else self.recipe()


# smoke: two small panels at three cuts (the Myrtle CNN and the ViT: the code paths that differ from
# the ResNet-18's; the widths are the same model); demo, gpu and paper: every cut, since each
# architecture's claim is "connected at every layer" (amendment of 2026-12-02, issue 68: demo had
# four cuts per other architecture, first, last and two between, of 5-10).
PRESETS_F2A = zoo.at_scale(extend_presets(ArchitecturesConfig, {"other_archs": ("myrtle", "vit"), "arch_cuts": 3}),
                            resnet164=zoo.BANSAL_RESNET164, myrtle=zoo.BANSAL_MYRTLE, vit=zoo.BANSAL_VIT)
# gpu: the base panel at every cut and one other architecture, the Myrtle CNN (the zoo's gpu recipe,
# ~25 s a network), at its five cuts: with the ViT (~30 s a network, 8 more stitches) the page would need
# ~540 s of one GPU, more than a loan's budget; the ResNet-18 x0.5 and x2 and ResNet-164 panels are
# further out of reach (x2 alone ~210 s a network at 13.3 GFLOP an image). They stay at demo.
PRESETS_F2A["gpu"] = replace(PRESETS_F2A["gpu"], other_archs=("myrtle",))
# B-F2A's claims judged with the seed-variance component (.seeds.with_seeds): claim key -> (how many
# independently trained networks its number is a difference of, its statistic over the cuts). Not the
# other architectures' (not the recipe it was measured on) nor the untrained bottom's.
SEED_CLAIMS_F2A: dict[str, tuple[int, str]] = {"connected": (1, "max")}


def spread(cuts: list[str], k: int | None) -> list[str]:
    """``k`` of ``cuts`` evenly spread from the first to the last (all of them when k is None)."""
    if k is None or k >= len(cuts):
        return list(cuts)
    return [cuts[round(i * (len(cuts) - 1) / (k - 1))] for i in range(k)]


def architectures(cfg: ArchitecturesConfig, *, device: torch.device | str | None = None, store=None,
                  progress: bool = True) -> tuple[pd.DataFrame, dict[str, dict]]:
    """For each of ``cfg.other_archs``: seed 1 and the receiver itself stitched into seed 0 at
    ``cfg.arch_cuts`` cuts. Returns the tables stacked with an ``arch`` column, and per
    architecture the receiver's and sender's test accuracy and the cuts used."""
    tables, models = [], {}
    # every architecture's networks named first: an unknown one is refused before any network trains
    pairs = {arch: (cfg.arch_model(arch, cfg.seeds[0]), cfg.arch_model(arch, cfg.seeds[1]))
             for arch in cfg.other_archs}
    for arch, (receiver_spec, sender_spec) in pairs.items():
        receiver, sender = Net("receiver", receiver_spec), Net(TRAINED, sender_spec)
        receiver.model, mr = network.load_or_train(receiver.spec, device=device, store=store, progress=progress)
        sender.model, ms = network.load_or_train(sender.spec, device=device, store=store, progress=progress)
        cuts = spread(receiver.model.cuts, cfg.arch_cuts)
        t = stitch_grid([Net(SELF, receiver.spec, receiver.model), sender], [receiver], [(c, c) for c in cuts],
                        cfg.arch_recipe(arch), DataSpec("cifar10"), device=device, store=store, progress=progress)
        # the negative control: an untrained network of the architecture at the last two cuts
        late = cuts[-controls.NEGATIVE_CUTS:]
        r = stitch_grid([Net(RANDOM, cfg.arch_model(arch, cfg.random_seed, trained=False))], [receiver],
                        [(c, c) for c in late], cfg.arch_recipe(arch), DataSpec("cifar10"), device=device,
                        store=store, progress=progress)
        t = pd.concat([t, r], ignore_index=True)
        tables.append(t.rename(columns={"cut_i": "cut"}).drop(columns=["cut_j"]).assign(arch=arch))
        models[arch] = {"receiver_accuracy_full_test": mr["test"]["accuracy"],
                        "sender_accuracy_full_test": ms["test"]["accuracy"], "cuts": cuts,
                        "width": receiver.spec.width, "model": receiver.spec.model}
    table = pd.concat(tables, ignore_index=True) if tables else pd.DataFrame(columns=["arch"])
    return table, models


def _arch_claim(g: pd.DataFrame, arch: str) -> tuple[dict[str, float], ClaimSpec]:
    """One architecture's connectivity claim (B-F2A's 3-point bound beyond its own self-stitch,
    on the interval of the maximum over its cuts) with its own two-sided self-stitch control."""
    tag = arch.replace(".", "_")
    t = g.reset_index(drop=True)
    cuts = list(dict.fromkeys(t[t.sender == TRAINED].cut))
    p_tr, p_self = positions(t, TRAINED, cuts), positions(t, SELF, cuts)
    beyond = points(t, p_tr) - points(t, p_self)
    connected = boot(t, lambda x: float((points(x, p_tr) - points(x, p_self)).max()))
    control, self_e = controls.self_stitch_control(t, p_self, f"{ARCHS[arch]} receiver stitched into itself at every "
                                                   "cut")
    self_pen = points(t, p_self)
    numbers = {**estimate_numbers(f"{tag}_max_penalty_beyond", connected),
               **estimate_numbers(f"{tag}_control_largest_penalty", self_e),
               **controls.gain_numbers(f"{tag}_self_stitch", self_pen)}
    late = [c for c in cuts if c in set(t[t.sender == RANDOM].cut)]
    if late:
        p_rd, p_late = positions(t, RANDOM, late), positions(t, SELF, late)
        neg_e = boot(t, lambda x: float((points(x, p_rd) - points(x, p_late)).mean()))
        numbers.update(estimate_numbers(f"{tag}_random_late_penalty_beyond", neg_e))
        negative = controls.untrained_sender_fails(neg_e, what=f"an untrained {ARCHS[arch]} stitched into the receiver "
                                                              f"at {', '.join(late)}")
    else:
        negative = Control(f"an untrained {ARCHS[arch]} stitched into the receiver at the last two cuts: not run",
                           f"penalty beyond the self-stitch ≥ {controls.NEGATIVE_MARGIN:g} points", "not run", False,
                           None, controls.NEGATIVE)
    claim = ClaimSpec(
        key=f"connected_{tag}",
        text=f"{ARCHS[arch]}: two independently seeded networks are stitching connected (penalty close to 0 "
             "at every layer)",
        criterion=at_most(connected, 100 * CONNECTED_MAX_PENALTY, f"max penalty over {len(cuts)} cuts{BEYOND}",
                          digits=0),
        paper="up to 3% error at every layer for every architecture (Table 1, Fig. 2A)",
        ours=f"max {connected.text(2, 'points')} (at {cuts[int(np.argmax(beyond))]}), mean {beyond.mean():.2f}; "
             f"raw penalty max {points(t, p_tr).max():.2f}, self-stitch {self_pen.min():.2f} to {self_pen.max():.2f}",
        controls=[control, negative], kind="compatible")
    return numbers, claim


def architectures_summary(table: pd.DataFrame, models: dict[str, dict]) -> tuple[dict[str, float], list[ClaimSpec]]:
    """Per architecture: the max penalty over its cuts beyond its self-stitch (the connectivity
    claim, judged with B-F2A's 3-point bound on its interval) and its own two-sided control."""
    numbers: dict[str, float] = {}
    claims = []
    for arch, g in table.groupby("arch", sort=False):
        tag = arch.replace(".", "_")
        by = {name: x.set_index("cut") for name, x in g.groupby("sender", sort=False)}
        trained, self_ = by[TRAINED], by[SELF]
        numbers.update({f"{tag}_receiver_accuracy": 100 * trained.receiver_accuracy.iloc[0],
                        f"{tag}_sender_accuracy_full_test": 100 * models[arch]["sender_accuracy_full_test"],
                        f"{tag}_max_penalty": 100 * trained.penalty.max(),
                        f"{tag}_mean_penalty": 100 * trained.penalty.mean(),
                        f"{tag}_max_dm_penalty": 100 * trained.dm_penalty.max(),
                        f"{tag}_control_max_penalty": 100 * self_.penalty.max(),
                        f"{tag}_control_min_penalty": 100 * self_.penalty.min()})
        for cut in trained.index:
            numbers[f"{tag}_penalty_{cut}"] = 100 * trained.penalty[cut]
        judged, claim = _arch_claim(g, arch)
        numbers.update(judged)
        claims.append(claim)
    return numbers, claims


# --------------------------------------------------------------------------------------------
# B-F2A's tables and figures


def penalty_table(table: pd.DataFrame) -> pd.DataFrame:
    """The base ResNet-18 per cut (rows) and sender (columns): the stitching penalty in points
    after direct matching only and after fine-tuning."""
    return (table.pivot_table(index="cut", columns="sender", values=["dm_penalty", "penalty"], sort=False)
            .mul(100).round(2).rename(columns={"dm_penalty": "after DM only", "penalty": "after fine-tuning"}))


def plot_penalty(table: pd.DataFrame, models: dict):
    """The base ResNet-18's penalty (left) and stitched accuracy (right) per cut, with the
    paper's 3-point band (:func:`stitchkit.pagekit.plotting.penalty_per_layer`)."""
    return plotting.penalty_per_layer(
        table, title=f"Pre-activation ResNet-18 (width {models['width']}) on CIFAR-10",
        paper=(0, 100 * CONNECTED_MAX_PENALTY, "paper: trained senders within 3 points (Table 1)"))


def plot_judged(table: pd.DataFrame, models: dict):
    """What B-F2A's claims judge, per cut: the trained sender's and the untrained bottom's penalty
    beyond the receiver stitched into itself, each with its 95% band over the test images (the
    claims' paired bootstrap), and each criterion drawn one-sided where it reads: the trained
    sender at most 3 points at every cut (the paper's Table 1), the untrained bottom at most 5 at
    the first cut and at least 20 at the last two."""
    t = table.reset_index(drop=True)
    cuts = list(dict.fromkeys(t[t.sender == TRAINED].cut))
    p_self = positions(t, SELF, cuts)
    lines = {}
    for sender, label in ((TRAINED, "trained sender (seed 1)"), (RANDOM, "untrained bottom")):
        pos = positions(t, sender, cuts)
        reps = replicate_vectors(t, lambda x, pos=pos: points(x, pos) - points(x, p_self))
        low, high = np.percentile(reps[1:], [2.5, 97.5], axis=0)
        lines[label] = (reps[0], low, high)
    n = len(cuts)
    bounds = [("connected (paper: Table 1)", 100 * CONNECTED_MAX_PENALTY, "<=", None),
              ("untrained bottom low at the first cut", 100 * RANDOM_EARLY_MAX_PENALTY, "<=", [0]),
              ("untrained bottom high at the last two", 100 * RANDOM_LATE_MIN_PENALTY, ">=", [n - 2, n - 1])]
    return plotting.judged_per_layer(
        cuts, lines, bounds=bounds, ylabel="penalty beyond the self-stitch (points)",
        title=f"What the claims judge: ResNet-18 (width {models['width']})")


def architectures_table(models: dict[str, dict], numbers: dict[str, float]) -> pd.DataFrame:
    """Per other architecture (rows, by name): its registered model and base width, the
    receiver's and sender's test accuracy (%), the largest penalty over its cuts, raw and beyond
    its self-stitch, the self-stitch's largest penalty (points) and the cuts stitched at
    (``models`` and ``numbers`` from :func:`architectures` and :func:`architectures_summary`)."""
    rows = {}
    for a, m in models.items():
        tag = a.replace(".", "_")
        rows[ARCHS[a]] = {"model": m["model"], "base width": m["width"],
                          "receiver accuracy (%)": round(100 * m["receiver_accuracy_full_test"], 2),
                          "sender accuracy (%)": round(100 * m["sender_accuracy_full_test"], 2),
                          "max penalty (points)": round(numbers[f"{tag}_max_penalty"], 2),
                          "max beyond the self-stitch (points)": round(numbers[f"{tag}_max_penalty_beyond"], 2),
                          "control max penalty (points)": round(numbers[f"{tag}_control_max_penalty"], 2),
                          "cuts": ", ".join(m["cuts"])}
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("architecture")


def plot_architectures(table: pd.DataFrame, models: dict, arch_table: pd.DataFrame, arch_models: dict[str, dict]):
    """Figure 2A's layout: the stitched model's test error per cut, one panel for the base
    ResNet-18 (``table``, ``models`` from :func:`connectivity`) and one per other architecture
    (``arch_table``, ``arch_models`` from :func:`architectures`)."""
    panels = {f"ResNet-18 (width {models['width']})": table}
    panels.update({f"{ARCHS[a]} (width {m['width']})": arch_table[arch_table.arch == a]
                   for a, m in arch_models.items()})
    return plotting.connectivity_panels(panels, title="Stitching connectivity",
                                        paper=(100 * CONNECTED_MAX_PENALTY,
                                               "paper: within 3 points of the receiver's error"))


# --------------------------------------------------------------------------------------------
# The training-length control, like for like: a stitch that stopped short costs more than a
# trained one, so every verdict (decided or not: issue 46) is checked at the cuts that decide it (all those past the
# bound, or the closest one). The deciding stitches *and the receiver's self-stitches at those
# cuts* (the reference the claims subtract, which may move either way) are retrained with LONGER x
# the epochs, the 1x cells are replaced by them, and the claim is re-judged on that table
# (stitchkit.verdicts.controls.training_length: it passes when the re-judged claim gives the same
# result; an undecided claim that the longer run decides fails it).

# claim key -> (sender, which cuts decide it, bound: a fraction of the accuracy)
_LENGTH_CHECKS = {"connected": (TRAINED, "worst", CONNECTED_MAX_PENALTY),
                  "random_early": (RANDOM, "first", RANDOM_EARLY_MAX_PENALTY),
                  "same_trend": (RANDOM, "all", None),  # B-F5: the random bottom's penalty at every cut
                  "random_late": (RANDOM, "last two", RANDOM_LATE_MIN_PENALTY)}

_SAME_CLAIM = {"random_early_stitch": "random_early"}  # another page's key -> B-F2A's, for the same claim


def deciding_cuts(beyond: pd.Series, bound_points: float) -> list[str]:
    """The cuts that decide a 'penalty beyond the self-stitch at most ``bound_points`` at every cut'
    claim: every cut above the bound (all of them must come down for the verdict to turn), or,
    when none is, the cut closest to it."""
    return [c for c in beyond.index if beyond[c] > bound_points] or [beyond.idxmax()]


def _length_checks(cfg: ConnectivityConfig, table: pd.DataFrame, claims: list[ClaimSpec],
                   arch: str = "resnet18") -> list[LengthCheck]:
    """The stitches to retrain longer for ``claims`` of one panel (``table`` its rows, with
    ``cut`` and ``sender``; ``arch`` the panel's architecture, "resnet18" for the base panel, else
    ``cfg`` is an :class:`ArchitecturesConfig`):
    every claim, decided or not, whichever way it went (the self-stitch, the reference subtracted,
    is retrained too and may move either way), at the cuts that decide it (:func:`deciding_cuts`;
    the first cut, or the last two, for the random-bottom claims), with ``cfg``'s networks and
    recipe for that panel and the rule that judged the claim."""
    by = {name: g.set_index("cut") for name, g in table.groupby("sender", sort=False)}
    base = arch == "resnet18"
    receiver = cfg.model(cfg.seeds[0]) if base else cfg.arch_model(arch, cfg.seeds[0])
    recipe = cfg.recipe() if base else cfg.arch_recipe(arch)

    def sender_spec(sender: str) -> network.ModelSpec:
        if not base:  # the other architectures' claims read the trained sender only
            return cfg.arch_model(arch, cfg.seeds[1])
        return cfg.model(cfg.seeds[1]) if sender == TRAINED else cfg.model(cfg.random_seed, trained=False)

    out = []
    for c in claims:
        # B-F5 carries B-F2A's random-bottom claim under its own key
        key = "connected" if c.key.startswith("connected") else _SAME_CLAIM.get(c.key, c.key)
        if key not in _LENGTH_CHECKS:
            continue
        sender, where, bound = _LENGTH_CHECKS[key]
        if sender not in by:  # every verdict gets the control, decided or not (issue 46)
            continue
        g = by[sender]
        beyond = beyond_self(g, by[SELF])
        cuts = {"worst": deciding_cuts(beyond, 100 * (bound or 0)) if where == "worst" else None,
                "first": [g.index[0]], "last two": list(g.index[-2:]), "all": list(g.index)}[where]
        part = LengthPart(receiver=receiver, receiver_name="receiver", cells=((sender, tuple(cuts)),),
                          sender_specs={sender: sender_spec(sender)})
        out.append(LengthCheck(claim=c.key, recipe=recipe, table=table,
                               rejudge=_rejudge_connectivity(key) if base else _rejudge_arch(arch),
                               bound=None if bound is None else 100 * bound, parts=(part,),
                               panel=ARCHS.get(arch, "ResNet-18")))
    return out


def training_length_control(cfg: ArchitecturesConfig, base: tuple[pd.DataFrame, list[ClaimSpec]],
                            archs: tuple[pd.DataFrame, list[ClaimSpec]] | None = None, *, device=None, store=None,
                            progress: bool = True) -> pd.DataFrame:
    """Retrain, with :data:`LONGER` times the epochs, the stitches that decide each claim (see
    :func:`_length_checks`) and the receiver's self-stitches at the same cuts, and attach to that
    claim the control that its verdict survives (see :func:`retrain_longer`). ``base``: B-F2A's
    table and claims (or B-F5's: its copy of B-F2A's random-bottom claim); ``archs``: the other
    architectures' table (with ``arch``) and claims. Returns one row per check and sender."""
    checks = _length_checks(cfg, *base)
    if archs is not None:
        arch_table, arch_claims = archs
        for arch, g in arch_table.groupby("arch", sort=False):
            tag = arch.replace(".", "_")
            checks += _length_checks(cfg, g, [c for c in arch_claims if c.key == f"connected_{tag}"], arch)
    return retrain_longer(checks, base[1], *([archs[1]] if archs else []), device=device, store=store,
                          progress=progress)


def _rejudge_connectivity(key: str) -> Callable[[pd.DataFrame], Criterion]:
    if key == "same_trend":  # B-F5's: the trend of the random bottom's penalty against its CKA
        from .f4_f5 import rejudge_trend

        return rejudge_trend
    return lambda t: next(c for c in connectivity_claims(t)[1] if c.key == key).criterion


def _rejudge_arch(arch: str) -> Callable[[pd.DataFrame], Criterion]:
    return lambda t: _arch_claim(t, arch)[1].criterion
