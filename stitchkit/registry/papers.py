"""The four papers and the part beyond them, as plain data: each one's part folder under
``book/``, ID prefix, claims and recipe (:data:`PAPERS`; last, the part *Across the papers*, marked
``beyond``: this book's own questions across them), the model zoos of that part (:data:`ZOOS`: one
per paper, named by its part) and the part of each ID prefix (:data:`PARTS`).

Plain Python: the command line and the book read it without importing torch, and the experiments
across the papers name their zoos by it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Paper:
    part: str  # folder under book/
    prefix: str  # catalogue ID prefix
    name: str  # authors and year, as in the sidebar
    title: str
    venue: str
    claims: str  # what the paper claims, one paragraph
    recipe: str  # its training recipe, one paragraph
    demo_budget_minutes: float | None = None  # the bound on the whole part at `demo` (2 CPU cores)
    beyond: bool = False  # this book's own questions across the papers: no paper's claims, the book's hypotheses
    arxiv: str = ""  # its arXiv identifier, where one was found (checked against the arXiv listing, not typed from memory)
    # the paper's central claims, as "ID:claim key", in the order the landing page's "What we found" lists them
    # (a choice of which claims to show: every value and verdict beside them is read from the results files)
    headline: tuple[str, ...] = ()
    # the test accuracy of the paper's networks, in its own words, where its text states one ("" where it does not)
    network_accuracy: str = ""

    @property
    def short(self) -> str:
        """First author and year ("Bansal 2021"), for narrow table columns; a part beyond the
        papers: its name's first word ("Across")."""
        if self.beyond:
            return self.name.split()[0]
        return f"{re.match(r'[^,& ]+', self.name)[0]} {self.name[-4:]}"


