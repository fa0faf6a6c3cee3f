import pytest
import torch

from stitchkit.networks.models import build_model, list_models


@pytest.mark.parametrize("name", list_models())
def test_every_registered_model_on_a_tiny_input(name):
    model = build_model(name, seed=0, width=4, num_classes=7).eval()
    x = torch.randn(2, 3, 32, 32)
    out = model(x)
    assert out.shape == (2, 7) and torch.isfinite(out).all()
    shapes = model.cut_shapes((3, 32, 32))
    assert list(shapes) == list(model.cuts)
    for cut in model.cuts:  # split at every cut equals the full forward exactly
        h = model.forward_to(x, cut)
        assert tuple(h.shape[1:]) == shapes[cut]
        assert torch.equal(model.forward_from(cut, h), out)


def test_seed_makes_initialisation_reproducible():
    a = build_model("resnet18", seed=3, width=4)
    b = build_model("resnet18", seed=3, width=4)
    c = build_model("resnet18", seed=4, width=4)
    assert all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters()))
    assert not all(torch.equal(p, q) for p, q in zip(a.parameters(), c.parameters()))


def test_architectures_match_the_papers():
    assert len(build_model("preact_resnet18", width=64).cuts) == 10  # stem, 8 blocks, pool
    assert build_model("preact_resnet18", width=64).cut_shapes()["pool"] == (512,)
    assert build_model("resnet34", width=4).cuts[-2] == "block16"
    assert len([m for m in list_models() if len(m) == 5 and m.startswith("r")]) == 16  # R_abcd
    assert build_model("r1111", width=4).cuts == build_model("resnet10", width=4).cuts
    # pre-activation stem is a bare conv (no BN/ReLU); CIFAR stem is conv-BN-ReLU without max-pool
    assert isinstance(build_model("preact_resnet18", width=4).pieces["stem"], torch.nn.Conv2d)
    stem = build_model("resnet18", width=4).pieces["stem"]
    assert [type(m).__name__ for m in stem] == ["Conv2d", "BatchNorm2d", "ReLU"]
    assert build_model("resnet18", width=4).cut_shapes((3, 32, 32))["stem"] == (4, 32, 32)
    assert build_model("resnet18", width=4, in_channels=1).cut_shapes((1, 28, 28))["block8"] == (32, 4, 4)


def test_bad_names_are_refused_with_choices():
    with pytest.raises(ValueError, match="valid: .*preact_resnet18"):
        build_model("resnet19")
    with pytest.raises(ValueError, match="valid: stem, block1"):
        build_model("resnet18", width=4).forward_to(torch.zeros(1, 3, 32, 32), "layer3")


def test_smith_architectures_cut_where_the_paper_cuts():
    r = build_model("resnet18_imagenet", width=64)
    assert r.cuts == ("stem", "layer1", "layer2", "layer3", "layer4", "pool")
    shapes = r.cut_shapes((3, 28, 28))  # ImageNet stem on 28x28: 7x7 after the max-pool
    assert shapes["stem"] == (64, 7, 7) and shapes["layer2"] == (128, 4, 4) and shapes["layer4"] == (512, 1, 1)
    assert [type(m).__name__ for m in r.pieces["stem"]] == ["Conv2d", "BatchNorm2d", "ReLU", "MaxPool2d"]
    v = build_model("vgg19")  # torchvision's layout: the paper's cuts "before features.2/.10/.23/.30, classifier.0"
    s = v.cut_shapes((3, 32, 32))
    assert s["features_1"] == (64, 32, 32) and s["features_9"] == (128, 8, 8)
    assert s["features_22"] == (512, 4, 4) and s["features_29"] == (512, 2, 2) and s["avgpool"] == (25088,)
    assert sum(isinstance(m, torch.nn.Conv2d) for m in v.modules()) == 16


def test_input_pseudo_cut_lets_a_stitch_generate_the_image():
    from stitchkit.networks.models import INPUT
    from stitchkit.stitching.stitches import stitch_models

    model = build_model("r1111", seed=0, width=4).eval()
    x = torch.randn(2, 3, 32, 32)
    assert torch.equal(model.forward_from(INPUT, x), model(x))
    assert torch.equal(model.forward_intermediates(x, [INPUT, "block1"])[INPUT], x)
    assert model.shape_at(INPUT) == (3, 32, 32) and model.check_cut(INPUT) == -1
    assert model.shape_at("block3") == model.cut_shapes()["block3"]
    stitched = stitch_models(model, "block3", model, INPUT, kind="strided_or_upsample")  # 8x8 map -> image
    assert stitched(x).shape == (2, 10)
    with pytest.raises(ValueError, match="'input'"):
        model.check_cut("nope")


def test_vit_ti_is_balogh_and_jelasitys():
    model = build_model("vit_ti", seed=0)
    assert sum(p.numel() for p in model.parameters()) == 5_362_762  # dim 192, depth 12, patch 4, 65 tokens
    assert model.cuts == ("embed", *[f"block{k}" for k in range(1, 13)], "pool")
    assert model.cut_shapes()["block7"] == (65, 192) and model.cut_shapes()["pool"] == (192,)
    assert model.pieces["block1"].attn.num_heads == 3
    x = torch.randn(2, 3, 32, 32)
    model.eval()
    assert torch.equal(model.forward_from("block6", model.forward_to(x, "block6")), model(x))


def test_cut_shapes_are_computed_once_per_input_shape():
    from stitchkit.networks.models import build_model

    m = build_model("resnet18", width=4)
    first = m.cut_shapes((3, 32, 32))
    first["block1"] = None  # a caller's copy: the cache is not changed through it
    assert m.cut_shapes((3, 32, 32))["block1"] == (4, 32, 32)
    assert m.shape_at("block8", (3, 64, 64)) == (32, 8, 8)
    assert len(m.__dict__["_shape_cache"]) == 2


def test_myrtles_logit_scale_multiplies_the_logits_and_keeps_the_cuts():
    """Page's Myrtle CNN multiplies its logits by 0.125 (``logit_scale``); the same weights give
    the unscaled logits times that constant, and the cuts are the same."""
    import pytest
    import torch

    from stitchkit.networks.models import build_model

    torch.manual_seed(0)
    plain = build_model("myrtle", width=4)
    scaled = build_model("myrtle", width=4, logit_scale=0.125)
    scaled.load_state_dict(plain.state_dict())
    x = torch.randn(2, 3, 32, 32)
    plain.eval(), scaled.eval()
    assert torch.allclose(scaled(x), 0.125 * plain(x), atol=1e-6)
    assert plain.cuts == scaled.cuts
    with pytest.raises(ValueError, match="logit_scale"):
        build_model("myrtle", width=4, logit_scale=0.0)
