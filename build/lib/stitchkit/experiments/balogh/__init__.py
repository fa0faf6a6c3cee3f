"""Balogh & Jelasity 2025, "How not to stitch representations to measure similarity: task loss
matching versus direct matching".

Recipe (paper Sec. 2-5; catalogue): BasicBlock ResNet-18 (CIFAR stem) and ViT-Ti on CIFAR-10,
inputs in [0, 1], several networks per architecture that differ only in their seed. Layers are
the 8 residual blocks / the encoder blocks. A stitch is a bilinear resize (when the maps differ
in size) then a 1x1 convolution with bias, or one Linear on every token. Direct matching (DM)
fits it by least squares (bias column, K = 100 training images, every position or token a
row); task-loss matching (TLM) starts from DM and trains on the task (Adam 1e-3, wd 1e-5,
batch 256, 30 epochs). Similarities:

- structural: linear CKA (flattened maps), PWCCA and orthogonal Procrustes (positions as
  examples when the shapes agree, else pooled), on 1,000 test images;
- DM (struct.): the fit's relative squared residual (a distance);
- DM (func.) and TLM: the stitched network's accuracy relative to the receiver's.

J-T1 (layer identification): within a network (source and target the same network) and between
two networks, a measure *identifies* target layer j when no source layer i is more similar to it
than layer j itself (ties count as identified). J-T3 (Ding et al.'s specificity test): every
layer of every network is a representation; F is its linear-probe accuracy; with A the
representation of highest F, the rank correlation (Kendall's tau, Spearman's rho) between
|F(A) - F(B)| and each dissimilarity d(A, B) over every other B.

The package, by figure family: :mod:`.common` (the measures' names, :class:`IdentConfig` and the
grid helpers the figures share), :mod:`.identification` and :mod:`.identification_verdicts` (J-T1),
:mod:`.ood` (J-F1, J-F2), :mod:`.ding` (J-T3 and J-T2), :mod:`.display` (the pages' tables and
figures). The general pieces live below the experiments: PWCCA with its weights from the
narrower side and the low-rank approximations in :mod:`stitchkit.similarity`, the linear probes
in :mod:`stitchkit.probes`. The names below are what the notebooks, the CLI's preset table
(``stitchkit.figures``), the book's cost page and the tests use.
"""

from .common import ARCH_NAMES, HIGHER_IS_SIMILAR, MEASURES, NAMES, PRESETS_T1, IdentConfig
from .identification import (identification_longer, identification_table, identified, layer_identification,
                             paper_work, structural)
from .identification_verdicts import identification_claims, intra_with_ties
from .ood import (FAR_SAMPLE, PRESETS_OOD, OODConfig, far_longer, intra_claims, most_ood_longer, ood_analysis,
                  ood_claims, ood_longer)
from .ding import (DING_MEASURES, PRESETS_T2, PRESETS_T3, SensitivityConfig, SpecificityConfig, sensitivity,
                   sensitivity_claims, specificity, specificity_claims)
from .display import (accuracy_table, detector_table, plot_energies, plot_matrices_all, plot_ood_grid,
                      plot_ood_grid_all, plot_sensitivity_all, plot_specificity_all, rivals_table, table1, table2,
                      table3, title)

__all__ = [
    # common
    "ARCH_NAMES", "HIGHER_IS_SIMILAR", "MEASURES", "NAMES", "PRESETS_T1", "IdentConfig",
    # identification (J-T1)
    "identification_longer", "identification_table", "identified", "layer_identification", "paper_work",
    "structural",
    # identification_verdicts (J-T1)
    "identification_claims", "intra_with_ties",
    # ood (J-F1, J-F2)
    "FAR_SAMPLE", "PRESETS_OOD", "OODConfig", "far_longer", "intra_claims", "most_ood_longer", "ood_analysis",
    "ood_claims", "ood_longer",
    # ding (J-T3, J-T2)
    "DING_MEASURES", "PRESETS_T2", "PRESETS_T3", "SensitivityConfig", "SpecificityConfig", "sensitivity",
    "sensitivity_claims", "specificity", "specificity_claims",
    # display
    "accuracy_table", "detector_table", "plot_energies", "plot_matrices_all", "plot_ood_grid", "plot_ood_grid_all",
    "plot_sensitivity_all", "plot_specificity_all", "rivals_table", "table1", "table2", "table3", "title",
]
