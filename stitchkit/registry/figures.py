"""The figure registry: every page of the book in one place, in the catalogue's order.

A :class:`Figure` names a page (its catalogue ID and title), the experiment module that computes and
judges it, the presets dictionary (scale -> config) its notebook resolves its parameters from, what
it shows (a figure or a table), whether it judges claims, the data sets it reads, and what it costs
at each optional scale (:class:`Cost`), which also says that it offers that scale. This is the
one registry (issue 48): the catalogue (:mod:`stitchkit.book.catalogue`), the command line's checks,
the book's contents and the tests are derived from :data:`FIGURES`, and a figure's config class is
its presets' type. A figure's ID is written here and nowhere else in the library: the scales a
figure offers, the order a lent GPU runs pages and its cost there are read from its entry. A new
figure is one entry here, its module (presets, computation, claims), its notebook and its test.

Plain data: listing the figures, their titles and their scales imports nothing heavy; only
:func:`presets` and :func:`config_class` import the figure's experiment module (and torch).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any, Mapping

SCALES = ("smoke", "demo", "gpu", "paper")
REQUIRED_SCALES = ("smoke", "demo", "paper")  # every figure has these; "gpu" comes figure by figure
# the data sets a part's pages read, unless a figure says otherwise (Balogh & Jelasity's OOD pages
# use MNIST as the outlier set; the part across the papers reads every zoo's data, and Smith &
# Marcu's sets come from MNIST)
PART_DATASETS = {"B": ("cifar10",), "H": ("cifar10",), "S": ("mnist",), "J": ("cifar10", "mnist"),
                 "X": ("cifar10", "mnist")}
KINDS = ("figure", "table")


@dataclass(frozen=True)
class Cost:
    """What a page costs at a scale before the book has run it there: device ``seconds`` from an
    empty cache, the part of them spent training ``networks`` (which a batch of several lanes trains
    ahead), and its ``rank`` in the order a lent device runs pages (1 first; None: after the ranked
    ones, in catalogue order). How each estimate was made: :mod:`stitchkit.book.gpu_estimates`. A
    page's first run at the scale replaces its estimate (:func:`stitchkit.book.batch.estimate`)."""
    seconds: float
    networks: float = 0.0
    rank: int | None = None


@dataclass(frozen=True)
class Figure:
    id: str  # catalogue ID: the part's prefix, then the paper's figure or table ("B-F2A")
    title: str  # what it shows, one line
    module: str  # experiments module that computes and judges it (under stitchkit.experiments)
    # its presets (scale -> config; a figure may offer fewer scales): a name in ``module``, or
    # "other.module:NAME" where figures that share one config keep them
    presets: str
    kind: str = "figure"  # figure | table (its result is a table, without a figure)
    claims: bool = True  # False: a page that shows data or summarises other pages, and judges nothing
    datasets: tuple[str, ...] | None = None  # None: its part's (PART_DATASETS)
    # fields of a config it shares with other figures that its notebook never reads: left out of its
    # parameters cell (stitchkit sync) and refused on the command line (issue 66: S-4.2 took noise_per_class)
    unused: tuple[str, ...] = ()
    # optional scale -> its cost there before a run (a dict literal keyed by scale: a smoke or demo
    # run's code hash leaves the gpu row out, stitchkit.registry.staleness); an optional scale is
    # offered exactly where its cost is stated
    costs: Mapping[str, Cost] = field(default_factory=dict, hash=False)

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"figure {self.id}: kind must be one of {', '.join(KINDS)}, got {self.kind!r}")
        optional = [s for s in SCALES if s not in REQUIRED_SCALES]
        if not set(self.costs) <= set(optional):
            raise ValueError(f"figure {self.id}: costs are for the optional scales ({', '.join(optional)}), "
                             f"got {', '.join(self.costs)}")
        if self.prefix not in PART_DATASETS:
            raise ValueError(f"figure {self.id}: unknown part prefix {self.prefix!r}; valid: "
                             f"{', '.join(PART_DATASETS)}")

    @property
    def prefix(self) -> str:
        return self.id.split("-", 1)[0]

    @property
    def scales(self) -> tuple[str, ...]:
        """The scales it offers, in :data:`SCALES` order: the required ones and each optional scale
        it lists (:data:`OPTIONAL`, derived from the figures' costs)."""
        return tuple(s for s in SCALES if s in REQUIRED_SCALES or self.id in OPTIONAL.get(s, ()))

    @property
    def presets_at(self) -> tuple[str, str]:
        """(module, name) of its presets, the module under ``stitchkit.experiments``."""
        module, _, name = self.presets.rpartition(":")
        return module or self.module, name

    @property
    def needs(self) -> tuple[str, ...]:
        """The data sets its notebook reads."""
        return self.datasets if self.datasets is not None else PART_DATASETS[self.prefix]


