"""Every `gpu` preset at a tiny size on the CPU: it validates at its scale, and each network it
names builds and classifies a two-image batch (the batch on a lent GPU must not meet a bad preset)."""

from __future__ import annotations

from dataclasses import replace

import pytest
import torch

from stitchkit.book import notebooks
from stitchkit.networks import network, zoo
from stitchkit.registry import papers
from stitchkit.registry.figures import presets, scales_of
from stitchkit.registry.scales import fields


def _gpu_figures() -> list[str]:
    return sorted(i for i in notebooks.discover() if "gpu" in scales_of(i))


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
    spec = cfg.model(name, 0)
    assert (spec.width, spec.data.train_size, spec.train.epochs) == (64, None, 4)  # the paper's networks
    model = network.build(spec, num_classes=10, in_channels=3).eval()
    with torch.no_grad():
        assert model(torch.rand(2, 3, 28, 28)).shape == (2, 10)
    assert cfg.recipe(0).train.epochs == PRESETS["demo"].recipe(0).train.epochs  # demo's stitch recipe


def test_bansal_b_f5_gpu_preset_uses_the_zoos_gpu_network_and_demos_stitch_recipe():
    cfg = presets("B-F5")["gpu"]
    nets = cfg.networks()
    # the receiver's run with its snapshots (one training stores them: B-F3B's), then the second seed
    assert [(n.seed, n.train.stop) for n in nets] == [(0, 0.25), (0, 0.5), (0, 1.0), (1, 1.0)]
    assert {(n.width, n.train.epochs) for n in nets} == {(64, 40)}
    assert cfg.recipe() == presets("B-F5")["demo"].recipe() and cfg.test_size is None
    model = network.build(nets[0], num_classes=10, in_channels=3).eval()
    with torch.no_grad():
        assert model(torch.rand(2, 3, 32, 32)).shape == (2, 10)


def test_hernandez_h_f4_gpu_preset_uses_the_papers_networks_and_h_f2s_gpu_stitch_recipe():
    from stitchkit.experiments.hernandez.all_layers import PRESETS_F2, PRESETS_F4
    from stitchkit.registry.scales import preset

    cfg = preset(PRESETS_F4, "gpu")
    assert cfg.archs == ("r2222", "resnet34") and cfg.cut_at == "stages"
    assert cfg.recipe() == preset(PRESETS_F2, "gpu").recipe()  # H-F2's gpu stitch recipe (4 epochs, lr 0.001)
    nets = cfg.networks()
    assert [n.model for n in nets] == ["r2222", "resnet34"]
    assert {(n.width, n.data.train_size, n.train.epochs) for n in nets} == {(64, None, 30)}
    assert cfg.model("r2222", trained=False).train.epochs == 0  # the untrained control
    for spec in nets:
        model = network.build(spec, num_classes=10, in_channels=3).eval()
        with torch.no_grad():
            assert model(torch.rand(2, 3, 32, 32)).shape == (2, 10)
    # the stem and each stage's end, numbered by blocks as the paper's layers
    assert list(cfg.layers(nets[1]).values()) == [0, 3, 7, 13, 16]


def test_smith_s_fc6_gpu_preset_trains_the_papers_vgg19_and_runs_on_a_tiny_batch():
    from stitchkit.experiments.smith.config import SETS
    from stitchkit.experiments.smith.vgg import PRESETS_FC6, VGG_CUTS, VGG_MODELS
    from stitchkit.registry.scales import preset

    cfg = preset(PRESETS_FC6, "gpu")
    assert cfg.inits == 3 and cfg.recipe(0) == preset(PRESETS_FC6, "demo").recipe(0)  # demo's stitch recipe
    for name in VGG_MODELS:
        spec = cfg.model(name, 0)
        assert spec.data.dataset == SETS[name] and spec.data.size == 32
        assert (spec.width, dict(spec.options)["hidden"], spec.data.train_size) == (64, 4096, None)  # the paper's
        assert spec.train.epochs > 0 and spec.train.lr == 1e-2
    model = network.build(spec, num_classes=10, in_channels=3).eval()
    with torch.no_grad():
        assert model(torch.rand(2, 3, 32, 32)).shape == (2, 10)
        assert set(VGG_CUTS) <= set(model.cuts)
    untrained = cfg.untrained(0)
    assert untrained.train.epochs == 0 and untrained.width == 64


