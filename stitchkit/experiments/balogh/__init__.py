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

The package, by figure family (it holds only this docstring: notebooks and tests import the
submodule that defines a name):

- :mod:`.common`: the measures' and architectures' display names (``NAMES``, ``ARCH_NAMES``),
  :class:`IdentConfig` (J-T1's config, the base of every other figure's), the grid helpers the
  figures share, and what every page's display uses (:func:`title`, :func:`architectures_accuracy_table`,
  :func:`stacked`);
- :mod:`.identification` (J-T1): its presets ``PRESETS_T1`` (the other figures' derive from
  them), its six measures (``MEASURES``, ``HIGHER_IS_SIMILAR``), the measures on every layer pair
  (:func:`layer_identification`, giving an :class:`IdentResult`; :func:`structural`), the
  identification rule (:func:`identified`) and Table 1 (:func:`identification_table`), the
  longer-trained rivals (:func:`identification_longer`) and the paper's compute
  (:func:`paper_work`);
- :mod:`.identification_verdicts` (J-T1): the claims (:func:`identification_claims`) and the tie
  rule within a network (:func:`intra_with_ties`);
- :mod:`.detectors` (J-F1, J-F2): :class:`OODConfig` with ``PRESETS_OOD``, the OOD analysis
  (:func:`ood_analysis`, giving an :class:`OODResult`), the training-length controls
  (:func:`far_longer`, giving a :class:`FarLonger`; :func:`most_ood_longer`, :func:`ood_longer`,
  ``FAR_SAMPLE``) and the claims (:func:`intra_claims`, :func:`ood_claims`);
- :mod:`.ding` (J-T3, J-T2): :class:`SpecificityConfig` and :class:`SensitivityConfig` with
  ``PRESETS_T3`` and ``PRESETS_T2``, the tests (:func:`specificity`, :func:`sensitivity`), their
  claims (:func:`specificity_claims`, :func:`sensitivity_claims`) and ``DING_MEASURES``;
- each family's tables and figures beside it: :mod:`.identification_display` (J-T1:
  :func:`table1`, :func:`rivals_table`, :func:`plot_matrices_all`), :mod:`.ood_display` (J-F1,
  J-F2: :func:`detector_table`, :func:`plot_ood_grid`, :func:`plot_ood_grid_all`,
  :func:`plot_energies`) and :mod:`.ding_display` (J-T2, J-T3: :func:`table2`, :func:`table3`,
  :func:`plot_sensitivity_all`, :func:`plot_specificity_all`), so that a page imports only its
  own family's code.

The general pieces live below the experiments: PWCCA with its weights from the narrower side and
the low-rank approximations in :mod:`stitchkit.measures.similarity`, the linear probes in
:mod:`stitchkit.measures.probes`. The figure registry (:mod:`stitchkit.registry.figures`) names the submodule that
holds each figure's presets.
"""