_NO_NOISE = ("noise_epochs", "noise_per_class")
FIGURES: tuple[Figure, ...] = (
    Figure("B-F2A", "Stitching connectivity across seeds, with a random bottom as reference", "bansal.f2a", "PRESETS_F2A",
           costs={"gpu": Cost(910, 382, rank=2)}),
    Figure("B-F2B",
           "Supervised vs self-supervised bottoms on ImageNet (out of reach offline; B-F6 is its CIFAR stand-in)",
           "bansal.tables", "PRESETS_F2B", kind="table", claims=False,
           costs={"gpu": Cost(10)}),
    Figure("B-F2C", "More samples: bottoms trained on 5K to 50K images", "bansal.f2c_f3ab", "PRESETS_F2C",
           costs={"gpu": Cost(945, 497, rank=3)}),
    Figure("B-F3A", "Label distribution: objects-vs-animals and random labels", "bansal.f2c_f3ab", "PRESETS_F3A",
           costs={"gpu": Cost(950, 552, rank=4)}),
    Figure("B-F3B", "Training time: bottoms at epochs 40, 80 and 160", "bansal.f2c_f3ab", "PRESETS_F3B",
           costs={"gpu": Cost(850, 275)}),
    Figure("B-F3C", "Width: x0.25, x1 and x2 stitched into each other", "bansal.f3c_f6", "PRESETS_F3C",
           costs={"gpu": Cost(850, 345, rank=5)}),
    Figure("B-F4", "Stitch kernel size ablation", "bansal.f4_f5", "PRESETS_F4",
           costs={"gpu": Cost(360, 110)}),
    Figure("B-F5", "Random vs trained bottoms: stitching and CKA", "bansal.f4_f5", "PRESETS_F5",
           costs={"gpu": Cost(400, 110)}),
    Figure("B-F6", "SimCLR vs end-to-end training on CIFAR-10", "bansal.f3c_f6", "PRESETS_F6",
           costs={"gpu": Cost(850, 453, rank=6)}),
    Figure("B-F7", "CKA for \"more is better\"", "bansal.f7", "PRESETS_F7",
           costs={"gpu": Cost(540, 509)}),
    Figure("B-F8", "Fine-tuning vs stitching", "bansal.f8", "PRESETS_F8",
           costs={"gpu": Cost(600, 182, rank=7)}),
    Figure("B-F9", "Freeze training", "bansal.f9", "PRESETS_F9",
           costs={"gpu": Cost(390, 110)}),
    Figure("B-T1", "CKA vs stitching: the qualitative table", "bansal.tables", "PRESETS_T1", kind="table", claims=False,
           costs={"gpu": Cost(10)}),
    Figure("H-F2", "All-layer stitching of 16 small ResNets: the triangle", "hernandez.judging",
           "hernandez.all_layers:PRESETS_F2",
           costs={"gpu": Cost(1400, 133, rank=1)}),
    Figure("H-F4", "ResNet-18 vs ResNet-34", "hernandez.judging",
           "hernandez.all_layers:PRESETS_F4",
           costs={"gpu": Cost(1450, 165, rank=8)}),
    Figure("H-T1", "MSE sanity table, corresponding layers", "hernandez.mse", "PRESETS_T1", kind="table",
           costs={"gpu": Cost(310, 133)}),
    Figure("H-T2", "MSE sanity table, all layer pairs", "hernandez.mse", "PRESETS_T2", kind="table",
           costs={"gpu": Cost(870, 133)}),
    Figure("H-F5", "Accuracy of similarity-trained stitches", "hernandez.sim_trained", "PRESETS_F5",
           costs={"gpu": Cost(2000, 133)}),
    Figure("H-F6", "Images generated by stitching into the first layer", "hernandez.images", "PRESETS_F6",
           costs={"gpu": Cost(280, 73)}),
    Figure("S-F1A", "Example images of the colour-MNIST data sets", "smith.examples", "PRESETS_F1A", claims=False,
           costs={"gpu": Cost(30)}),
    # the Smith pages without the clustered-noise sender (S-FC5's) share its config: its two fields are not theirs
    Figure("S-F1B", "Senders stitched into the Digit receiver", "smith.digit_receiver", "smith.config:PRESETS",
           unused=_NO_NOISE, costs={"gpu": Cost(580, 186)}),
    Figure("S-F1C", "Numerical rank after the stitch", "smith.digit_receiver", "smith.config:PRESETS",
           unused=_NO_NOISE, costs={"gpu": Cost(520, 186)}),
    Figure("S-4.2", "Colour-only stitched into greyscale MNIST", "smith.better_than", "smith.config:PRESETS",
           unused=_NO_NOISE, costs={"gpu": Cost(390, 126, rank=9)}),
    Figure("S-FC5", "Colour-only and clustered-noise senders", "smith.digit_receiver", "smith.config:PRESETS",
           costs={"gpu": Cost(890, 246)}),
    Figure("S-TC1", "Base accuracy, Digit as receiver and as sender", "smith.better_than", "smith.config:PRESETS",
           unused=_NO_NOISE, costs={"gpu": Cost(550, 246)}),
    Figure("S-FC6", "VGG19 with clustered noise", "smith.vgg", "PRESETS_FC6",
           costs={"gpu": Cost(700, 190, rank=10)}),
    Figure("J-T1", "Layer identification by similarity measures", "balogh.identification", "PRESETS_T1",
           costs={"gpu": Cost(2400, 285, rank=11)}),
    Figure("J-F1", "Intra-network TLM similarity, OOD AUROC and energy histograms", "balogh.detectors", "PRESETS_OOD",
           costs={"gpu": Cost(1560, 80, rank=12)}),
    Figure("J-F2", "TLM and DM, intra- and inter-network: similarity and OOD matrices", "balogh.detectors", "PRESETS_OOD",
           costs={"gpu": Cost(3970, 190, rank=13)}),
    Figure("J-T2", "Sensitivity test", "balogh.ding", "PRESETS_T2",
           costs={"gpu": Cost(800, 285)}),
    Figure("J-T3", "Specificity test", "balogh.ding", "PRESETS_T3",
           costs={"gpu": Cost(1100, 285)}),
    Figure("X-1", "Agreement of the similarity notions over layer pairs, zoo by zoo", "across", "PRESETS_X1",
           costs={"gpu": Cost(4400, 363)}),
    Figure("X-2", "Layer identification by every notion, zoo by zoo", "across_identify", "PRESETS_X2",
           costs={"gpu": Cost(4700, 376)}),
    Figure("X-3", "Each paper's conclusion on another paper's networks", "across_conclusions", "PRESETS_X3",
           costs={"gpu": Cost(1800, 536)}),
    Figure("X-4", "Your own networks: stitching two models loaded as a user loads them", "across_own", "PRESETS_X4",
           claims=False, datasets=("cifar10",),
           costs={"gpu": Cost(400, 110)}),
)
BY_ID = {f.id: f for f in FIGURES}
if len(BY_ID) != len(FIGURES):
    raise ValueError("a figure ID is registered twice")


