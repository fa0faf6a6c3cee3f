"""Balogh & Jelasity: what every figure shares. The measures' and architectures' display names,
J-T1's networks and stitch recipe (:class:`IdentConfig`, the base of J-T2's, J-T3's, J-F1's and
J-F2's configs; J-T1's presets are in :mod:`.identification`), and the grid helpers several
figures use: the direct-matching grid (J-T1, J-T3), per-image accuracies on the bootstrap
resamples (J-T1, J-F1), the TLM controls (J-T1, J-F1, J-F2) and TLM stitches retrained longer for
the training-length controls (J-T1, J-F1, J-F2)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ...data.datasets import DataSpec
from ...networks import network, zoo
from ...networks.train import TrainConfig
from ...pagekit.display import accuracy_table
from ...registry.scales import MAX_TRAIN_IMAGES, MIN_TEST_IMAGES, param
from ...stitching.grid import stitch_grid
from ...stitching.grid_spec import Net, StitchRecipe
from ...stitching.longer import Cells, replace_cells, retrain
from ...verdicts import controls, noise
from ...verdicts.results import Control

NAMES = {"pwcca": "PWCCA", "opd": "OPD", "lcka": "LCKA", "tlm": "TLM", "dm_struct": "DM (struct.)",
         "dm_func": "DM (func.)"}
ARCH_NAMES = {"resnet18": "ResNet-18", "vit": "ViT-Ti"}

# Criteria of the TLM controls, fixed before any run.
TLM_MOVED_MIN = 1.0  # control: TLM trained enough to matter: mean gain over its DM start off the diagonal (points)


@dataclass(frozen=True)
class IdentConfig:
    """J-T1: layer identification within and between networks by six similarity measures."""

    archs: tuple[str, ...] = param(("resnet18", "vit"), "architectures (resnet18, vit)",
                                   items={"choices": zoo.BALOGH_ARCHS}, unique=True)
    networks: int = param(10, "networks per architecture, seeds 0 .. n-1 (paper 10)", ge=2)
    model_epochs: float | None = param(None, "passes over the training set per network (paper 100); None: the "
                                       "recipe's", ge=0)
    measure_images: int = param(1000, "test images of the structural measures (paper 1,000)", ge=10, le=10_000)
    test_size: int | None = param(None, "test images of every accuracy; None: all 10k", ge=MIN_TEST_IMAGES, le=10_000)
    dm_images: int = param(100, "training images of the direct-matching fit (K in the paper: 100)", ge=1, le=MAX_TRAIN_IMAGES)
    tlm_epochs: float = param(30.0, "passes of task-loss matching over its training images (paper 30)", gt=0)
    tlm_train_size: int | None = param(None, "training images of each TLM stitch; None: all 50k", ge=1, le=50_000)
    tlm_batch: int = param(256, "images per TLM step (paper 256)", ge=1, le=MAX_TRAIN_IMAGES)
    tlm_inter_pairs: int | None = param(None, "ordered pairs of different networks stitched by TLM, the first k of "
                                        "(0,1), (1,0), (0,2), (2,0), ...; None: all", ge=0)

    resnet18: zoo.Recipe = zoo.recipe_field("the ResNet-18s' recipe (zoo.BALOGH_RESNET18 at the preset's scale)")
    vit: zoo.Recipe = zoo.recipe_field("the ViTs' recipe (zoo.BALOGH_VIT at the preset's scale)")

    # the recipes the page's length parameter overrides (pagekit.page.held_recipes), as nets passes it
    RECIPE_OVERRIDES = {"model_epochs": ("resnet18", "vit")}

    def net_recipe(self, arch: str) -> zoo.Recipe:
        """The recipe of ``arch``'s networks (``resnet18`` or ``vit``: the field of that name)."""
        if arch not in zoo.BALOGH_ARCHS:
            raise ValueError(f"unknown architecture {arch!r}; valid: {', '.join(zoo.BALOGH_ARCHS)}")
        return getattr(self, arch)

    def nets(self, arch: str) -> list[Net]:
        """``arch``'s networks, seeds 0 .. ``networks`` - 1, by the recipe this config holds."""
        return [Net(f"{ARCH_NAMES[arch]} #{s}", zoo.balogh_model(self.net_recipe(arch), s, epochs=self.model_epochs))
                for s in range(self.networks)]

    def layers(self, net: Net) -> list[str]:
        return [c for c in network.build(net.spec, num_classes=10, in_channels=3).cuts if c.startswith("block")]

    def recipe(self, tlm: bool) -> StitchRecipe:
        train = TrainConfig(epochs=self.tlm_epochs if tlm else 0.0, batch_size=self.tlm_batch, optimizer="adam",
                            lr=1e-3, weight_decay=1e-5, schedule="constant", augment=False, seed=0)
        return StitchRecipe(kind="resize_conv", init="dm", dm_images=self.dm_images, frozen_bn="eval", train=train,
                            train_size=self.tlm_train_size if tlm else None, test_size=self.test_size)

    def inter_pairs(self) -> list[tuple[int, int]]:
        pairs = [p for a in range(self.networks) for b in range(a + 1, self.networks) for p in ((a, b), (b, a))]
        return pairs if self.tlm_inter_pairs is None else pairs[:self.tlm_inter_pairs]