def test_balogh_j_t1_gpu_preset_names_the_papers_networks_and_each_builds():
    """J-T1 at gpu: three networks per architecture in the zoo's gpu rows, the paper's
    architectures on all 50k images (Adam as the paper's, shortened), each classifying a
    two-image batch; TLM at the paper's batch; demo's preset as it was."""
    from stitchkit.experiments.balogh.identification import PRESETS_T1
    from stitchkit.registry.scales import preset

    cfg = preset(PRESETS_T1, "gpu")
    assert (cfg.archs, cfg.networks, cfg.tlm_batch, cfg.test_size, cfg.measure_images, cfg.dm_images) == \
        (("resnet18", "vit"), 3, 256, None, 1000, 100)
    assert (cfg.tlm_epochs, cfg.tlm_train_size, cfg.tlm_inter_pairs) == (2, 10_000, 2)
    assert (PRESETS_T1["demo"].tlm_train_size, PRESETS_T1["demo"].tlm_batch) == (2500, 64)  # demo as it was
    arch_of = {"resnet18": ("resnet18", 64, (), 8), "vit": ("vit_ti", 192, (("depth", 12), ("heads", 3)), 12)}
    for arch, (model, width, options, layers) in arch_of.items():
        nets = cfg.nets(arch)
        assert [n.spec.seed for n in nets] == [0, 1, 2]
        spec = nets[0].spec
        assert (spec.model, spec.width, spec.options, spec.data.train_size, spec.normalisation) == \
            (model, width, options, None, "none")
        t = spec.train
        assert (t.optimizer, t.lr, t.weight_decay, t.batch_size, t.schedule, t.augment) == \
            ("adam", 1e-3, 1e-5, 512, "warmup_cosine", True)
        assert 15 <= t.epochs <= 40
        assert len(cfg.layers(nets[0])) == layers  # every block: the paper's layers
        m = network.build(spec, num_classes=10, in_channels=3).eval()
        with torch.no_grad():
            assert m(torch.rand(2, 3, 32, 32)).shape == (2, 10)
    assert zoo.bansal_vit(zoo.BANSAL_VIT["gpu"]) == zoo.balogh_model(zoo.BALOGH_VIT["gpu"], 0)  # Bansal's gpu ViT is this one


def test_balogh_j_f1_j_f2_gpu_preset_shares_j_t1s_stitches_and_trains_the_papers_detectors():
    """J-F1/J-F2 at gpu: J-T1's gpu networks and stitch recipe (one cache for the three pages), and
    the paper's detectors (a width-64 ResNet-18 per conv layer, ViT-Ti's 12 blocks per token layer,
    Liu et al.'s 10 epochs of fine-tuning on all 50k images), each classifying two activations."""
    from dataclasses import fields

    from stitchkit.experiments.balogh.common import IdentConfig
    from stitchkit.experiments.balogh.identification import PRESETS_T1
    from stitchkit.experiments.balogh.detectors import PRESETS_OOD, detector_recipe
    from stitchkit.measures import ood as ood_mod
    from stitchkit.registry.scales import preset

    cfg = preset(PRESETS_OOD, "gpu")
    t1 = preset(PRESETS_T1, "gpu")
    assert all(getattr(cfg, f.name) == getattr(t1, f.name) for f in fields(IdentConfig))
    assert cfg.recipe(tlm=True) == t1.recipe(tlm=True) and cfg.recipe(tlm=False) == t1.recipe(tlm=False)
    recipe = detector_recipe(cfg, "resnet18")
    assert (recipe.conv_model, recipe.conv_width, recipe.vit_blocks, recipe.train_size, recipe.finetune_epochs) == \
        ("resnet18", 64, 12, None, 10.0)
    assert PRESETS_OOD["demo"].detector_width == 8  # demo as it was
    for arch, shape in (("resnet18", (512, 4, 4)), ("vit", (65, 192))):
        rx = cfg.nets(arch)[0]
        model = network.build(rx.spec, num_classes=10, in_channels=3).eval()
        last = cfg.layers(rx)[-1]
        assert tuple(model.shape_at(last, (3, 32, 32))) == shape
        det = ood_mod.build_detector(shape, recipe, heads=ood_mod._heads(shape)).eval()
        with torch.no_grad():
            assert det(torch.rand(2, *shape)).shape == (2, 10)


