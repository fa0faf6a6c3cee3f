"""Hernandez et al. 2022, H-F2 and H-F4 (H-F5 reads the same grid): the configs and presets of the
all-layer stitching grid, the grid itself (every sender cut into every receiver cut of each
ordered pair, and the untrained controls), the triangle summary per pair, the grid's tables and
heatmaps, and the size of the paper-scale grid.

Recipe (paper Sec. 3 and App. A; catalogue): the 16 small ResNets R_abcd (a..d in {1, 2}
BasicBlocks per stage; R1111 = ResNet-10, R2222 = ResNet-18) with the CIFAR stem, trained on
CIFAR-10 with the CIFAR mean/std, and an untrained copy of each as the control. Every sender
cut i (the stem "0", then each block) is stitched into every receiver cut j: the stitch is a
k x k conv with stride k when the receiver's map is k times smaller, a nearest upsample then a
1x1 conv when it is larger, a 1x1 conv otherwise; no BatchNorm. Stitches train with SGD
(momentum 0.9, lr 0.01, wd 0.01, batch 256, warmup then cosine), 4 epochs at paper scale.
Models train with the same recipe for 40 epochs.

The authors' stitch scheduler (``adjust_learning_rate`` in their code) warms up linearly over
10 epochs while the stitch trains for 4, so its lr rises from 0 to 0.4 x 0.01 and never
decays. The `paper` preset copies that effective schedule (``warmup=2.5``: a warmup 2.5 times
the run's length): with the nominal one (5% warmup to 0.01, then cosine) width-64 stitches
diverge: measured on an H100, R1111 stitched into itself at i = j fell from 89.7% to 44% on
average (training loss at chance). On `demo`'s width-8 networks (until 2026-12-07) the nominal
schedule did not diverge, and `demo` keeps it (H-F2's self-stitch control checks it on each run).
Even with the authors' schedule, 4 of the 14 self-stitches of a paper-scale spot check (R1111,
R2222) fell by 3-66 points, in bf16 and in fp32, and held at a tenth of the learning rate: the
`paper` presets therefore train stitches at lr 0.001 (:data:`PAPER_STITCH_LR`, a stated
deviation), with which all 14 self-stitches stay within half a point.

`demo` (2 CPU cores), on the width-8 networks used until 2026-12-07, went through three recipes.
(1) Every block, 1 epoch on 5k images (20 steps) at lr 0.01: one set of networks passed the
self-stitch control (max 0.12 points), a retrained set failed it (R1111 at block 1: 1.21 points
below the receiver on all 10k test images). (2) The same at lr 0.001: every self-stitch within 0.2
points, but the stitches were under-trained, which the self-stitch control cannot see (on a
network's own diagonal direct matching is already exact): nine cells of R1111 -> R2222 retrained
with 4x the epochs gained 5.06 points on average (max 12.5), so every triangle claim was
inconclusive. (3) Now: the stem and each stage's end only (5 x 5 cells a pair instead of up to
9 x 9; layer i keeps its block number, as the paper indexes layers: R2222's stage ends are layers
2, 4, 6, 8), R1111 not stitched into itself, and 2 epochs in batches of 64 at lr 0.01 (156 steps).
Probe on the same nine R1111 -> R2222 cells (stage cuts): 4 epochs in batches of 256 (80 steps,
~10 s a stitch) gained 2.36 points on average with 4x the epochs (block 4 -> stem alone +12.4), so that
would fail the control; batches of 64 reach as far sooner (1 epoch in batches of 64 ~ 4 epochs in
batches of 256 at half the time), and 2 epochs in batches of 64 (~8 s a stitch) gained 1.61 points
with 4x the epochs (block 4 -> stem +8.7, the others -1.2 to +2.1).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ...data.datasets import DataSpec
from ...networks import network, zoo
from ...networks.train import TrainConfig
from ...registry.scales import MAX_TRAIN_IMAGES, MIN_TEST_IMAGES, ParameterValueError, check_names, param
from ...stitching.grid import stitch_grid
from ...stitching.grid_spec import Net, StitchRecipe

PAPER_STITCH_LR = 1e-3  # the paper's 0.01 fails the self-stitch control at width 64 (see above)

ARCHS = tuple(f"r{a}{b}{c}{d}" for a in (1, 2) for b in (1, 2) for c in (1, 2) for d in (1, 2))

# Criteria, fixed before any run (stitched accuracy as a fraction of the receiver's own). Each is
# judged on the 95% paired-bootstrap interval of its value (stitchkit.verdicts.noise): a claim holds when
# the whole interval lies on its side, fails when it lies wholly on the other, else is within noise.
LOWER_MIN = 0.9  # "high accuracy wherever j <= i": mean relative accuracy on and below the diagonal
UPPER_MAX = 0.5  # "low above": mean relative accuracy above the diagonal
CONTROL_FLOOR = 0.005  # the GPU spot check: a cell whose retrained stitch falls by more than this (0.5 points) "falls"
RANDOM_MAX = 0.5  # controls: a random sender's mean relative accuracy outside the corner i, j <= 1
CORNER = 1  # the corner the paper excepts: sender and receiver layer (block number) at most this


@dataclass(frozen=True)
class GridConfig:
    """H-F2: every ordered pair of the chosen small ResNets, every sender cut into every receiver cut."""

    archs: tuple[str, ...] = param(("r1111", "r2222"), "small ResNets (of r1111 ... r2222; paper: all 16)",
                                   items={"choices": zoo.HERNANDEZ_ARCHS}, unique=True)
    controls: tuple[str, ...] = param(("r2222",), "architectures whose untrained copy is stitched into and "
                                      "from the trained one (the controls)", items={"choices": zoo.HERNANDEZ_ARCHS},
                                      unique=True)
    width: int | None = param(None, "base width (paper 64); None: the recipe's width", ge=1)
    model_epochs: float | None = param(None, "passes over the training set per model (paper 40); None: the recipe's",
                                       ge=0)
    stitch_init: str = param("dm", "stitch initialisation: dm (direct matching) or default (random)",
                             choices=("dm", "default"))
    stitch_epochs: float = param(4.0, "passes over the stitch training set (paper 4)", gt=0)
    stitch_train_size: int | None = param(None, "training images per stitch; None: all 50k", ge=1, le=50_000)
    stitch_lr: float = param(0.01, "SGD learning rate of the stitch (paper 0.01)", gt=0)
    stitch_batch: int = param(256, "images per stitch step (paper 256)", ge=1, le=MAX_TRAIN_IMAGES)
    warmup: float = param(0.05, "fraction of the stitch's steps spent in linear warmup", ge=0, le=100)
    dm_images: int = param(1000, "training images of the direct-matching fit", ge=1, le=MAX_TRAIN_IMAGES)
    test_size: int | None = param(None, "test images for every accuracy; None: all 10k", ge=MIN_TEST_IMAGES, le=10_000)
    self_pairs: tuple[str, ...] | None = param(None, "architectures also stitched into themselves (the convergence "
                                               "control is their diagonal); None: every one of archs",
                                               items={"choices": zoo.HERNANDEZ_ARCHS}, unique=True)
    cut_every: int = param(1, "stitch at the stem and every k-th block (and the last); 1: every block", ge=1)
    cut_at: str = param("blocks", "where to stitch: blocks (the stem and every block, thinned by cut_every) or "
                        "stages (the stem and the last block of each stage); layer i counts blocks either way, "
                        "as the paper's", choices=("blocks", "stages"))
    net: zoo.Recipe = zoo.recipe_field("the ResNets' recipe (zoo.HERNANDEZ_RESNET at the preset's scale)")

    seed = 0

    def cuts(self, spec: network.ModelSpec) -> list[str]:
        """The stitched cuts of ``spec``: the stem and the blocks (the pooled vector is not a
        map), every ``cut_every``-th block and always the last; with ``cut_at='stages'`` the
        stem and the last block of each stage."""
        return list(self.layers(spec))

    def layers(self, spec: network.ModelSpec) -> dict[str, int]:
        """The stitched cuts of ``spec`` and their layer numbers i: 0 = the stem, k = the output
        of the k-th block, as the paper indexes layers, whichever cuts are stitched. The triangle
        (j ≤ i), the corner (i, j ≤ :data:`CORNER`) and the diagonal (i = j) compare these.

        With ``cut_at='stages'`` only the stem and each stage's last block are stitched, and they
        keep their block numbers (R1111: 0-4; R2222: 0, 2, 4, 6, 8; ResNet-34: 0, 3, 7, 13, 16),
        so a cell falls on the same side of the diagonal as in the paper's full grid. (They were
        numbered by stage before; that put R1111's block 2 and R2222's block 4 on one diagonal.)"""
        model = network.build(spec, num_classes=10, in_channels=3)
        if self.cut_at == "stages":
            keep = list(model.stage_ends)
        else:
            blocks = [c for c in model.cuts if c.startswith("block")]
            keep = [b for n, b in enumerate(blocks, start=1) if n % self.cut_every == 0 or n == len(blocks)]
        return {"stem": 0, **{b: block_index(b) for b in keep}}

    @property
    def layer_name(self) -> str:
        """What a layer number counts: always 'block' (the paper's indexing; see :meth:`layers`)."""
        return "block"

    def pairs(self) -> list[tuple[str, str]]:
        selfs = self.archs if self.self_pairs is None else self.self_pairs
        return [(a, b) for a in self.archs for b in self.archs if a != b or a in selfs]

    def recipe(self) -> StitchRecipe:
        train = TrainConfig(epochs=self.stitch_epochs, batch_size=self.stitch_batch, optimizer="sgd",
                            lr=self.stitch_lr, momentum=0.9, weight_decay=0.01, schedule="warmup_cosine",
                            warmup=self.warmup, augment=False, seed=0)
        return StitchRecipe(kind="strided_or_upsample", init=self.stitch_init, dm_images=self.dm_images,
                            frozen_bn="eval", train=train, train_size=self.stitch_train_size,
                            test_size=self.test_size)

    def model(self, arch: str, trained: bool = True) -> network.ModelSpec:
        """The network ``arch`` by the config's recipe (``trained=False``: its untrained control)."""
        return zoo.hernandez_resnet(self.net, arch, self.seed, width=self.width, epochs=self.model_epochs,
                                    trained=trained)

    def networks(self) -> list[network.ModelSpec]:
        """The trained networks of the grid (one per architecture): what a batch may train ahead."""
        return [self.model(arch) for arch in self.archs]

    def check(self) -> None:
        """The rules between fields (:func:`stitchkit.registry.scales.preset` calls this before any compute)."""
        check_names("archs", self.archs, zoo.HERNANDEZ_ARCHS, what="architecture")
        for name, given in (("controls", self.controls), ("self_pairs", self.self_pairs)):
            check_names(name, given, self.archs, what="architecture", among="archs")
        if self.cut_at == "stages" and self.cut_every != 1:
            raise ParameterValueError(f"parameter 'cut_every' = {self.cut_every} is invalid with cut_at='stages' "
                                      "(stages are not thinned): expected 1")


PRESETS_F2 = zoo.at_scale({
    # CI: seconds. One width-4 R1111 on 2k images and its control; stitches 1 epoch on 500 images.
    "smoke": GridConfig(archs=("r1111",), controls=("r1111",), stitch_epochs=1, stitch_train_size=500,
                        dm_images=200, test_size=500),
    # 2 CPU cores: two architectures, the zoo's demo networks (R2222 also into itself: the self-stitch
    # control), one control, stitched at the stem and each stage's end (5 x 5 cells a pair); stitches
    # DM-initialised then 2 epochs on 5k images in batches of 64 at the paper's lr 0.01 (156 steps),
    # accuracies on all 10k test images (issue 46: every page judges on all of them; it had 2k, a
    # standard error near one point).
    # Why this recipe: see the module docstring.
    "demo": GridConfig(cut_at="stages", self_pairs=("r2222",), stitch_epochs=2, stitch_batch=64, stitch_lr=0.01,
                       stitch_train_size=5000, test_size=None),
    # One GPU: R1111 and R2222 at the paper's width 64 on all 50k images (the zoo's 30 epochs), stitched
    # at the stem and every block as the paper indexes layers (5 x 9 cells between them), R1111 also into
    # itself (the self-stitch control) and its untrained copy into and from it (165 stitches); the
    # paper's stitch recipe (DM start, SGD batch 256, the authors' effective schedule, lr 0.001 as at
    # `paper`) for its 4 epochs, tested on all 10k images.
    # Why 4 epochs, not 2: the 2-epoch run (H100, 2026-11-24, 7.3 min) failed its self-stitch control
    # (R1111 block3 0.88 points below its exact start) and gained 3.26 points on average at 4x. Measured
    # on an H100 on 2026-11-27 before any page ran with it (benchmarks/spot/hernandez-f2-gpu-length.json):
    # at 4 epochs R1111's self-stitch loses 0.02 (block3) and 0.15 (block2) points, and 4x longer (16
    # epochs) gains at most 0.38 points on six cells at j <= i (5.45 on the one cell above the diagonal,
    # which stays 28 points below the receiver); 2.0-4.6 s a stitch at 4 epochs, 6.4-16.5 s at 16.
    # Cost: about 165 x 3 s + the training-length control's ~70 longer stitches x 10 s + 133 s for the two
    # networks, about 20-25 minutes of H100: more than one 10-minute call and more than a 15-minute loan,
    # so this preset runs on a longer loan or on the cluster, not in the loan batch.
    "gpu": GridConfig(controls=("r1111",), self_pairs=("r1111",), cut_at="blocks", stitch_epochs=4,
                      warmup=2.5, stitch_lr=PAPER_STITCH_LR),
    # GPU cluster: all 16 networks, the paper's stitch recipe.
    "paper": GridConfig(archs=ARCHS, controls=ARCHS, warmup=2.5, stitch_lr=PAPER_STITCH_LR),
}, net=zoo.HERNANDEZ_RESNET)

# H-F4: ResNet-18 (R2222) and ResNet-34 stitched into each other, both directions; R2222 into
# itself (the convergence control) and its untrained copy (the power control) are H-F2's.
# The negative control's untrained copies: of both networks (issue 68, finding 5: with R2222's alone the control
# never had the deciding pair's receiver, ResNet-34); smoke keeps R2222's alone (CI's time, and smoke judges nothing).
_F4 = dict(archs=("r2222", "resnet34"), controls=("r2222", "resnet34"), self_pairs=("r2222",))
PRESETS_F4 = zoo.at_scale({
    "smoke": GridConfig(**{**_F4, "controls": ("r2222",)}, cut_every=4, stitch_epochs=1, stitch_train_size=500,
                        dm_images=200, test_size=500),
    # 2 CPU cores: the stem and each stage's end (ResNet-34 has 3, 4, 6, 3 blocks), H-F2's demo stitch recipe.
    "demo": GridConfig(**_F4, cut_at="stages", stitch_epochs=2, stitch_batch=64, stitch_lr=0.01,
                       stitch_train_size=5000, test_size=None),
    # One GPU: R2222 and ResNet-34 at the paper's width 64 on all 50k images (the zoo's 30 epochs), stitched
    # at the stem and each stage's end as at demo (5 x 5 cells a pair: R2222 layers 0, 2, 4, 6, 8; ResNet-34
    # 0, 3, 7, 13, 16), with H-F2's gpu stitch recipe (DM start, SGD batch 256 for the paper's 4 epochs, the
    # authors' effective schedule, lr 0.001 as at `paper`), tested on all 10k images: 125 stitches (R2222
    # into itself, both directions between the two, the untrained R2222 into and from R2222) and the
    # training-length control's ~34 at 16 epochs (demo's sample had 34). Not measured as a whole; from H-F2's
    # gpu run (H100, 2026-11-24: ~1.06 s a 2-epoch stitch in the grid's stacked passes, ~5.2 s an 8-epoch one)
    # and the networks' FLOPs, about 1,300 s of H100 (~170 s of it the two networks): like H-F2's gpu preset,
    # more than one 10-minute call, so it runs on a longer loan or on the cluster, not in the loan batch.
    # (An earlier try, 2026-11-24: every second block, 165 stitches, H-F2's gpu stitch recipe of that day, ran
    # past 570 s on an H100, unfinished, in its training-length control's longer stitches.)
    "gpu": GridConfig(**_F4, cut_at="stages", stitch_epochs=4, warmup=2.5, stitch_lr=PAPER_STITCH_LR),
    "paper": GridConfig(**_F4, warmup=2.5, stitch_lr=PAPER_STITCH_LR),
}, net=zoo.HERNANDEZ_RESNET)


def display_name(arch: str) -> str:
    """'r1212' -> 'R1212', 'resnet34' -> 'ResNet-34'."""
    return "ResNet-34" if arch == "resnet34" else arch.upper()


def pair_grid(sender: Net, receiver: Net, cfg: GridConfig, *, device=None, store=None, progress: bool = True,
              client=None, diagonal: bool = False) -> pd.DataFrame:
    """Every sender cut into every receiver cut for one ordered pair (only i = j with
    ``diagonal``); adds the layer numbers i, j of :meth:`GridConfig.layers` (0 = stem, k = the
    k-th block's or stage's output)."""
    si, rj = cfg.layers(sender.spec), cfg.layers(receiver.spec)
    pairs = [(a, b) for a in si for b in rj if not diagonal or si[a] == rj[b]]
    table = stitch_grid([sender], [receiver], pairs, cfg.recipe(), DataSpec("cifar10"),
                        device=device, store=store, progress=progress, client=client)
    table["i"] = [si[c] for c in table.cut_i]
    table["j"] = [rj[c] for c in table.cut_j]
    return table


def block_index(cut: str) -> int:
    return 0 if cut == "stem" else int(cut.removeprefix("block"))


def all_pairs(cfg: GridConfig, *, device=None, store=None, progress: bool = True, client=None, diagonal: bool = False):
    """The trained grid (every ordered pair of ``cfg.archs``; only i = j with ``diagonal``) and
    the controls (each control architecture's untrained copy into and from its trained one;
    none with ``diagonal``). Returns one table with
    columns sender, receiver, kind ('trained', 'random sender', 'random receiver'), i, j,
    accuracy, receiver_accuracy, relative (accuracy / receiver accuracy), and the models' test
    accuracies by name."""
    cfg.check()
    nets = {a: Net(display_name(a), cfg.model(a)) for a in cfg.archs}
    accuracy = {}
    for a, net in nets.items():
        net.model, m = network.load_or_train(net.spec, device=device, store=store, progress=progress)
        accuracy[net.name] = m["test"]["accuracy"]
    parts = [pair_grid(nets[a], nets[b], cfg, device=device, store=store, progress=progress, client=client,
                       diagonal=diagonal).assign(kind="trained") for a, b in cfg.pairs()]
    for a in () if diagonal else cfg.controls:
        rand = Net(f"{display_name(a)} (untrained)", cfg.model(a, trained=False))
        rand.model, m = network.load_or_train(rand.spec, device=device, store=store, progress=progress)
        accuracy[rand.name] = m["test"]["accuracy"]
        parts.append(pair_grid(rand, nets[a], cfg, device=device, store=store, progress=progress,
                               client=client).assign(kind="random sender"))
        parts.append(pair_grid(nets[a], rand, cfg, device=device, store=store, progress=progress,
                               client=client).assign(kind="random receiver"))
    table = pd.concat(parts, ignore_index=True)
    table["relative"] = table.accuracy / table.receiver_accuracy
    return table, accuracy


def triangle(table: pd.DataFrame) -> pd.DataFrame:
    """Per ordered pair: mean relative accuracy on and below the diagonal (j <= i) and above it."""
    rows = []
    for (s, r, kind), g in table.groupby(["sender", "receiver", "kind"], sort=False):
        low, up = g[g.j <= g.i], g[g.j > g.i]
        outside = g[(g.i > CORNER) | (g.j > CORNER)]
        rows.append({"sender": s, "receiver": r, "kind": kind, "lower": low.relative.mean(),
                     "upper": up.relative.mean() if len(up) else np.nan,
                     "lower_accuracy": low.accuracy.mean(), "upper_accuracy": up.accuracy.mean() if len(up) else np.nan,
                     "outside_corner": outside.relative.mean(), "outside_corner_accuracy": outside.accuracy.mean(),
                     "receiver_accuracy": g.receiver_accuracy.iloc[0], "full": bool((g.i != g.j).any())})
    return pd.DataFrame(rows)


def matrix(table: pd.DataFrame, sender: str, receiver: str, kind: str, value: str = "accuracy") -> pd.DataFrame:
    """The (sender cut i) x (receiver cut j) matrix of one pair."""
    g = table[(table.sender == sender) & (table.receiver == receiver) & (table.kind == kind)]
    return g.pivot(index="i", columns="j", values=value).sort_index().sort_index(axis=1)


def plot_grids(table: pd.DataFrame, *, title: str = "", kinds: tuple[str, ...] = ("trained",), cell: float = 2.9,
               value: str = "accuracy", label: str = "stitched test accuracy (%)", counts: str = "block"):
    """The paper's heatmaps: stitched test accuracy (%) over sender layer i (rows, 0 = stem, top
    to bottom) and receiver layer j (columns), one panel per ordered pair, with a dashed edge
    between j <= i (left: the paper's lower-left triangle) and j > i. Trained pairs are laid
    out as a senders x receivers grid; other kinds (the controls) in one row. ``counts``: what
    a layer number counts (:attr:`GridConfig.layer_name`), shown in the axis labels."""
    import matplotlib.pyplot as plt

    from ...pagekit.plotting import max_width

    t = table[table.kind.isin(kinds)]
    pairs = list(dict.fromkeys(zip(t.sender, t.receiver, t.kind)))
    if kinds == ("trained",):
        senders, receivers = list(dict.fromkeys(t.sender)), list(dict.fromkeys(t.receiver))
        place = {(s, r, k): (senders.index(s), receivers.index(r)) for s, r, k in pairs}
        shape = (len(senders), len(receivers))
    else:
        # as many per row as keep the 7-point ticks legible in the book (issue 64), the rest on further rows
        cols = max(1, min(len(pairs), int((max_width(7) - 1.2) // cell)))
        place = {p: divmod(n, cols) for n, p in enumerate(pairs)}
        shape = (-(-len(pairs) // cols), cols)
    # the figure within max_width of its 7-point ticks (issue 64): a grid of many networks has smaller cells
    cell = min(cell, (max_width(7) - 1.2) / shape[1])
    fig, axes = plt.subplots(*shape, figsize=(cell * shape[1] + 1.2, cell * shape[0] + 0.9), squeeze=False,
                             layout="constrained")
    for ax in axes.flat:
        ax.axis("off")
    im = None
    for (s, rx, kind), (r, c) in place.items():
        ax = axes[r][c]
        ax.axis("on")
        m = matrix(t, s, rx, kind, value)
        im = ax.imshow(100 * m.to_numpy(float), origin="upper", vmin=0, vmax=100, cmap="viridis", aspect="auto")
        # the triangle's edge: in row i, the columns with j <= i lie left of the dashed line
        edge = [int((m.columns <= i).sum()) - 0.5 for i in m.index]
        ys = np.repeat(np.arange(len(edge)), 2) + np.tile([-0.5, 0.5], len(edge))
        ax.plot(np.repeat(edge, 2), ys, color="white", lw=0.9, ls="--")
        ax.set_xticks(range(m.shape[1]), m.columns)
        ax.set_yticks(range(m.shape[0]), m.index)
        ax.tick_params(labelsize=7)
        ax.set_title(f"{s} → {rx}", fontsize=8)
        ax.set_ylabel(f"sender layer i (0 = stem, k = {counts} k)", fontsize=8)
        ax.set_xlabel(f"receiver layer j ({counts})", fontsize=8)
    if im is not None:
        fig.colorbar(im, ax=axes, label=label, fraction=0.03, pad=0.02)
    if title:
        fig.suptitle(title)
    return fig


def triangle_table(table: pd.DataFrame) -> pd.DataFrame:
    """The triangle summary per ordered pair, for display: mean relative accuracies in percent of
    the receiver's accuracy, as the claims judge them."""
    t = triangle(table)
    return t.assign(**{c: (100 * t[c]).round(1) for c in ("lower", "upper", "outside_corner")},
                    receiver_accuracy=(100 * t.receiver_accuracy).round(2))[
        ["sender", "receiver", "kind", "receiver_accuracy", "lower", "upper", "outside_corner"]].rename(
        columns={"receiver_accuracy": "receiver acc. (%)", "lower": "j ≤ i (% of receiver)",
                 "upper": "j > i (% of receiver)", "outside_corner": "outside corner (% of receiver)"}).set_index(
        ["sender", "receiver"])


def title(cfg: GridConfig) -> str:
    width = cfg.width or cfg.net.width
    return f"Small ResNets (width {width}) on CIFAR-10"


def paper_work(cfg: GridConfig | None = None) -> dict:
    """The size of H-F2's paper-scale grid, counted from its preset: stitches (trained pairs and
    controls) and stitch-training image passes (stitches x epochs x training images)."""
    cfg = cfg or PRESETS_F2["paper"]
    cuts = {a: len(cfg.cuts(cfg.model(a))) for a in cfg.archs}
    trained = sum(cuts[a] * cuts[b] for a, b in cfg.pairs())
    untrained = sum(2 * cuts[a] ** 2 for a in cfg.controls)
    images = cfg.stitch_train_size or 50_000
    return {"what": "H-F2 full grid (16 networks, every ordered pair, every layer pair, the controls)",
            "stitches": trained + untrained, "epochs": cfg.stitch_epochs, "images": images,
            "image_passes": (trained + untrained) * cfg.stitch_epochs * images}
