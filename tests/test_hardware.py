"""Precision chosen by the hardware (bf16 only where it is native, or as STITCHKIT_PRECISION says);
measurements in fp32 whatever the training precision. Which choice is faster is measured in
benchmarks/bench_cpu.py, never timed here."""

import pytest
import torch

from stitchkit.base import environment, hardware
from stitchkit.networks.models import build_model


def test_auto_resolves_to_bf16_only_with_native_support(monkeypatch):
    monkeypatch.delenv(environment.PRECISION_ENV, raising=False)
    monkeypatch.setattr(hardware, "cpu_has_native_bf16", lambda: False)
    assert hardware.resolve_precision("auto", "cpu") == "fp32"
    monkeypatch.setattr(hardware, "cpu_has_native_bf16", lambda: True)
    assert hardware.resolve_precision("auto", "cpu") == "bf16"
    assert hardware.resolve_precision("fp32", "cpu") == "fp32" and hardware.resolve_precision("bf16", "cpu") == "bf16"
    with pytest.raises(ValueError, match="valid: auto, bf16, fp32"):
        hardware.resolve_precision("fp16", "cpu")


def test_the_setting_forces_either_precision_and_names_the_valid_ones(monkeypatch):
    for native in (False, True):
        monkeypatch.setattr(hardware, "cpu_has_native_bf16", lambda native=native: native)
        for forced in ("fp32", "bf16", "BF16 "):
            monkeypatch.setenv(environment.PRECISION_ENV, forced)
            assert hardware.resolve_precision("auto", "cpu") == forced.strip().lower()
            assert hardware.resolve_precision("fp32", "cpu") == "fp32"  # an explicit recipe still wins
    monkeypatch.setenv(environment.PRECISION_ENV, "fp16")
    with pytest.raises(ValueError, match="STITCHKIT_PRECISION='fp16' is invalid; valid: bf16, fp32"):
        hardware.resolve_precision("auto", "cpu")


@pytest.mark.parametrize("training", ["fp32", "bf16"])
def test_channels_last_only_where_it_is_faster_on_the_device(monkeypatch, training):
    monkeypatch.setenv(environment.PRECISION_ENV, training)
    # CPU in fp32: NCHW below 16 channels (faster at width 8); in bf16 channels_last from 8 on.
    # Never under 8 channels on a CPU: 4-channel channels_last kernels hang.
    assert hardware.channels_last_ok(build_model("preact_resnet18", seed=0, width=8)) == (training == "bf16")
    assert not hardware.channels_last_ok(build_model("preact_resnet18", seed=0, width=4))
    assert hardware.channels_last_ok(build_model("preact_resnet18", seed=0, width=16))
    assert not hardware.channels_last_ok(torch.nn.Linear(3, 3))  # no convolution: nothing to gain
    assert hardware.CHANNELS_LAST_MIN["cuda"] == 8  # GPUs: tensor cores take multiples of 8


def test_training_compiles_only_narrow_conv_nets_trained_long_on_a_cpu(monkeypatch):
    monkeypatch.delenv("STITCHKIT_COMPILE", raising=False)
    monkeypatch.setenv(environment.PRECISION_ENV, "bf16")  # width 8 trains channels_last in bf16: not compiled
    assert not hardware.compile_wins("cpu", build_model("resnet10", seed=0, width=8), hardware.COMPILE_MIN_STEPS)
    monkeypatch.setenv(environment.PRECISION_ENV, "fp32")  # the rule measured on an AVX2 CPU in fp32
    monkeypatch.setattr(hardware, "_cpp_compiler", lambda: True)
    narrow, wide = build_model("resnet10", seed=0, width=8), build_model("resnet10", seed=0, width=16)
    long = hardware.COMPILE_MIN_STEPS
    assert hardware.compile_wins("cpu", narrow, long)
    assert not hardware.compile_wins("cpu", narrow, long - 1)  # a test's few steps: not worth compiling
    assert not hardware.compile_wins("cpu", wide, long)  # channels_last: compiled is slower there
    assert not hardware.compile_wins("cpu", build_model("resnet10", seed=0, width=4), long)  # 4 channels hang
    assert not hardware.compile_wins("cpu", torch.nn.Linear(3, 3), long)
    monkeypatch.setenv("STITCHKIT_COMPILE", "0")
    assert not hardware.compile_wins("cpu", narrow, long)
    monkeypatch.setenv("STITCHKIT_COMPILE", "1")
    assert hardware.compile_wins("cpu", wide, 1)
    monkeypatch.setattr(hardware, "_cpp_compiler", lambda: False)
    assert not hardware.compile_wins("cpu", narrow, long)  # no compiler: inductor cannot build its kernels


def test_narrow_conv_nets_train_without_onednn_on_a_cpu():
    from stitchkit.base.hardware import narrow_conv_guard

    narrow = torch.nn.Sequential(torch.nn.Conv2d(4, 4, 3), torch.nn.ReLU())
    wide = torch.nn.Sequential(torch.nn.Conv2d(8, 16, 3), torch.nn.ReLU())
    before = torch.backends.mkldnn.enabled
    with narrow_conv_guard(narrow, "cpu"):
        assert not torch.backends.mkldnn.enabled
    assert torch.backends.mkldnn.enabled == before
    with narrow_conv_guard(wide, "cpu"):
        assert torch.backends.mkldnn.enabled == before
    with narrow_conv_guard(torch.nn.Linear(2, 2), "cpu"):
        assert torch.backends.mkldnn.enabled == before


@pytest.mark.parametrize("training", ["fp32", "bf16"])
def test_measurements_are_fp32_whatever_the_training_precision(monkeypatch, training):
    """The exact-stitch checks hold in either training precision: accuracies and activations are
    measured in fp32 (on a CPU with native bf16, a bf16 forward put the DM self-stitch of B-F2A's
    smoke run 0.10 points below its receiver)."""
    from stitchkit.data.batches import Batches
    from stitchkit.data.splits import Split
    from stitchkit.networks.train import evaluate, predict
    from stitchkit.stitching import stitches

    monkeypatch.setenv(environment.PRECISION_ENV, training)
    g = torch.Generator().manual_seed(0)
    split = Split(torch.randint(0, 256, (96, 3, 32, 32), dtype=torch.uint8, generator=g),
                  torch.randint(0, 10, (96,), generator=g), tuple("abcdefghij"))
    model = build_model("resnet10", seed=0, width=8).eval()
    batches = Batches(split, 32, normalisation="none", device="cpu")
    with torch.no_grad():
        reference = torch.cat([model(x) for x, _ in batches])
    logits, _ = predict(model, batches, device="cpu")
    assert logits.dtype == torch.float32 and torch.equal(logits, reference)
    receiver = evaluate(model, batches, device="cpu")["accuracy"]
    # a DM stitch of a network into itself scores exactly its receiver's accuracy
    h = stitches.activations(model, "block2", split, normalisation="none", device="cpu",
                              precision=hardware.MEASURE_PRECISION)
    st = stitches.stitch_models(model, "block2", model, "block2", kind="conv", device="cpu",
                                 input_shape=(3, 32, 32))
    stitches.init_dm(st.stitch, h, h)
    assert stitches.evaluate_stitch(st, split, normalisation="none", device="cpu")["accuracy"] == receiver