# --------------------------------------------------------------------------------------------
# The grids' accuracies and the TLM controls


def dm_grid(cfg: IdentConfig, nets: list[Net], layers: list[str], *, device, store, progress: bool) -> pd.DataFrame:
    """Direct matching between every ordered pair of ``nets`` at every layer pair."""
    return stitch_grid(nets, nets, [(i, j) for i in layers for j in layers], cfg.recipe(tlm=False),
                       DataSpec("cifar10"), device=device, store=store, progress=progress)


def network_accuracy(grid: pd.DataFrame) -> dict[str, float]:
    return grid.drop_duplicates("receiver").set_index("receiver").receiver_accuracy.to_dict()


def accuracy_reps(table: pd.DataFrame, col: str, name: str = "test") -> np.ndarray:
    """(R+1, rows): the accuracy behind the per-image column ``col`` ("correct",
    "receiver_correct", "dm_correct") of every row of a grid table, on the full test set (row 0)
    and on each of its shared bootstrap resamples (:mod:`stitchkit.verdicts.noise`; the name "test" is the
    one :func:`stitchkit.verdicts.noise.bootstrap_table` uses, so every quantity on the grid's test images
    shares one resample)."""
    arrays = list(table[col]) if col in table else []
    if any(a is None for a in arrays):
        raise ValueError(f"column {col!r} lacks per-image results in some rows: the stitches were made before "
                         "per-image results were kept; clear their cache entries and re-run")
    if not arrays:
        return np.zeros((noise.RESAMPLES + 1, 0))
    rs = noise.resampler(len(arrays[0]), name)
    out = np.empty((rs.resamples + 1, len(arrays)))
    for s in range(0, len(arrays), 256):  # bounded memory at paper scale (thousands of rows x 10k images)
        out[:, s:s + 256] = rs.means(np.stack([np.asarray(a, dtype=np.float64) for a in arrays[s:s + 256]], axis=1))
    return out


def n_test_images(table: pd.DataFrame, col: str = "correct") -> int:
    return int(len(next(a for a in table[col] if a is not None)))


def _tlm_self(tlm: pd.DataFrame) -> pd.DataFrame:
    return tlm[(tlm.sender == tlm.receiver) & (tlm.cut_i == tlm.cut_j)]


def tlm_gain_numbers(tlm: pd.DataFrame, prefix: str) -> dict[str, float]:
    """The TLM self-stitch gain of the TLM grid table ``tlm``, reported and gated nowhere
    (:func:`stitchkit.verdicts.controls.gain_numbers`): ``prefix_gain`` the largest gain over the
    self-stitches (points, on all test images) and ``prefix_worst`` the largest loss. TLM starts
    from the exact map and can move identical layers off it (Balogh & Jelasity), adding accuracy
    on an under-trained receiver."""
    own = _tlm_self(tlm)
    return controls.gain_numbers(prefix, 100 * (own.receiver_accuracy - own.accuracy).to_numpy(dtype=float))


def length_not_run(what: str) -> Control:
    """The training-length control of a stitching verdict whose longer stitches were not given: it
    fails (every stitching verdict, decided or not, needs one: issue 46)."""
    return Control(f"the verdict survives {what}: not run", "the same result at the longer length", "not run", False,
                   None, controls.LENGTH)


def tlm_controls(tlm: pd.DataFrame) -> list[Control]:
    """J-T1's TLM controls (also J-F1's and J-F2's) on the TLM grid table ``tlm``, for the claims
    that are statistics of trained TLM stitches (kind ``stitch_other``) only; the claims on PWCCA,
    OPD, CKA and direct matching (an exact least-squares map) have no trained stitch and get none.
    The positive control (every layer stitched into itself by TLM, which starts from the exact
    map, loses at most :data:`stitchkit.verdicts.controls.POSITIVE_BOUND` points at its worst
    layer, the interval's upper end of the largest self-penalty; Balogh & Jelasity report TLM
    moving identical layers off the identity, so a gain is reported, not gated); and the premise
    that TLM moved off its DM start by at least :data:`TLM_MOVED_MIN` points on average, on its
    interval."""
    own = _tlm_self(tlm)
    off = tlm[tlm.cut_i != tlm.cut_j]
    self_pen = noise.bootstrap_table(own, lambda u: controls.largest(100 * u.penalty), interval="basic")
    gain = noise.bootstrap_table(off, lambda u: 100 * float((u.accuracy - u.dm_accuracy).mean()
                                                            / u.receiver_accuracy.mean()))
    return [controls.reaches_receiver(self_pen, what="each layer stitched into itself by TLM (from its exact DM "
                                                      "start)"),
            controls.premise(gain, TLM_MOVED_MIN, "TLM trained long enough to matter: off the diagonal it gains over "
                             "its direct-matching start", what="mean relative accuracy gain over DM (off-diagonal)")]


