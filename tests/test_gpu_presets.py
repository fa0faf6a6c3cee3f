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
    from stitchkit.book import gpu_estimates

    figures = _gpu_figures()
    assert {"H-F2", "S-F1B", "S-F1C", "S-FC5", "S-TC1", "S-4.2", "B-F5"} <= set(figures)
    # a page with a gpu preset and no estimate would never be started by a batch with a budget
    assert set(figures) <= set(gpu_estimates.ESTIMATES["gpu"])


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


def test_hernandez_h_f4_gpu_preset_uses_the_papers_networks_and_h_f2s_gpu_stitch_recipe():
    from stitchkit.experiments.hernandez.grid import PRESETS_F2, PRESETS_F4
    from stitchkit.scales import preset

    cfg = preset(PRESETS_F4, "gpu")
    assert cfg.archs == ("r2222", "resnet34") and cfg.cut_at == "stages"
    assert cfg.recipe() == preset(PRESETS_F2, "gpu").recipe()  # H-F2's gpu stitch recipe (4 epochs, lr 0.001)
    nets = cfg.networks("gpu")
    assert [n.model for n in nets] == ["r2222", "resnet34"]
    assert {(n.width, n.data.train_size, n.train.epochs) for n in nets} == {(64, None, 30)}
    assert cfg.model("gpu", "r2222", trained=False).train.epochs == 0  # the untrained control
    for spec in nets:
        model = zoo.build(spec, num_classes=10, in_channels=3).eval()
        with torch.no_grad():
            assert model(torch.rand(2, 3, 32, 32)).shape == (2, 10)
    # the stem and each stage's end, numbered by blocks as the paper's layers
    assert list(cfg.layers(nets[1]).values()) == [0, 3, 7, 13, 16]


def test_smith_s_fc6_gpu_preset_trains_the_papers_vgg19_and_runs_on_a_tiny_batch():
    from stitchkit.experiments.smith.config import SETS
    from stitchkit.experiments.smith.vgg import PRESETS_FC6, VGG_CUTS, VGG_MODELS
    from stitchkit.scales import preset

    cfg = preset(PRESETS_FC6, "gpu")
    assert cfg.inits == 3 and cfg.recipe(0) == preset(PRESETS_FC6, "demo").recipe(0)  # demo's stitch recipe
    for name in VGG_MODELS:
        spec = cfg.model("gpu", name, 0)
        assert spec.data.dataset == SETS[name] and spec.data.size == 32
        assert (spec.width, dict(spec.options)["hidden"], spec.data.train_size) == (64, 4096, None)  # the paper's
        assert spec.train.epochs > 0 and spec.train.lr == 1e-2
    model = zoo.build(spec, num_classes=10, in_channels=3).eval()
    with torch.no_grad():
        assert model(torch.rand(2, 3, 32, 32)).shape == (2, 10)
        assert set(VGG_CUTS) <= set(model.cuts)
    untrained = cfg.untrained("gpu", 0)
    assert untrained.train.epochs == 0 and untrained.width == 64


def test_balogh_j_t1_gpu_preset_names_the_papers_networks_and_each_builds():
    """J-T1 at gpu: three networks per architecture in the zoo's gpu rows, the paper's
    architectures on all 50k images (Adam as the paper's, shortened), each classifying a
    two-image batch; TLM at the paper's batch; demo's preset as it was."""
    from stitchkit.experiments.balogh.common import PRESETS_T1
    from stitchkit.scales import preset

    cfg = preset(PRESETS_T1, "gpu")
    assert (cfg.archs, cfg.networks, cfg.tlm_batch, cfg.test_size, cfg.measure_images, cfg.dm_images) == \
        (("resnet18", "vit"), 3, 256, None, 1000, 100)
    assert (cfg.tlm_epochs, cfg.tlm_train_size, cfg.tlm_inter_pairs) == (2, 10_000, 2)
    assert (PRESETS_T1["demo"].tlm_train_size, PRESETS_T1["demo"].tlm_batch) == (2500, 64)  # demo as it was
    arch_of = {"resnet18": ("resnet18", 64, (), 8), "vit": ("vit_ti", 192, (("depth", 12), ("heads", 3)), 12)}
    for arch, (model, width, options, layers) in arch_of.items():
        nets = cfg.nets("gpu", arch)
        assert [n.spec.seed for n in nets] == [0, 1, 2]
        spec = nets[0].spec
        assert (spec.model, spec.width, spec.options, spec.data.train_size, spec.normalisation) == \
            (model, width, options, None, "none")
        t = spec.train
        assert (t.optimizer, t.lr, t.weight_decay, t.batch_size, t.schedule, t.augment) == \
            ("adam", 1e-3, 1e-5, 512, "warmup_cosine", True)
        assert 15 <= t.epochs <= 40
        assert len(cfg.layers(nets[0])) == layers  # every block: the paper's layers
        m = zoo.build(spec, num_classes=10, in_channels=3).eval()
        with torch.no_grad():
            assert m(torch.rand(2, 3, 32, 32)).shape == (2, 10)
    assert zoo.bansal_vit("gpu") == zoo.balogh_model("gpu", "vit", 0)  # Bansal's gpu ViT is this one


def test_balogh_j_f1_j_f2_gpu_preset_shares_j_t1s_stitches_and_trains_the_papers_detectors():
    """J-F1/J-F2 at gpu: J-T1's gpu networks and stitch recipe (one cache for the three pages), and
    the paper's detectors (a width-64 ResNet-18 per conv layer, ViT-Ti's 12 blocks per token layer,
    Liu et al.'s 10 epochs of fine-tuning on all 50k images), each classifying two activations."""
    from dataclasses import fields

    from stitchkit import ood as ood_mod
    from stitchkit.experiments.balogh.common import PRESETS_T1, IdentConfig
    from stitchkit.experiments.balogh.ood import PRESETS_OOD, detector_recipe
    from stitchkit.scales import preset

    cfg = preset(PRESETS_OOD, "gpu")
    t1 = preset(PRESETS_T1, "gpu")
    assert all(getattr(cfg, f.name) == getattr(t1, f.name) for f in fields(IdentConfig))
    assert cfg.recipe(tlm=True) == t1.recipe(tlm=True) and cfg.recipe(tlm=False) == t1.recipe(tlm=False)
    recipe = detector_recipe(cfg, "resnet18")
    assert (recipe.conv_model, recipe.conv_width, recipe.vit_blocks, recipe.train_size, recipe.finetune_epochs) == \
        ("resnet18", 64, 12, None, 10.0)
    assert PRESETS_OOD["demo"].detector_width == 8  # demo as it was
    for arch, shape in (("resnet18", (512, 4, 4)), ("vit", (65, 192))):
        rx = cfg.nets("gpu", arch)[0]
        model = zoo.build(rx.spec, num_classes=10, in_channels=3).eval()
        last = cfg.layers(rx)[-1]
        assert tuple(model.shape_at(last, (3, 32, 32))) == shape
        det = ood_mod.build_detector(shape, recipe, heads=ood_mod._heads(shape)).eval()
        with torch.no_grad():
            assert det(torch.rand(2, *shape)).shape == (2, 10)