def test_hernandez_h_f6_h_t1_h_t2_gpu_presets_read_h_f2s_gpu_networks_and_stitch_recipe():
    """H-F6, H-T1 and H-T2 at gpu: H-F2's gpu networks (R1111, R2222 at width 64 on all 50k images) and
    stitch recipe (one cache for the four pages); H-T1/H-T2 its grid at every block (the diagonal, all
    of it), H-F6 R2222 into its own input from the paper's layers 0-5; demo's presets as they were."""
    from stitchkit.experiments.hernandez.all_layers import PRESETS_F2
    from stitchkit.experiments.hernandez.images import PRESETS_F6
    from stitchkit.experiments.hernandez.mse import PRESETS_T1, PRESETS_T2
    from stitchkit.registry.scales import preset

    f2 = preset(PRESETS_F2, "gpu")
    nets = f2.networks()
    assert [n.model for n in nets] == ["r1111", "r2222"]
    assert {(n.width, n.data.train_size, n.train.epochs) for n in nets} == {(64, None, 30)}
    for table in (PRESETS_F6, PRESETS_T1, PRESETS_T2):
        cfg = preset(table, "gpu")
        assert cfg.recipe() == f2.recipe() and cfg.networks() == nets  # H-F2's stitches and networks
        assert (cfg.recipe().init, cfg.recipe().train.lr, cfg.recipe().train.epochs) == ("dm", 1e-3, 4)
        assert cfg.cut_at == "blocks" and cfg.pairs() == f2.pairs()
    assert preset(PRESETS_T1, "gpu").mse_images == preset(PRESETS_T2, "gpu").mse_images == 1000
    f6 = preset(PRESETS_F6, "gpu")
    sender = f6.model(f6.sender_arch)
    assert (f6.sender_arch, f6.receiver_arch, f6.max_layer, f6.score_images) == ("r2222", "r2222", 5, 1000)
    assert sender == nets[1] and list(f6.layers(sender).values())[:f6.max_layer + 1] == [0, 1, 2, 3, 4, 5]
    model = network.build(sender, num_classes=10, in_channels=3).eval()
    with torch.no_grad():
        assert model(torch.rand(2, 3, 32, 32)).shape == (2, 10)
    for table in (PRESETS_F6, PRESETS_T1, PRESETS_T2):  # demo as it was: H-F2's demo stitch recipe
        d = table["demo"]
        assert (d.stitch_epochs, d.stitch_batch, d.stitch_lr, d.stitch_train_size, d.test_size) == \
            (2, 64, 0.01, 5000, None)
    assert (PRESETS_T2["demo"].cut_at, PRESETS_F6["demo"].cut_at, PRESETS_T1["demo"].mse_images) == \
        ("stages", "blocks", 1000)


def test_balogh_j_t2_j_t3_gpu_presets_probe_j_t1s_gpu_networks_on_20k_images():
    """J-T3/J-T2 at gpu: J-T1's gpu networks and direct-matching recipe (read from its cache), each
    probe 15 epochs on 20,000 training images (every block of a width-64 ResNet-18 on all 50k would not
    fit twice in the GPU's memory), the paper's tested layers and ranks; demo's presets as they were."""
    from dataclasses import fields

    from stitchkit.experiments.balogh.common import IdentConfig
    from stitchkit.experiments.balogh.identification import PRESETS_T1
    from stitchkit.experiments.balogh.ding import PRESETS_T2, PRESETS_T3, sensitivity_layers
    from stitchkit.registry.scales import preset

    t1, t3, t2 = preset(PRESETS_T1, "gpu"), preset(PRESETS_T3, "gpu"), preset(PRESETS_T2, "gpu")
    for cfg in (t3, t2):
        assert all(getattr(cfg, f.name) == getattr(t1, f.name) for f in fields(IdentConfig))
        assert cfg.recipe(tlm=False) == t1.recipe(tlm=False) and (cfg.probe_images, cfg.probe_epochs) == (20_000, 15)
    assert (t2.ranks, t2.rn_blocks, t2.vit_fraction, t2.sensitivity_networks) == (14, 4, 0.5, 3)
    tested = {"resnet18": ("resnet18", 64, [f"block{k}" for k in range(5, 9)]),
              "vit": ("vit_ti", 192, [f"block{k}" for k in range(7, 13)])}
    for arch, (model_name, width, layers) in tested.items():
        nets = t2.nets(arch)[:t2.sensitivity_networks]
        assert [n.spec for n in nets] == [n.spec for n in t1.nets(arch)[:3]]  # J-T1's three
        assert (nets[0].spec.model, nets[0].spec.width, nets[0].spec.data.train_size) == (model_name, width, None)
        assert sensitivity_layers(t2, arch, t2.layers(nets[0])) == layers
        m = network.build(nets[0].spec, num_classes=10, in_channels=3).eval()
        with torch.no_grad():
            assert m(torch.rand(2, 3, 32, 32)).shape == (2, 10)
    assert (PRESETS_T3["demo"].probe_images, PRESETS_T3["demo"].probe_epochs) == (5000, 30)  # demo as it was
    assert (PRESETS_T2["demo"].probe_images, PRESETS_T2["demo"].ranks, PRESETS_T2["demo"].networks) == (5000, 14, 3)