# The figures offering each optional scale (scale -> IDs), derived from their costs: a test may
# narrow it; nothing else writes it.
OPTIONAL: dict[str, tuple[str, ...]] = {
    scale: tuple(f.id for f in FIGURES if scale in f.costs) for scale in SCALES if scale not in REQUIRED_SCALES}


def scales_of(figure_id: str) -> tuple[str, ...]:
    """The scales figure ``figure_id`` offers (plain data; an ID not registered, e.g. a test's
    notebook, has the required ones)."""
    fig = BY_ID.get(figure_id)
    return fig.scales if fig is not None else REQUIRED_SCALES


def presets(figure_id: str) -> Mapping[str, Any] | None:
    """Figure ``figure_id``'s presets (scale -> config) at the scales it offers, from its experiment
    module (imported here, with torch); None for an ID not registered."""
    fig = BY_ID.get(figure_id)
    if fig is None:
        return None
    module, name = fig.presets_at
    found = getattr(importlib.import_module(f"stitchkit.experiments.{module}"), name)
    return {s: found[s] for s in fig.scales}


def config_class(figure_id: str) -> type | None:
    """The config dataclass of figure ``figure_id`` (its presets' type), or None if not registered."""
    found = presets(figure_id)
    return type(found["demo"]) if found is not None else None


__all__ = ["BY_ID", "Cost", "FIGURES", "Figure", "KINDS", "OPTIONAL", "PART_DATASETS", "REQUIRED_SCALES", "SCALES", "config_class",
           "presets", "scales_of"]
