"""Every `gpu` preset at a tiny size on the CPU: it validates at its scale, and each network it
names builds and classifies a two-image batch (the batch on a lent GPU must not meet a bad preset)."""

from __future__ import annotations

import pytest
import torch

from stitchkit import zoo
from stitchkit.book import execution
from stitchkit.figures import presets, scales_of


def _gpu_figures() -> list[str]:
    return sorted(i for i in execution.discover() if "gpu" in scales_of(i))


def test_the_gpu_presets_are_the_ones_the_batch_has_estimates_for():
    from stitchkit.book import batch

    figures = _gpu_figures()
    assert {"H-F2", "S-F1B", "S-F1C", "S-FC5", "S-TC1", "S-4.2", "B-F5"} <= set(figures)
    # a page with a gpu preset and no estimate would never be started by a batch with a budget
    assert set(figures) <= set(batch.ESTIMATES["gpu"])


@pytest.mark.parametrize("name", ["Correlated", "Digit", "Colour", "Colour-only", "MNIST"])
def test_smith_gpu_networks_are_the_papers_and_run_on_a_tiny_batch(name):
    from stitchkit.experiments.smith.config import PRESETS

    cfg = presets("S-F1B")["gpu"]
    spec = cfg.model("gpu", name, 0)
    assert (spec.width, spec.data.train_size, spec.train.epochs) == (64, None, 4)  # the paper's networks
    model = zoo.build(spec, num_classes=10, in_channels=3).eval()
    with torch.no_grad():
        assert model(torch.rand(2, 3, 28, 28)).shape == (2, 10)
    assert cfg.recipe(0).train.epochs == PRESETS["demo"].recipe(0).train.epochs  # demo's stitch recipe


def test_bansal_b_f5_gpu_preset_uses_the_zoos_gpu_network_and_demos_stitch_recipe():
    cfg = presets("B-F5")["gpu"]
    nets = cfg.networks("gpu")
    assert [n.seed for n in nets] == [0, 1] and {(n.width, n.train.epochs) for n in nets} == {(64, 40)}
    assert cfg.recipe() == presets("B-F5")["demo"].recipe() and cfg.test_size is None
    model = zoo.build(nets[0], num_classes=10, in_channels=3).eval()
    with torch.no_grad():
        assert model(torch.rand(2, 3, 32, 32)).shape == (2, 10)
