"""Smith & Marcu 2024, "Apples and oranges? Stitching cannot tell different representations apart".

Recipe (paper App. A-B, catalogue): ResNet-18 with the ImageNet stem on 28x28 coloured MNIST
(:func:`stitchkit.zoo.smith_resnet18`), one model per data set and initialisation; the stitch
is BatchNorm -> 1x1 conv -> BatchNorm (BN1d -> Linear -> BN1d before the classifier), placed
before layer1 ... layer4 and before the linear classifier ("Layer 1" ... "Linear"), trained
with SGD (momentum 0.9, weight decay 1e-2, batch 128) from PyTorch's default initialisation
with both halves frozen (BatchNorm in eval mode; the authors' code leaves it in train mode,
``frozen_bn='train'``). Stitches into the Digit receiver are trained and tested on the
Correlated set. The Clustered-Noise sender feeds synthetic activations (batch 64, 4 epochs).

Initialisation k uses the models of seed k and stitch seed k, so each initialisation is an
independent replicate of the whole experiment; the pages show the spread over them.

The numerical rank (catalogue; Masarczyk et al.'s tunnel-effect code) is the number of
eigenvalues of the sample covariance of the flattened output of the receiver's first layer
after the stitch (a conv; the classifier at the last cut) above 1e-3 x the largest, on the
test set.

The package, lowest layer first: :mod:`.config` (the shared ResNet-18 recipe, its verdict
criteria and presets), :mod:`.measures` (the Clustered-Noise sender, rank, accuracy, per-layer
tables), :mod:`.stitch_controls` (the positive and negative controls' stitches and
statistics, issue 46), then one module per figure family in catalogue order: :mod:`.examples` (S-F1A),
:mod:`.digit_receiver` (S-F1B, S-F1C, S-FC5), :mod:`.better_than` (S-4.2, S-TC1) and :mod:`.vgg`
(S-FC6). Importing the package imports every module, which registers each figure's config.
"""

from .config import CUT_LABELS, CUTS, FC5_SENDERS, FIG1_SENDERS, LONGER, NOISE, PRESETS, RECEIVER, UNTRAINED
from .measures import NoiseSender, NoiseSpec, first_layer_after, per_layer
from .stitch_controls import LATE, negative_control, positive_control
from .examples import PRESETS_F1A, example_images, plot_examples
from .digit_receiver import (compatibility_summary, deciding_cells, into_digit, into_digit_longer, noise_summary,
                             rank_summary, untrained_into_digit)
from .better_than import (TC1_DECIDING, TC1_MODELS, colour_only_into_mnist, colour_only_summary, contradiction,
                          contradiction_summary, mnist_controls, plot_colour_only, plot_contradiction, plot_gains,
                          tc1_controls, tc1_gains, tc1_longer_models, worst_cuts)
from .vgg import (PAPER_TC2, PRESETS_FC6, VGG_CUT_LABELS, VGG_CUTS, VGG_MODELS, plot_vgg, vgg_accuracy_table,
                  vgg_controls, vgg_deciding_cells, vgg_longer, vgg_noise, vgg_summary)

__all__ = [
    # config
    "CUT_LABELS", "CUTS", "FC5_SENDERS", "FIG1_SENDERS", "LONGER", "NOISE", "PRESETS", "RECEIVER", "UNTRAINED",
    # measures
    "NoiseSender", "NoiseSpec", "first_layer_after", "per_layer",
    # stitch_controls (the positive and negative controls of the ResNet-18 pages)
    "LATE", "negative_control", "positive_control",
    # examples (S-F1A)
    "PRESETS_F1A", "example_images", "plot_examples",
    # digit_receiver (S-F1B, S-F1C, S-FC5)
    "compatibility_summary", "deciding_cells", "into_digit", "into_digit_longer", "noise_summary", "rank_summary",
    "untrained_into_digit",
    # better_than (S-4.2, S-TC1)
    "TC1_DECIDING", "TC1_MODELS", "colour_only_into_mnist", "colour_only_summary", "contradiction",
    "contradiction_summary", "mnist_controls", "plot_colour_only", "plot_contradiction", "plot_gains",
    "tc1_controls", "tc1_gains", "tc1_longer_models", "worst_cuts",
    # vgg (S-FC6)
    "PAPER_TC2", "PRESETS_FC6", "VGG_CUT_LABELS", "VGG_CUTS", "VGG_MODELS", "plot_vgg", "vgg_accuracy_table",
    "vgg_controls", "vgg_deciding_cells", "vgg_longer", "vgg_noise", "vgg_summary",
]
