"""How long each page takes on one GPU before it has run there, and the order a lent GPU runs them,
as tables for the batch (:mod:`stitchkit.book.batch`) and the Cost page (:mod:`stitchkit.book.cost`).

Each page states its own estimate in its registry entry (:class:`stitchkit.registry.figures.Cost`);
the tables here are derived from those entries, and the comments below say how each estimate was
made. A page's first run at a scale replaces its estimate (:func:`stitchkit.book.batch.estimate`
reads the run)."""

from __future__ import annotations

from ..registry.figures import FIGURES, REQUIRED_SCALES, SCALES

# How the device seconds in the figures' entries (at a scale where the book has no run of a page yet) were made,
# with their sources. H-F2 at gpu: 165 stitches at 2.0-4.6 s (4 epochs) + ~70 training-length stitches at
# 6.4-16.5 s (16 epochs) + 133 s for its two networks, measured on an H100 on 2026-11-27
# (benchmarks/spot/hernandez-f2-gpu-length.json).
#
# Smith & Marcu's ResNet pages at gpu, until a page has run there: from the pieces measured on an H100
# on 2026-11-27 (benchmarks/spot/smith-gpu-costs.json: a coloured set 9 s once; a width-64 ResNet-18
# on 28x28 ~20 s for its 4 epochs, the process's first ~6 s more; a stitch of 2 epochs 4-8 s, ~6; at
# 2x, ~12) times what each page computes from an empty cache in one process, three initialisations:
# - S-F1B: 9 networks, 45 stitches, its negative control's 6, its training-length control's 6 at 2x: ~580 s;
# - S-F1C: the same networks and stitches and a rank per stitch (~1 s): ~520 s;
# - S-FC5: 12 networks, 75 stitches (with the Noise senders'), their ranks, 6 negative, 6 at 2x: ~890 s;
# - S-TC1: 12 networks, 24 layer-1 stitches, 12 of them at 2x: ~550 s;
# - S-4.2: 6 networks (Colour-only and MNIST), ~30 stitches, ~6 at 2x: ~390 s.
# (The first batch, estimated from guesses of 4 ms a step, gave S-F1B 330 s; it ran 9 minutes unfinished.)
# B-F5 at gpu: its two width-64 ResNet-18s at 53 s each (benchmarks/spot/gpu-recipes.json), 30 stitches
# (3 senders x 10 cuts; 625 steps of batch 32 at the ~6.4 ms a step the Smith stitches took, with a
# 10k-image test: ~5 s), ~6 deciding cells at 4x (~20 s) and CKA: ~400 s.
#
# The other Bansal pages at gpu (2026-11-28, before any of them ran there), from the same pieces: the
# process's first ~11 s; a width-64 ResNet-18 in the gpu recipe 55 s (measured: 53 s); one of width 8
# or 32 ~41 s (3,907 steps, host-bound at ~10.5 ms a step); the Myrtle CNN ~25 s (2,350 steps, host-
# bound); the ResNet-164 ~90 s (2,940 steps at a guessed ~30 ms: 164 layers of small kernels); SimCLR
# 30 epochs 106 s measured, its probe ~15 s; a random bottom's BatchNorm recalibration ~2 s; a stitch
# ~4 s (625 steps at the ~6.4 ms a step Smith's stitches took, its direct-matching fit and a 10k test),
# ~16 s at the training-length control's 4x; CKA ~10 s. Counting what each page computes:
# - B-F2A: ResNet-18 seeds 0, 1 and the Myrtle CNN's two (162 s), 30 + 8 stitches (152 s; 30 + 10 at
#   the Myrtle CNN's five cuts since 2026-12-02, ~8 s more), ~8 cells
#   at 4x (128 s): ~450 s;
# - B-F2C: four width-64 networks (each sample size trains the full set's steps) and the random bottom
#   (222 s), 5 senders x 6 cuts (120 s), ~4 cells at 4x (64 s), CKA: ~430 s;
# - B-F3A: the top, the normal bottom and two label variants (222 s), 5 senders x 6 cuts, ~4 at 4x,
#   CKA: ~430 s; since 2026-12-02 the plateau premise trains the weak bottom (objects vs animals at gpu)
#   again for twice its epochs (~110 s): ~540 s;
# - B-F3C: widths 8, 32 and 64 and their random bottoms (140 s), 3 receivers x 4 senders x 4 cuts
#   (192 s), ~4 at 4x, CKA: ~420 s;
# - B-F6: two supervised networks, SimCLR and its probe, a random bottom (233 s), ~30 stitches both
#   ways (120 s), ~4 at 4x, CKA: ~440 s;
# - B-F8: two ResNet-164s and a random one (182 s), fine-tuning after 3 cuts from 2 bottoms for 5
#   epochs (~90 s), 6 stitches into the deep top (~60 s), ~2 at 4x (~80 s): ~420 s; since 2026-12-02 the
#   fine-tuning length control fine-tunes the same 6 again for 10 epochs (~180 s): ~600 s.
# To each of B-F2A, B-F2C, B-F3A and B-F6 add the network-to-network variance component its claims' intervals
# carry (stitchkit.experiments.bansal.seeds: seeds 1, 3, 4, 5 and 6 stitched into seed 0 at all 10 cuts, 60
# stitches, ~240 s, and whichever of those networks the page does not train itself, ~220-275 s; since the
# crossed design of 2026-12-02, seeds 1, 5, 6 and the self-stitch into each of 0, 3, 4: 120 stitches, ~240 s
# more, not yet added to the figures below): ~410-515 s
# from an empty cache, paid once by the first of them in a batch (they share it at width 64); B-F3C's base
# width 32 needs its own (~430 s). So from an empty cache B-F2A ~910 s, B-F2C ~945 s, B-F3A ~840 s,
# B-F3C ~850 s, B-F6 ~850 s: each more than one loan's call (550 s) alone, and far more than the 4 minutes
# issue 47 hoped a page would take; several processes sharing the GPU (benchmarks/gpu_lanes.py) would cut
# the network part. The first run of each replaces its estimate.
# The remaining Bansal pages and S-F1A (2026-11-28), the same way:
# - B-F3B: the seed-0 run with its snapshots (55 s), the random bottom, 20 stitches, CKA, ~11 cells at 4x
#   (176 s) and the variance component (~515 s): ~850 s (~280 s after B-F2A in the same batch);
# - B-F4: B-F2A's pair (110 s), 5 kernels x 3 cuts x 2 senders (120 s), the larger kernels' direct-matching
#   fits (~60 s, guessed), ~55 s at 4x: ~360 s;
# - B-F7: the 5k and 25k bottoms, widths 8 and 64, the half-run snapshot and the variance component's
#   networks (509 s), CKA: ~540 s (~30 s after B-F2A, B-F2C and B-F3C);
# - B-F9: B-F2A's receiver and B-F2C's 5k bottom (110 s), 30 stitches, freeze-training (~50 s), ~6 at 4x:
#   ~390 s;
# - B-F2B, B-T1: read the book's results, compute nothing: ~10 s; S-F1A: the coloured sets' examples: ~30 s.
# Hernandez's tables and images, Balogh's Ding et al. tests and the pages across the papers (2026-11-28):
# - H-F6: R2222 (73 s), 6 stitches into the input (~6 s: the whole receiver trains), again at 16 epochs
#   (~22 s each), 6 self-stitches: ~280 s; H-T1: R1111 and R2222 (133 s), 15 stitches at i = j, their MSE,
#   up to 10 at 16 epochs: ~310 s; H-T2: H-F2's grid (165 stitches, ~495 s), MSE on 115, up to 16 at 16
#   epochs: ~870 s from an empty cache (~240 s after H-F2's gpu run);
# - J-T3: J-T1's 6 networks and DM grid (1,872 stitches, ~750 s), 60 probes on 20k images: ~1,100 s (~60 s
#   after J-T1); J-T2: 6 networks (285 s), 396 probes, PCA and DM fits (the networks' jackknife refits the
#   measures of each layer against a second reference: about twice the fits): ~800 s (2026-11-28; ~440 s with
#   two networks and no jackknife);
# - the zoos' gpu networks (316-376 s); the notions' float64 bootstrap runs on the host
#   (1,001 decompositions of up to 512 x 512 matrices a layer pair; timed here on one core, assumed 3x faster
#   on the GPU machine's 16: the weakest of these guesses, a factor of two either way): X-1 ~4,400 s, X-2
#   ~4,700 s (~770 s after X-1), X-3 ~1,800 s (~1,100 s after; ~1,300 s before the triangle's
#   spread added B-F2A's four other replicate ResNet-18s, 220 s, and their 100 stitches, ~300 s, 2026-11-28); X-4: B-F2A's pair (110 s) and
#   demo's two comparisons of two cuts, each with its task-loss stitches and controls: ~400 s;
# - H-F5: H-F2's gpu networks (133 s) and grid (~495 s, shared with H-F2 and H-T2), ~60 similarity-trained
#   stitches of 30 epochs on 50k images at batch 256 (~20 s each), the length control's at 4x on a sample:
#   ~2,000 s with H-F2's grid cached.
# Pages beyond one loan's call (a user's own GPU, a longer loan, the cluster), the same way:
# - H-F4: R2222 73 s (measured) and ResNet-34 ~92 s (5,880 steps of 256 at ~15.6 ms), 175 stitches at
#   4 epochs (~580 s: 0.3 s + 0.62 s x epochs x the receiver's cost, fitted to H-F2's gpu run; 50 of them
#   the untrained ResNet-34's, into and from ResNet-34, since 2026-12-02), ~34 at 16 epochs (~617 s),
#   process and figures ~75 s: ~1,450 s;
# - S-FC6: 12 VGG19s at ~16 s (1,410 steps host-bound), 60 noise and 72 control stitches at ~3 s, 9 at
#   2x, the coloured and noise sets ~60 s: ~700 s;
# - J-T1: 3 ResNet-18s (~40 s) and 3 ViT-Tis (~55 s), 1,872 DM and 1,040 TLM stitches (~1,600 s), the
#   structural measures on 1,872 layer pairs (~95 s), ~300 stitches at 4x (~450 s): ~2,400 s;
# - J-F1: 2 ResNet-18s, 128 DM and 128 TLM stitches, 8 detectors at ~150 s (5 epochs of pre-training,
#   10 of energy fine-tuning, fp32), scoring 256 stitches: ~1,560 s; J-F2: that and the ViT's (12
#   detectors): ~3,970 s from an empty cache (~2,000 s after J-T1 and J-F1).
# NETWORK_SHARE is the part of each estimate that is training networks, which a batch of several
# lanes trains ahead in parallel (:func:`stitchkit.book.transfer.run_lanes`), at NETWORK_SECONDS each.
_OPTIONAL = tuple(s for s in SCALES if s not in REQUIRED_SCALES)
ESTIMATES: dict[str, dict[str, float]] = {
    scale: {f.id: float(f.costs[scale].seconds) for f in FIGURES if scale in f.costs} for scale in _OPTIONAL}
