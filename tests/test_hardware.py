"""Precision chosen by the hardware: bf16 only where it is native, and that choice is the faster one."""

import time

import pytest
import torch

from stitchkit import hardware
from stitchkit.models import build_model


def test_auto_resolves_to_bf16_only_with_native_support(monkeypatch):
    monkeypatch.setattr(hardware, "cpu_has_native_bf16", lambda: False)
    assert hardware.resolve_precision("auto", "cpu") == "fp32"
    monkeypatch.setattr(hardware, "cpu_has_native_bf16", lambda: True)
    assert hardware.resolve_precision("auto", "cpu") == "bf16"
    assert hardware.resolve_precision("fp32", "cpu") == "fp32" and hardware.resolve_precision("bf16", "cpu") == "bf16"
    with pytest.raises(ValueError, match="valid: auto, bf16, fp32"):
        hardware.resolve_precision("fp16", "cpu")


def _step_seconds(precision: str, steps: int = 4) -> float:
    model = build_model("resnet10", seed=0, width=16).to(memory_format=torch.channels_last)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(64, 3, 32, 32).contiguous(memory_format=torch.channels_last)
    y = torch.randint(0, 10, (64,))
    best = float("inf")
    for i in range(steps + 1):
        t0 = time.perf_counter()
        with hardware.autocast(torch.device("cpu"), precision):
            loss = torch.nn.functional.cross_entropy(model(x).float(), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if i:  # the first step warms up
            best = min(best, time.perf_counter() - t0)
    return best


def test_the_automatic_choice_is_not_slower_than_the_alternative_on_this_cpu():
    chosen = hardware.resolve_precision("auto", "cpu")
    other = "fp32" if chosen == "bf16" else "bf16"
    # a choice check with a wide margin, not a performance claim (those live in benchmarks/)
    assert _step_seconds(chosen) <= 1.5 * _step_seconds(other), f"auto chose {chosen} ({hardware.cpu_capability()})"


def test_channels_last_only_where_it_is_faster_on_the_device():
    # CPU: NCHW below 16 channels (faster at width 8, and 4-channel channels_last kernels hang)
    assert not hardware.channels_last_ok(build_model("preact_resnet18", seed=0, width=8))
    assert hardware.channels_last_ok(build_model("preact_resnet18", seed=0, width=16))
    assert not hardware.channels_last_ok(torch.nn.Linear(3, 3))  # no convolution: nothing to gain
    assert hardware.CHANNELS_LAST_MIN["cuda"] == 8  # GPUs: tensor cores take multiples of 8


def test_training_compiles_only_narrow_conv_nets_trained_long_on_a_cpu(monkeypatch):
    monkeypatch.delenv("STITCHKIT_COMPILE", raising=False)
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
    from stitchkit.hardware import narrow_conv_guard

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
