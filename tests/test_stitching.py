import pytest
import torch

from stitchkit.base.linalg import least_squares, to_rows
from stitchkit.data import batches as batches_mod
from stitchkit.data.splits import Split
from stitchkit.networks import train
from stitchkit.networks.models import build_model
from stitchkit.networks.train import TrainConfig
from stitchkit.stitching import stitches


def test_identity_stitch_reproduces_unstitched_logits_exactly():
    model = build_model("resnet18", seed=0, width=4).eval()
    x = torch.randn(4, 3, 32, 32)
    full = model(x)
    for cut in model.cuts:
        shape = model.cut_shapes()[cut]
        st = stitches.identity_init(stitches.make_stitch("conv", shape, shape))
        stitched = stitches.StitchedModel(model, cut, model, cut, st)
        assert torch.equal(stitched(x), full), cut
        parameterless = stitches.StitchedModel(model, cut, model, cut, stitches.make_stitch("identity", shape, shape))
        assert torch.equal(parameterless(x), full)


def test_stitch_kinds_map_shapes():
    for kind in ("bn_conv_bn", "conv"):
        out = stitches.make_stitch(kind, (8, 16, 16), (4, 16, 16))(torch.randn(2, 8, 16, 16))
        assert out.shape == (2, 4, 16, 16)
        assert stitches.make_stitch(kind, (8,), (5,))(torch.randn(3, 8)).shape == (3, 5)
    assert stitches.make_stitch("resize_conv", (8, 16, 16), (4, 8, 8))(torch.randn(2, 8, 16, 16)).shape == (2, 4, 8, 8)
    down = stitches.make_stitch("strided_or_upsample", (8, 16, 16), (4, 4, 4))
    assert down(torch.randn(2, 8, 16, 16)).shape == (2, 4, 4, 4) and down.body.stride == (4, 4)
    up = stitches.make_stitch("strided_or_upsample", (8, 4, 4), (4, 16, 16))
    assert up(torch.randn(2, 8, 4, 4)).shape == (2, 4, 16, 16)
    with pytest.raises(ValueError, match="resize_conv"):
        stitches.make_stitch("conv", (8, 16, 16), (4, 8, 8))
    with pytest.raises(ValueError, match="valid: bn_conv_bn"):
        stitches.make_stitch("mlp", (8,), (8,))


def test_frozen_halves_stay_frozen_and_in_eval_mode():
    a, b = build_model("resnet10", seed=0, width=4), build_model("resnet10", seed=1, width=4)
    s = stitches.stitch_models(a, "block2", b, "block2", device="cpu")
    s.train()
    assert not a.training and not b.training and s.stitch.training
    assert all(not p.requires_grad for p in list(a.parameters()) + list(b.parameters()))
    stitches.stitch_models(a, "block2", b, "block2", frozen_bn="train", device="cpu").train()
    assert a.training and b.training
    with pytest.raises(ValueError, match="valid: eval, train"):
        stitches.stitch_models(a, "block2", b, "block2", frozen_bn="frozen")


def test_least_squares_recovers_a_planted_affine_map():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(5000, 12, generator=g, dtype=torch.float64)
    w = torch.randn(12, 7, generator=g, dtype=torch.float64)
    b = torch.randn(7, generator=g, dtype=torch.float64)
    w_hat, b_hat = least_squares(x, x @ w + b, chunk=999)
    assert torch.allclose(w_hat, w, atol=1e-9) and torch.allclose(b_hat, b, atol=1e-9)
    # rank-deficient X: the cut-off gives the minimum-norm solution instead of blowing up
    xd = torch.cat([x, x[:, :1]], dim=1)
    w_d, _ = least_squares(xd, x @ w + b)
    assert torch.allclose(xd @ w_d, x @ w, atol=1e-8)


def test_rows_of_maps_tokens_and_vectors():
    h = torch.randn(2, 3, 4, 5)
    assert to_rows(h).shape == (40, 3) and torch.equal(to_rows(h)[7], h[0, :, 1, 2])
    assert to_rows(torch.randn(2, 6, 8)).shape == (12, 8) and to_rows(torch.randn(5, 3)).shape == (5, 3)
    with pytest.raises(ValueError, match="expected"):
        to_rows(torch.randn(3))


