"""Smith & Marcu 2024, "Apples and oranges? Stitching cannot tell different representations apart".

Recipe (paper App. A-B, catalogue): ResNet-18 with the ImageNet stem on 28x28 coloured MNIST
(:func:`stitchkit.networks.zoo.smith_resnet18`), one model per data set and initialisation; the stitch
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

The package's modules, lowest layer first (the package itself imports none of them: notebooks
and tests import the module that defines a name, e.g.
``from stitchkit.experiments.smith import digit_receiver`` then ``digit_receiver.into_digit``):

- :mod:`.config`: the shared ResNet-18 recipe (cuts, data sets, each figure's models), its
  verdict criteria, :class:`~.config.StitchConfig` and its presets ``PRESETS`` (S-F1B, S-F1C,
  S-4.2, S-FC5, S-TC1);
- :mod:`.measures`: the Clustered-Noise sender, rank, accuracy, per-layer tables;
- :mod:`.stitch_controls`: the positive and negative controls' stitches and statistics (issue 46);

then one module per figure family in catalogue order:

- :mod:`.examples`: S-F1A (its presets ``PRESETS_F1A``, the example images and their plot);
- :mod:`.digit_receiver`: S-F1B, S-F1C, S-FC5 (every sender into the Digit receiver);
- :mod:`.better_than`: S-4.2, S-TC1 (Colour-only into MNIST, the contradiction table);
- :mod:`.vgg`: S-FC6 (VGG19 with clustered noise, its presets ``PRESETS_FC6``).

The figure registry (:mod:`stitchkit.registry.figures`) names the module that holds each figure's presets.
"""