# --------------------------------------------------------------------------------------------
# TLM stitches retrained longer (the training-length controls)


def net_index(name: str) -> int:
    """'ResNet-18 #2' -> 2: the network's seed, its index in :meth:`IdentConfig.nets`."""
    return int(name.rsplit("#", 1)[1])


RETRAINED_COLS = ["sender", "receiver", "cut_i", "cut_j", "relative", "accuracy", "correct"]


def tlm_retrained(cfg: IdentConfig, arch: str, cells: list[tuple[str, str, str, str]], *, device=None, store=None,
                  progress: bool = True) -> pd.DataFrame:
    """The TLM stitches ``cells`` (sender name, receiver name, cut_i, cut_j) retrained with
    :data:`LONGER` times ``cfg.tlm_epochs``, everything else the same (from the same DM start;
    :func:`stitchkit.stitching.longer.retrain`, one grid per sender-receiver pair).
    Returns one row per cell: sender, receiver, cut_i, cut_j, the longer stitch's ``relative``
    accuracy (to the receiver's), its ``accuracy`` and its per-image results (``correct``)."""
    nets = cfg.nets(arch)
    pairs = [Cells((nets[net_index(a)],), (nets[net_index(b)],),
                   tuple((c[2], c[3]) for c in cells if (c[0], c[1]) == (a, b)), cfg.recipe(tlm=True), DataSpec("cifar10"))
             for a, b in dict.fromkeys((c[0], c[1]) for c in cells)]
    if not pairs:
        return pd.DataFrame(columns=RETRAINED_COLS)
    t = retrain(pairs, device=device, store=store, progress=progress)
    return t.assign(relative=t.accuracy / t.receiver_accuracy)[RETRAINED_COLS]


def tlm_with_longer(tlm: pd.DataFrame, longer: pd.DataFrame) -> pd.DataFrame:
    """``tlm`` (a grid table) with the cells of ``longer`` (:func:`tlm_retrained`'s rows) replaced
    by their longer stitches (accuracy and per-image results; the receiver is unchanged)."""
    keys = ("sender", "receiver", "cut_i", "cut_j")
    cells = set(zip(*(tlm[k] for k in keys)))
    for cell in zip(*(longer[k] for k in keys)):
        if cell not in cells:
            raise ValueError(f"the longer stitch {cell} (sender, receiver, cut_i, cut_j) is not a cell of the TLM grid; "
                             f"its cells: {', '.join(map(str, sorted(cells)))}")
    out = replace_cells(tlm, longer, keys, ("accuracy", "correct"))
    out["penalty"] = out.receiver_accuracy - out.accuracy
    return out


# --------------------------------------------------------------------------------------------
# Shared by the pages' tables and figures


def title(recipe: zoo.Recipe) -> str:
    """A figure's title: the architecture of ``recipe`` (a Balogh & Jelasity recipe) and its size."""
    if recipe.family == "balogh_resnet18":
        return f"{ARCH_NAMES['resnet18']} (width {recipe.width}) on CIFAR-10"
    return f"{ARCH_NAMES['vit']} (dim {recipe.width}, depth {recipe.depth}) on CIFAR-10"


def architectures_accuracy_table(accuracies: dict[str, dict[str, float]]) -> pd.DataFrame:
    """Test accuracy (%) of every network of every architecture in ``accuracies`` (architecture ->
    {network: test accuracy}, as a page's results hold them), in one table
    (:func:`stitchkit.pagekit.display.accuracy_table`)."""
    return accuracy_table({net: a for nets in accuracies.values() for net, a in nets.items()})


def stacked(draws: list, width: float, height: float):
    """One figure with a row (a sub-figure) per ``(function, keywords)`` in ``draws``, each drawn
    by ``function(**keywords, fig=sub_figure)`` in a row of ``height`` inches: one figure per page
    whatever the number of architectures a run was given."""
    import matplotlib.pyplot as plt

    fig = plt.figure(figsize=(width, height * len(draws)), layout="constrained")
    subs = fig.subfigures(len(draws), 1) if len(draws) > 1 else [fig]
    for sub, (fn, kw) in zip(subs, draws):
        fn(**kw, fig=sub)
    return fig