NETWORK_SHARE: dict[str, dict[str, float]] = {
    scale: {f.id: float(f.costs[scale].networks) for f in FIGURES
            if scale in f.costs and f.costs[scale].networks} for scale in _OPTIONAL}
# the pages a lent GPU runs first, in their order (their gpu estimates' ranks)
_RANKED = [f for f in FIGURES if "gpu" in f.costs and f.costs["gpu"].rank is not None]
PRIORITY: tuple[str, ...] = tuple(f.id for f in sorted(_RANKED, key=lambda f: f.costs["gpu"].rank))
# (per network family: Smith's and Bansal's measured one at a time; R1111 and R2222 took 133 s together,
# split here by their depth; the Myrtle CNN and ResNet-164 from the pieces above, not measured)
NETWORK_SECONDS: dict[str, dict[str, float]] = {"gpu": {"resnet18_imagenet": 20.0, "preact_resnet18": 55.0,
                                                        "r1111": 60.0, "r2222": 73.0, "myrtle": 25.0,
                                                        "preact_resnet164": 90.0, "resnet34": 92.0,
                                                        "vgg19": 16.0, "resnet18": 40.0, "vit_ti": 55.0}}


def in_priority_order(ids) -> list[str]:
    """``ids`` in the order a lent GPU runs them: those in :data:`PRIORITY` first, in its order, then
    the rest in catalogue (ID) order."""
    ids = list(ids)
    return [*(i for i in PRIORITY if i in ids), *sorted(i for i in ids if i not in PRIORITY)]


__all__ = ["ESTIMATES", "NETWORK_SECONDS", "NETWORK_SHARE", "PRIORITY", "in_priority_order"]