@pytest.mark.parametrize("kind, in_shape, out_shape", [
    ("conv", (6, 8, 8), (5, 8, 8)),
    ("bn_conv_bn", (6, 8, 8), (5, 8, 8)),
    ("bn_conv_bn", (6,), (5,)),
    ("resize_conv", (6, 8, 8), (5, 4, 4)),
    ("strided_or_upsample", (6, 8, 8), (5, 4, 4)),
    ("strided_or_upsample", (6, 4, 4), (5, 8, 8)),
    ("conv", (4, 6), (4, 3)),  # ViT tokens: a Linear on every token
])
def test_dm_init_recovers_a_map_the_stitch_can_express(kind, in_shape, out_shape):
    """A target made by a random stitch of the same kind (in eval mode) is matched exactly."""
    torch.manual_seed(0)
    x = torch.randn(64, *in_shape, dtype=torch.float64).float() * 3 + 1
    teacher = stitches.make_stitch(kind, in_shape, out_shape).eval()
    for m in teacher.modules():  # non-trivial BN statistics in the teacher
        if isinstance(m, torch.nn.modules.batchnorm._BatchNorm):
            m.running_mean.uniform_(-1, 1), m.running_var.uniform_(0.5, 2)
    with torch.no_grad():
        y = teacher(x)
    student = stitches.make_stitch(kind, in_shape, out_shape)
    info = stitches.init_dm(student, x, y)
    assert info["dm_residual"] < 1e-8
    with torch.no_grad():
        assert torch.allclose(student.eval()(x), y, atol=1e-4)


def test_dm_self_stitch_reproduces_the_model_at_every_cut():
    model = build_model("resnet10", seed=0, width=4).eval()
    x = torch.randn(32, 3, 32, 32)
    full = model(x)
    acts = model.forward_intermediates(x)
    for cut, h in acts.items():
        st = stitches.make_stitch("bn_conv_bn", tuple(h.shape[1:]), tuple(h.shape[1:]))
        stitches.init_dm(st, h, h)
        stitched = stitches.StitchedModel(model, cut, model, cut, st, stitch_bn="frozen").train()
        assert not any(m.training for m in st.modules() if isinstance(m, torch.nn.BatchNorm2d))
        with torch.no_grad():
            assert torch.allclose(stitched.eval()(x), full, atol=1e-3), cut

def _toy_task(n=256):
    # labels are a function of the sender's block2 activations: a stitch can learn the task
    g = torch.Generator().manual_seed(0)
    images = torch.randint(0, 256, (n, 3, 32, 32), dtype=torch.uint8, generator=g)
    labels = (images[:, 0].float().mean((1, 2)) > images[:, 2].float().mean((1, 2))).long()
    return Split(images, labels, ("a", "b"))


def test_task_loss_matching_improves_a_toy_stitch():
    split = _toy_task()
    sender = build_model("resnet10", seed=0, width=4, num_classes=2)
    receiver = build_model("resnet10", seed=1, width=4, num_classes=2)
    st = stitches.stitch_models(sender, "block1", receiver, "block1", seed=0, device="cpu")
    before = stitches.evaluate_stitch(st, split, normalisation="cifar", device="cpu", precision="fp32")
    cfg = TrainConfig(epochs=15, batch_size=32, optimizer="adam", lr=1e-2, weight_decay=0, schedule="cosine",
                      augment=False, precision="fp32")
    history = stitches.train_stitch(st, split, cfg, normalisation="cifar", device="cpu", progress=False)
    after = stitches.evaluate_stitch(st, split, normalisation="cifar", device="cpu", precision="fp32")
    assert history[-1]["loss"] < history[0]["loss"]
    assert after["loss"] < before["loss"]
    # the frozen halves did not move
    assert torch.equal(sender.pieces["stem"][0].weight, build_model("resnet10", seed=0, width=4, num_classes=2)
                       .pieces["stem"][0].weight)


def test_cached_activations_give_the_same_training_as_recomputing():
    split = _toy_task(64)
    cfg = TrainConfig(epochs=2, batch_size=16, optimizer="adam", lr=1e-3, weight_decay=0, schedule="cosine",
                      augment=False, precision="fp32")
    results = []
    for cached in (True, False):
        sender = build_model("resnet10", seed=0, width=4, num_classes=2)
        receiver = build_model("resnet10", seed=1, width=4, num_classes=2)
        st = stitches.stitch_models(sender, "block3", receiver, "block3", seed=0, device="cpu")
        if cached:
            acts = stitches.activations(sender, "block3", split, normalisation="cifar", device="cpu",
                                         precision="fp32")
            stitches.train_stitch(st, split, cfg, normalisation="cifar", device="cpu", activations=acts,
                                   progress=False)
        else:  # the uncached path: full stitched model on image batches with the same order
            batches = batches_mod.Batches(split, 16, normalisation="cifar", shuffle=True, seed=0)
            train.train(st, batches, cfg, device="cpu", progress=False)
        results.append(st.stitch.state_dict())
    for k in results[0]:
        assert torch.allclose(results[0][k].float(), results[1][k].float(), atol=1e-5), k
