"""Hernandez et al. 2022, H-F6: stitches from a network's layers 0..k into the receiver's input
generate images; their likeness to the originals over depth, the claim that they lose
granularity (with its training-length control), and the figure of generated images.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch

from ...data.datasets import DataSpec
from ...networks import network, zoo
from ...registry.scales import derive_presets, param
from ...stitching.grid import stitch_grid
from ...stitching.grid_spec import LONGER, Net, StitchRecipe
from ...stitching.longer import length_control
from ...verdicts import controls, noise
from ...verdicts.claims import ClaimSpec
from ...verdicts.noise import Estimate
from ...verdicts.results import Control, at_most
from .all_layers import PRESETS_F2, GridConfig, block_index, display_name
from .judging import NO_IMAGES, diagonal_self_stitch_control, retrained_longer, self_gain_numbers


@dataclass(frozen=True)
class ImagesConfig(GridConfig):
    """H-F6: a network's layers 0..k stitched into the input of a network (the stitch makes an image)."""

    sender_arch: str = param("r2222", "the sender network (its layers 0..max_layer)")
    receiver_arch: str = param("r2222", "the receiver network (stitched at its input)")
    max_layer: int = param(5, "the deepest sender layer (paper 5: the stem and blocks 1-5)", ge=0)
    show_images: int = param(8, "test images shown per layer", ge=1, le=64)
    score_images: int = param(1000, "test images for the similarity of generated to original images", ge=10,
                              le=10_000)


# H-F6 stitches the stem and blocks 1..max_layer (the paper's layers 0-5), whatever H-F2's demo cuts.
PRESETS_F6 = derive_presets(ImagesConfig, PRESETS_F2,  # gpu too: offered where the registry lists the figure
                            {"smoke": {"sender_arch": "r1111", "receiver_arch": "r1111", "max_layer": 2,
                                       "score_images": 200}}, drop=("cut_at",))
GRANULARITY_MAX_RHO = -0.5  # "images lose granularity with depth": Spearman rho(layer, similarity) at most this


class LayerScores(dict):
    """Per sender layer, the mean Pearson correlation of the generated with the original images
    (a dict layer -> float), with the per-image correlations in ``per_image`` (layer -> (n,)
    float64 array, the same ``score_images`` test images at every layer) for the bootstrap."""

    def __init__(self, means: dict[int, float], per_image: dict[int, np.ndarray] | None = None) -> None:
        super().__init__(means)
        self.per_image = per_image or {}