def test_across_x_1_x_2_x_3_gpu_presets_share_one_setting_on_the_zoos_gpu_networks():
    """X-1, X-2 and X-3 at gpu: one setting (X-2 and X-3 read X-1's notions from the cache), every
    zoo's pair the one its page trains at gpu (the papers' width 64), each classifying two images; X-3's
    stitches between the same networks with each paper's gpu stitch recipe; demo's presets as they were."""
    from stitchkit.comparing.notions import NOTIONS
    from stitchkit.experiments import across, across_conclusions, across_identify
    from stitchkit.experiments.balogh.identification import PRESETS_T1
    from stitchkit.experiments.hernandez.all_layers import PRESETS_F2
    from stitchkit.registry.scales import preset

    all_presets = (across.PRESETS_X1, across_identify.PRESETS_X2, across_conclusions.PRESETS_X3)
    for table in all_presets:
        cfg = preset(table, "gpu")
        assert (cfg.measures, cfg.test_images, cfg.dm_images) == (NOTIONS, 1000, 100)
        assert all(getattr(table["demo"], f.name) == f.default for f in fields(type(table["demo"])))  # demo: the defaults
    assert preset(across.PRESETS_X1, "gpu").zoos() == preset(across_identify.PRESETS_X2, "gpu").zoos() == papers.ZOOS
    f2, t1 = preset(PRESETS_F2, "gpu"), preset(PRESETS_T1, "gpu")
    assert across.zoo_pair("hernandez", across.PRESETS_X1["gpu"]).specs == (f2.model("r2222"), f2.model("r1111"))
    assert across_identify.one_architecture_pair("hernandez", across_identify.PRESETS_X2["gpu"]).specs[0] == f2.model("r2222")
    assert across.zoo_pair("balogh", across.PRESETS_X1["gpu"]).specs == tuple(n.spec for n in t1.nets("resnet18")[:2])
    receiver, sender, untrained = across_conclusions._bansal_nets(across_conclusions.PRESETS_X3["gpu"])
    assert (receiver.spec, sender.spec) == across.zoo_pair("bansal", across.PRESETS_X1["gpu"]).specs and untrained.spec.train.epochs == 0
    receiver, sender, untrained = across_conclusions._hernandez_nets(across_conclusions.PRESETS_X3["gpu"])
    assert (receiver.spec, sender.spec) == across_identify.one_architecture_pair("hernandez", across_identify.PRESETS_X2["gpu"]).specs
    for name in papers.ZOOS:
        specs = across.zoo_pair(name, across.PRESETS_X1["gpu"]).specs
        assert {s.width for s in specs} == {64} and all(s.train.epochs > 0 for s in specs)
        size = 28 if name == "smith" else 32
        model = network.build(specs[0], num_classes=10, in_channels=3).eval()
        with torch.no_grad():
            assert model(torch.rand(2, 3, size, size)).shape == (2, 10)


def test_x4_gpu_compares_b_f2as_gpu_pair_as_demo_does():
    from stitchkit.experiments import across_own
    from stitchkit.registry.scales import preset

    gpu, demo = preset(across_own.PRESETS_X4, "gpu"), preset(across_own.PRESETS_X4, "demo")
    assert replace(gpu, net=demo.net) == demo and gpu.net == zoo.BANSAL_RESNET18["gpu"]  # demo's comparison, gpu's pair
    assert "gpu" in presets("X-4")


def test_h_f5_gpu_trains_its_similarity_stitch_at_the_papers_rate_with_a_decay():
    """H-F5 at gpu: H-F2's gpu grid, its similarity-trained stitch at lr 0.01 with a 5% warm-up and a
    cosine decay for the paper's 30 epochs (the grid's stitch: lr 0.001, a warm-up that never ends);
    demo's recipe unchanged."""
    from stitchkit.experiments.hernandez import all_layers, sim_trained
    from stitchkit.registry.scales import preset

    gpu = sim_trained.similarity_recipe(preset(sim_trained.PRESETS_F5, "gpu")).train
    assert (gpu.lr, gpu.warmup, gpu.schedule, gpu.epochs, gpu.batch_size) == (0.01, 0.05, "warmup_cosine", 30.0, 256)
    assert preset(all_layers.PRESETS_F2, "gpu").recipe().train.warmup == 2.5  # the vanilla stitch keeps the authors'
    demo_cfg = preset(sim_trained.PRESETS_F5, "demo")
    demo = sim_trained.similarity_recipe(demo_cfg)
    assert demo.train == replace(demo_cfg.recipe().train, epochs=10.0) and demo.init == "default"