PAPERS: tuple[Paper, ...] = (
    Paper("bansal", "B", "Bansal, Nakkiran & Barak 2021",
          "Revisiting model stitching to compare neural representations", "NeurIPS 2021",
          "The paper stitches the bottom of one network into the top of another through a 1x1 "
          "convolution between BatchNorms, trained on the task with both halves frozen, and reads the "
          "*stitching penalty* (stitched error minus the top model's error) as an operational measure "
          "of how compatible two representations are. Networks trained from different seeds are "
          "*stitching connected*: the penalty stays close to zero at every layer, while an untrained "
          "bottom stitches well only early. Very different training procedures (self-supervised, "
          "different label distributions) still give compatible representations, and \"more is better\": "
          "a bottom trained with more data, more width or more epochs improves a weaker top, something "
          "CKA does not show.",
          "Pre-activation ResNet-18 of width k on CIFAR-10 (mean/std normalised); SGD with momentum "
          "0.9, lr 0.05 decayed x0.2 at 32k and 48k of 64k steps, weight decay 1e-4, batch 128, random "
          "crop and flip; stitches after the stem, after each of the 8 blocks and on the pooled vector, "
          "trained with Adam (lr 1e-3, cosine decay).", demo_budget_minutes=90, arxiv="2106.07682",
          headline=("B-F2A:connected", "B-F2A:random_early", "B-F2A:random_late", "B-F2C:improves", "B-F6:connected")),
    Paper("hernandez", "H", "Hernandez et al. 2022",
          "Model stitching: looking for functional similarity between representations", "SVRHM workshop 2022",
          "The paper stitches every block of a sender into every block of a receiver across 16 small "
          "ResNets R_abcd (one or two blocks per stage), with an untrained copy of each as a control. "
          "Stitched accuracy forms a \"triangle\": it is high wherever the sender's layer is at or after "
          "the receiver's layer and low above, and the random controls stitch poorly except in one "
          "corner; ResNet-18 and ResNet-34 show the same triangle. A stitch trained to reproduce the "
          "receiver's own representation (mean squared error) reaches low task accuracy, unlike a "
          "stitch trained on the task, which raises the question whether task-trained stitches "
          "\"hack\" the receiver.",
          "BasicBlock ResNets with a CIFAR stem (3x3 conv, BN, ReLU, no max-pool), trained for 40 "
          "epochs to over 90% on CIFAR-10; stitches without BatchNorm (a strided k x k conv when the "
          "receiver's map is smaller, nearest upsampling and a 1x1 conv when larger), trained with SGD "
          "(momentum 0.9, lr 0.01, weight decay 0.01, batch 256) for 4 epochs.", demo_budget_minutes=45, arxiv="2303.11277",
          headline=("H-F2:lower_high", "H-F2:upper_low", "H-F2:random_low", "H-F5:similarity_low"),
          network_accuracy="above 90% on CIFAR-10"),
    Paper("smith", "S", "Smith & Marcu 2024", "Comparing apples and oranges: is stitching similarity a load of spheres?",
          "NeurIPS SciDL workshop 2024",
          "The paper builds colour-MNIST data sets in which the background colour can stand in for the "
          "digit (Correlated), is random (Digit), or is the target (Colour, Colour-only), and stitches "
          "networks trained on them into one another. Every sender, including one that never saw a "
          "digit, stitches into the Digit receiver at least as well as the Digit model itself, even "
          "where the numerical rank after the stitch shows clearly different representations; "
          "clustered noise reaches full compatibility too, and two models can each look \"better\" "
          "than the other depending on which is the receiver. Stitching success, it concludes, does "
          "not show that two networks use the same features.",
          "torchvision-style ResNet-18 (7x7 stem and max-pool) on 28x28 colour images and VGG19 without "
          "BatchNorm on 32x32; models trained with SGD (lr 0.1, momentum 0.9, weight decay 1e-4, batch "
          "128) for 4 epochs without augmentation; BatchNorm, 1x1 conv, BatchNorm stitches before each "
          "stage and before the classifier, trained with SGD (lr 1e-4) for 10 epochs.", demo_budget_minutes=30,
          headline=("S-F1B:compatible", "S-F1C:rank_differs", "S-FC5:noise_compatible", "S-TC1:contradiction"),
          network_accuracy="over 98% on the Correlated set"),
    Paper("balogh", "J", "Balogh & Jelasity 2025",
          "How not to stitch representations to measure similarity: task loss matching versus direct "
          "matching", "AAAI 2025",
          "The paper compares task-loss matching (TLM: the stitch trained on the task) with direct "
          "matching (DM: least squares from the sender's activations to the receiver's). TLM stitches "
          "reach high accuracy even where the representation they hand to the receiver is "
          "out of distribution for it (per-layer energy-based detectors give AUROC near 1), so TLM "
          "accuracy finds far-apart layers as similar as a layer and itself and fails to identify "
          "corresponding layers; DM reports high similarity only for in-distribution representations. "
          "In the layer identification test and the sensitivity and specificity tests of Ding et al., "
          "DM ranks with the best similarity measures.",
          "BasicBlock ResNet-18 with a CIFAR stem and ViT-Ti (patch 4, dimension 192, depth 12) on "
          "CIFAR-10 with inputs in [0, 1]; models trained with Adam (lr 1e-3, weight decay 1e-5) for 100 "
          "epochs with crop and flip; 1x1-conv stitches (one linear map per token for ViT) initialised "
          "by DM on 100 images, then trained with Adam for 30 epochs (TLM).", demo_budget_minutes=60, arxiv="2412.11299",
          headline=("J-F1:far_as_similar", "J-F1:most_ood", "J-T1:tlm_intra_rn", "J-T1:tlm_inter_rn")),
    Paper("across", "X", "Across the papers", "Every similarity notion against every model zoo",
          "this book's own part, beyond the four papers",
          "No paper claims what this part judges. The four papers disagree about what stitching measures "
          "(connectivity almost everywhere, a triangle, blindness to shortcuts, out-of-distribution stitches "
          "that mis-identify layers), and each tests its conclusion on its own networks only. This part sets "
          "every similarity notion of the book against every zoo of the book. Its hypotheses are the book's, "
          "each derived from one of the papers and named with it; a verdict says whether the hypothesis holds.",
          "The networks the four parts' pages trained, read from the cache (no training of its own but X-2's "
          "second R2222, by H-F2's recipe); X-3's stitches with each paper's own recipe; every "
          "notion as stitchkit.compare computes it (linear CKA, PWCCA, orthogonal Procrustes, direct matching's "
          "residual and stitched accuracy), recomputed on one paired bootstrap of the test images shared by "
          "every notion.", demo_budget_minutes=45, beyond=True),
)
# The model zoos of the part beyond the papers: one per paper, named by the paper's part.
ZOOS: tuple[str, ...] = tuple(p.part for p in PAPERS if not p.beyond)
PAPER_BY_PREFIX = {p.prefix: p for p in PAPERS}
PAPER_BY_PART = {p.part: p for p in PAPERS}
PARTS = {p.prefix: p.part for p in PAPERS}  # ID prefix -> the part's folder under book/


def paper_of(figure_id: str) -> Paper | None:
    """The paper an ID belongs to, by its prefix (``B-F2A`` -> Bansal), or None."""
    return PAPER_BY_PREFIX.get(figure_id.split("-", 1)[0])


__all__ = ["PAPERS", "PAPER_BY_PART", "PAPER_BY_PREFIX", "PARTS", "Paper", "ZOOS", "paper_of"]
