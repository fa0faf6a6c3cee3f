"""The figure registry: every page of the book in one place, in the catalogue's order.

A :class:`Figure` names a page (its catalogue ID and title), the experiment module and the presets
dictionary (scale -> config) its notebook resolves its parameters from, the scales it offers, what
it shows (a figure or a table), whether it judges claims, and the data sets it reads. This is the
one registry (issue 48): the catalogue (:mod:`stitchkit.book.catalogue`), the command line's checks,
the book's contents and the tests are derived from :data:`FIGURES`, and a figure's config class is
its presets' type. A new figure is one line here, its module's presets, its notebook and its test.

Plain data: listing the figures, their titles and their scales imports nothing heavy; only
:func:`presets` and :func:`config_class` import the figure's experiment module (and torch).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
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
class Figure:
    id: str  # catalogue ID: the part's prefix, then the paper's figure or table ("B-F2A")
    title: str  # what it shows, one line
    module: str  # experiments module holding its presets (under stitchkit.experiments)
    presets: str  # name of the presets dict there (scale -> config; a figure may offer fewer scales)
    kind: str = "figure"  # figure | table (its result is a table, without a figure)
    claims: bool = True  # False: a page that shows data or summarises other pages, and judges nothing
    datasets: tuple[str, ...] | None = None  # None: its part's (PART_DATASETS)
    # fields of a config it shares with other figures that its notebook never reads: left out of its
    # parameters cell (stitchkit sync) and refused on the command line (issue 66: S-4.2 took noise_per_class)
    unused: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"figure {self.id}: kind must be one of {', '.join(KINDS)}, got {self.kind!r}")
        if self.prefix not in PART_DATASETS:
            raise ValueError(f"figure {self.id}: unknown part prefix {self.prefix!r}; valid: "
                             f"{', '.join(PART_DATASETS)}")

    @property
    def prefix(self) -> str:
        return self.id.split("-", 1)[0]

    @property
    def scales(self) -> tuple[str, ...]:
        """The scales it offers, in :data:`SCALES` order: the required ones and each optional scale
        that lists it (:data:`OPTIONAL`)."""
        return tuple(s for s in SCALES if s in REQUIRED_SCALES or self.id in OPTIONAL.get(s, ()))

    @property
    def needs(self) -> tuple[str, ...]:
        """The data sets its notebook reads."""
        return self.datasets if self.datasets is not None else PART_DATASETS[self.prefix]


# The figures offering a scale beyond the required ones (scale -> IDs): a ``gpu`` preset comes figure
# by figure. A table keyed by scale, so that a run at smoke or demo does not depend on it (issue 47:
# adding a gpu page leaves the demo pages current; see stitchkit.registry.staleness).
OPTIONAL: dict[str, tuple[str, ...]] = {
    "gpu": ("B-F2A", "B-F2B", "B-F2C", "B-F3A", "B-F3B", "B-F3C", "B-F4", "B-F5", "B-F6", "B-F7", "B-F8", "B-F9",
            "B-T1", "H-F2", "H-F4", "H-T1", "H-T2", "H-F5", "H-F6", "S-F1A", "S-F1B", "S-F1C", "S-4.2", "S-FC5", "S-TC1",
            "S-FC6", "J-T1", "J-F1", "J-F2", "J-T2", "J-T3", "X-1", "X-2", "X-3", "X-4"),
}

_NO_NOISE = ("noise_epochs", "noise_per_class")
FIGURES: tuple[Figure, ...] = (
    Figure("B-F2A", "Stitching connectivity across seeds, with a random bottom as reference", "bansal.f2a", "PRESETS_F2A"),
    Figure("B-F2B",
           "Supervised vs self-supervised bottoms on ImageNet (out of reach offline; B-F6 is its CIFAR stand-in)",
           "bansal.tables", "PRESETS_F2B", kind="table", claims=False),
    Figure("B-F2C", "More samples: bottoms trained on 5K to 50K images", "bansal.f2c_f3ab", "PRESETS_F2C"),
    Figure("B-F3A", "Label distribution: objects-vs-animals and random labels", "bansal.f2c_f3ab", "PRESETS_F3A"),
    Figure("B-F3B", "Training time: bottoms at epochs 40, 80 and 160", "bansal.f2c_f3ab", "PRESETS_F3B"),
    Figure("B-F3C", "Width: x0.25, x1 and x2 stitched into each other", "bansal.f3c_f6", "PRESETS_F3C"),
    Figure("B-F4", "Stitch kernel size ablation", "bansal.f4_f5", "PRESETS_F4"),
    Figure("B-F5", "Random vs trained bottoms: stitching and CKA", "bansal.f4_f5", "PRESETS_F5"),
    Figure("B-F6", "SimCLR vs end-to-end training on CIFAR-10", "bansal.f3c_f6", "PRESETS_F6"),
    Figure("B-F7", "CKA for \"more is better\"", "bansal.f7", "PRESETS_F7"),
    Figure("B-F8", "Fine-tuning vs stitching", "bansal.f8", "PRESETS_F8"),
    Figure("B-F9", "Freeze training", "bansal.f9", "PRESETS_F9"),
    Figure("B-T1", "CKA vs stitching: the qualitative table", "bansal.tables", "PRESETS_T1", kind="table", claims=False),
    Figure("H-F2", "All-layer stitching of 16 small ResNets: the triangle", "hernandez.all_layers", "PRESETS_F2"),
    Figure("H-F4", "ResNet-18 vs ResNet-34", "hernandez.all_layers", "PRESETS_F4"),
    Figure("H-T1", "MSE sanity table, corresponding layers", "hernandez.mse", "PRESETS_T1", kind="table"),
    Figure("H-T2", "MSE sanity table, all layer pairs", "hernandez.mse", "PRESETS_T2", kind="table"),
    Figure("H-F5", "Accuracy of similarity-trained stitches", "hernandez.sim_trained", "PRESETS_F5"),
    Figure("H-F6", "Images generated by stitching into the first layer", "hernandez.images", "PRESETS_F6"),
    Figure("S-F1A", "Example images of the colour-MNIST data sets", "smith.examples", "PRESETS_F1A", claims=False),
    # the Smith pages without the clustered-noise sender (S-FC5's) share its config: its two fields are not theirs
    Figure("S-F1B", "Senders stitched into the Digit receiver", "smith.config", "PRESETS", unused=_NO_NOISE),
    Figure("S-F1C", "Numerical rank after the stitch", "smith.config", "PRESETS", unused=_NO_NOISE),
    Figure("S-4.2", "Colour-only stitched into greyscale MNIST", "smith.config", "PRESETS", unused=_NO_NOISE),
    Figure("S-FC5", "Colour-only and clustered-noise senders", "smith.config", "PRESETS"),
    Figure("S-TC1", "Base accuracy, Digit as receiver and as sender", "smith.config", "PRESETS", unused=_NO_NOISE),
    Figure("S-FC6", "VGG19 with clustered noise", "smith.vgg", "PRESETS_FC6"),
    Figure("J-T1", "Layer identification by similarity measures", "balogh.identification", "PRESETS_T1"),
    Figure("J-F1", "Intra-network TLM similarity, OOD AUROC and energy histograms", "balogh.detectors", "PRESETS_OOD"),
    Figure("J-F2", "TLM and DM, intra- and inter-network: similarity and OOD matrices", "balogh.detectors", "PRESETS_OOD"),
    Figure("J-T2", "Sensitivity test", "balogh.ding", "PRESETS_T2"),
    Figure("J-T3", "Specificity test", "balogh.ding", "PRESETS_T3"),
    Figure("X-1", "Agreement of the similarity notions over layer pairs, zoo by zoo", "across", "PRESETS_X1"),
    Figure("X-2", "Layer identification by every notion, zoo by zoo", "across_identify", "PRESETS_X2"),
    Figure("X-3", "Each paper's conclusion on another paper's networks", "across_conclusions", "PRESETS_X3"),
    Figure("X-4", "Your own networks: stitching two models loaded as a user loads them", "across_own", "PRESETS_X4",
           claims=False, datasets=("cifar10",)),
)
BY_ID = {f.id: f for f in FIGURES}
if len(BY_ID) != len(FIGURES):
    raise ValueError("a figure ID is registered twice")


def _check_optional() -> None:
    optional = [s for s in SCALES if s not in REQUIRED_SCALES]
    for scale, ids in OPTIONAL.items():
        unknown = sorted(set(ids) - set(BY_ID))
        if scale not in optional or unknown:
            raise ValueError(f"OPTIONAL[{scale!r}] must name an optional scale ({', '.join(optional)}) and registered "
                             f"figures; unknown: {', '.join(unknown) or 'none'}")


_check_optional()



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
    found = getattr(importlib.import_module(f"stitchkit.experiments.{fig.module}"), fig.presets)
    return {s: found[s] for s in fig.scales}


def config_class(figure_id: str) -> type | None:
    """The config dataclass of figure ``figure_id`` (its presets' type), or None if not registered."""
    found = presets(figure_id)
    return type(found["demo"]) if found is not None else None


__all__ = ["BY_ID", "FIGURES", "Figure", "KINDS", "OPTIONAL", "PART_DATASETS", "REQUIRED_SCALES", "SCALES", "config_class",
           "presets", "scales_of"]