def _image_setup(cfg: ImagesConfig, *, device=None, store=None, progress: bool = True) -> dict:
    """What generating images needs: the networks, the cuts (stem and blocks 1..max_layer), the
    shown and scored test images, their originals in [0, 1] and the receiver's normalisation."""
    from ...data.batches import NORMALISATION
    from ...data.datasets import test_split

    for a in (cfg.sender_arch, cfg.receiver_arch):
        if a not in zoo.HERNANDEZ_ARCHS:
            raise ValueError(f"unknown architecture {a!r}; valid: {', '.join(zoo.HERNANDEZ_ARCHS)}")
    sender = Net(display_name(cfg.sender_arch), cfg.model(cfg.sender_arch))
    receiver = Net(display_name(cfg.receiver_arch), cfg.model(cfg.receiver_arch))
    cuts = cfg.cuts(sender.spec)
    if cfg.max_layer >= len(cuts):
        raise ValueError(f"max_layer {cfg.max_layer} is beyond {sender.name}'s {len(cuts) - 1} blocks")
    data = DataSpec("cifar10")
    test = test_split(data, cfg.recipe().test_size, cfg.recipe().subset_seed)
    # shown: one image per class in turn; scored: the first images of the (stratified) test subset
    per_class = [torch.nonzero(test.labels == c).flatten() for c in range(int(test.labels.max()) + 1)]
    shown = torch.stack([per_class[k % len(per_class)][k // len(per_class)] for k in range(cfg.show_images)])
    scored = torch.arange(min(cfg.score_images, len(test)))
    images = test.subset(torch.cat([shown, scored]))
    mean, std = (torch.tensor(v).view(1, -1, 1, 1) for v in NORMALISATION[receiver.spec.normalisation])
    sender.model, _ = network.load_or_train(sender.spec, device=device, store=store, progress=progress)
    return {"sender": sender, "receiver": receiver, "cuts": cuts[:cfg.max_layer + 1], "data": data,
            "images": images, "original": images.images.float() / 255, "mean": mean, "std": std}


def _generated(setup: dict, cfg: ImagesConfig, recipe: StitchRecipe, *, device=None,
               store=None) -> tuple[dict[int, torch.Tensor], LayerScores]:
    """The stitches of ``recipe`` from each sender cut into the input (read from the store):
    per layer the first ``show_images`` generated images and the per-image Pearson correlation
    of the generated with the original image over the scored images."""
    from ...networks.models import INPUT
    from ...stitching import stitches
    from ...stitching.grid import load_stitched

    s, images, original = setup["sender"], setup["images"], setup["original"]
    generated, per_image = {}, {}
    for cut in setup["cuts"]:
        stitched, _ = load_stitched(s, setup["receiver"], cut, INPUT, recipe, setup["data"], device=device,
                                    store=store)
        h = stitches.activations(s.model, cut, images, normalisation=s.spec.normalisation, device=device,
                                  precision="fp32")
        with torch.no_grad():
            img = torch.cat([stitched.stitch.eval()(b) for b in h.split(500)]).float().cpu() * setup["std"]
        img = (img + setup["mean"]).clamp(0, 1)
        generated[block_index(cut)] = img[:cfg.show_images]
        gen, orig = img[cfg.show_images:], original[cfg.show_images:]
        a = (gen - gen.mean((1, 2, 3), keepdim=True)).flatten(1)
        b = (orig - orig.mean((1, 2, 3), keepdim=True)).flatten(1)
        r = (a * b).sum(1) / (a.norm(dim=1) * b.norm(dim=1)).clamp_min(1e-12)  # (n_scored,)
        per_image[block_index(cut)] = r.double().numpy()
    return generated, LayerScores({k: float(v.mean()) for k, v in per_image.items()}, per_image)


def generate(cfg: ImagesConfig, *, device=None, store=None, progress: bool = True):
    """Train (or read) the stitches from sender layers 0..max_layer into the receiver's input;
    returns the grid table (with layer ``i``), the generated images per layer for the first
    ``show_images`` test images (in [0, 1]), those originals, and per layer the mean Pearson
    correlation between generated and original image over ``score_images`` test images (a
    :class:`LayerScores`, which keeps the per-image correlations)."""
    from ...networks.models import INPUT

    setup = _image_setup(cfg, device=device, store=store, progress=progress)
    table = stitch_grid([setup["sender"]], [setup["receiver"]], [(c, INPUT) for c in setup["cuts"]], cfg.recipe(),
                        setup["data"], device=device, store=store, progress=progress)
    table["i"] = [block_index(c) for c in table.cut_i]
    generated, corr = _generated(setup, cfg, cfg.recipe(), device=device, store=store)
    return table, generated, setup["original"][:cfg.show_images], corr


def images_self_stitches(cfg: ImagesConfig, *, device=None, store=None, progress: bool = True) -> pd.DataFrame:
    """The positive control's stitches: the receiver stitched into itself at each of the sender
    layers the page stitches (stem and blocks 1..max_layer), where an exact stitch exists, with
    the page's own stitch recipe and length (H-F2's; the cells H-F2 also stitches are read from
    its cache). A grid table with kind 'trained' and layers i = j."""
    setup = _image_setup(cfg, device=device, store=store, progress=progress)
    rx = setup["receiver"]
    me = Net(rx.name, rx.spec)
    rx_cuts = cfg.cuts(rx.spec)
    cuts = [c for c in setup["cuts"] if c in rx_cuts]
    t = stitch_grid([me], [me], [(c, c) for c in cuts], cfg.recipe(), setup["data"], device=device, store=store,
                    progress=progress)
    return t.assign(kind="trained", i=[block_index(c) for c in t.cut_i], j=[block_index(c) for c in t.cut_j])


def images_longer(table: pd.DataFrame, cfg: ImagesConfig, *, device=None, store=None,
                  progress: bool = True) -> pd.DataFrame:
    """H-F6's training-length control: all its stitches into the input retrained with
    :data:`LONGER` times the epochs (see :func:`longer_sample`), one row per sender layer: the
    accuracies, and the mean correlation of the generated with the original images at 1x and at
    the longer length, on which :func:`images_summary` re-judges the claim (per-image
    correlations of the longer stitches in ``attrs["per_image"]``). (A sample of the first,
    middle and last layer would save half the time, but at `demo` (width-8 networks, before
    2026-12-07) it disagreed with the full set: mean gain 2.2 points against 1.07, the layer-5
    stitch gaining 4.4; the control keeps every layer.)"""
    setup = _image_setup(cfg, device=device, store=store, progress=progress)
    out = retrained_longer(setup["sender"], setup["receiver"], list(zip(table.cut_i, table.cut_j)), cfg, table,
                           device=device, store=store, progress=progress)
    _, base = _generated(setup, cfg, cfg.recipe(), device=device, store=store)
    _, longer = _generated(setup, cfg, cfg.recipe().longer(), device=device, store=store)
    out = out.assign(i=[block_index(c) for c in out.cut_i])
    out["correlation (grid)"] = [base[k] for k in out.i]
    out[f"correlation ({LONGER}x)"] = [longer[k] for k in out.i]
    out = out[["i", "grid (%)", f"{LONGER}x epochs (%)", "gain", "correlation (grid)", f"correlation ({LONGER}x)"]]
    out.attrs["per_image"] = longer.per_image
    return out


def _rho_estimate(corr: dict[int, float]) -> Estimate:
    """Spearman ρ between the sender layer and the mean correlation of the generated with the
    original images, with a 95% bootstrap interval over the scored test images (the same
    resample at every layer) where the per-image correlations are kept."""
    from scipy.stats import spearmanr

    layers = sorted(corr)
    if len(layers) < 3:
        raise ValueError(f"a rank correlation over {len(layers)} layers says nothing: set max_layer to 2 or more")
    per = getattr(corr, "per_image", None)
    if not per:
        return noise.exact(spearmanr(layers, [corr[k] for k in layers]).statistic, why=NO_IMAGES)
    x = np.stack([per[k] for k in layers], axis=1)  # (n_scored, layers)
    e = noise.bootstrap(lambda idx: spearmanr(layers, x[idx].mean(0)).statistic, len(x),
                        name="H-F6 scored test images")
    if e.low == e.high == e.value:  # no resample of the images moves the ranking: say so, and what is not in it
        return noise.exact(e.value, n_test=e.n_test, why=RANK_STABLE)
    return e


# H-F6's stated reason for a zero-width ρ (issue 46's noise control asks for one)
RANK_STABLE = ("rank correlation over one network's layers: every bootstrap resample of the scored test images gives "
               "this value (one network: the variance between networks is not in it)")


def images_summary(table: pd.DataFrame, corr: dict[int, float], longer: pd.DataFrame | None = None, *,
                   self_table: pd.DataFrame | None = None) -> tuple[dict, list[ClaimSpec]]:
    """H-F6's numbers and claim, judged on the interval of Spearman ρ (:func:`_rho_estimate`).
    Kind ``stitch_other`` (a statistic of trained stitches' outputs): the positive control, the
    receiver stitched into itself at the stitched layers (``self_table``, from
    :func:`images_self_stitches`; a failed control where absent), and with ``longer`` (:func:`images_longer`)
    the training-length control: the claim re-judged on the images of the stitches trained
    :data:`LONGER` times longer must give the same result."""
    layers = sorted(corr)
    rho = _rho_estimate(corr)
    numbers = {"granularity_rho": rho.value, "granularity_rho_low": rho.low, "granularity_rho_high": rho.high,
               **{f"similarity_layer{k}": v for k, v in corr.items()},
               **{f"accuracy_layer{r.i}": 100 * r.accuracy for r in table.itertuples()},
               "receiver_accuracy": 100 * table.receiver_accuracy.iloc[0]}
    what = "Spearman ρ between the layer and the generated images' mean Pearson correlation with the originals"
    criterion = at_most(rho, GRANULARITY_MAX_RHO, what, unit="")
    length = []
    if longer is not None:
        numbers["longer_gain_mean"] = float(longer.gain.mean())
        numbers["longer_gain_max"] = float(longer.gain.max())
        col = f"correlation ({LONGER}x)"
        long_corr = LayerScores(dict(zip(longer.i, longer[col])), longer.attrs.get("per_image"))
        long_rho = _rho_estimate(long_corr)
        numbers["granularity_rho_longer"] = long_rho.value
        length = [length_control(
            criterion, at_most(long_rho, GRANULARITY_MAX_RHO, what, unit=""),
            f"ρ re-judged on the images of every layer's stitch retrained at {LONGER}x the epochs")]
    if self_table is not None and len(self_table):
        positive = diagonal_self_stitch_control(self_table)
        numbers.update(self_gain_numbers(self_table))
    else:
        positive = Control("the receiver stitched into itself at the stitched layers (an exact stitch exists): not "
                           "run, so nothing vouches for the stitch recipe",
                           f"largest self-penalty ≤ {controls.POSITIVE_BOUND:g} points", "not run", False, None,
                           controls.POSITIVE)
    claims = [ClaimSpec(
        key="granularity", text="Images generated by stitching deeper layers into the input lose granularity",
        criterion=criterion, paper="generated images lose granularity with depth (Fig. 6)",
        ours=f"ρ = {rho.text(2)}; correlation " + ", ".join(f"{corr[k]:.2f}" for k in layers) + f" for layers "
             f"{layers[0]}-{layers[-1]}",
        controls=[positive, *length], kind="stitch_other")]
    return numbers, claims


def plot_images(generated: dict[int, torch.Tensor], original: torch.Tensor, table: pd.DataFrame, *, title: str = ""):
    """Rows: the original test images, then the images generated from each sender layer, with the
    stitched network's accuracy beside each row."""
    import matplotlib.pyplot as plt

    from ...pagekit.plotting import max_width

    layers = sorted(generated)
    n = original.shape[0]
    # an image 1.1 in wide, or less where the row labels' 8 points would show under 9 px in the book (issue 64)
    side = min(1.1, (max_width(8) - 1.8) / n)
    fig, axes = plt.subplots(len(layers) + 1, n, figsize=(side * n + 1.6, (side + 0.05) * (len(layers) + 1) + 0.6),
                             squeeze=False, layout="constrained")
    acc = {r.i: r.accuracy for r in table.itertuples()}
    rows = [("original", original)] + [(f"layer {k}\n{100 * acc[k]:.0f}% acc.", generated[k]) for k in layers]
    for r, (label, imgs) in enumerate(rows):
        for c in range(n):
            ax = axes[r][c]
            ax.imshow(imgs[c].permute(1, 2, 0).numpy(), interpolation="nearest")
            ax.set_xticks([])
            ax.set_yticks([])
        axes[r][0].set_ylabel(label, fontsize=8, rotation=0, ha="right", va="center")
    if title:
        fig.suptitle(title, fontsize=10)
    return fig


def images_table(table: pd.DataFrame, corr: dict[int, float]) -> pd.DataFrame:
    return pd.DataFrame({"stitched accuracy (%)": {r.i: round(100 * r.accuracy, 2) for r in table.itertuples()},
                         "correlation with the original": {k: round(v, 3) for k, v in corr.items()}}).rename_axis(
        "sender layer")
