"""The device and the numeric precision a run uses, chosen from what the hardware does natively.

``precision="auto"`` (every recipe's default) means bf16 autocast + channels_last only where the
device computes bf16 natively: a CUDA GPU with bf16 support, or a CPU with AVX512-BF16 or AMX.
Elsewhere (most laptops; AVX2-only servers) bf16 is emulated and about 10x slower than fp32, so
``auto`` gives fp32 with channels_last. ``STITCHKIT_PRECISION=fp32|bf16`` makes ``auto`` mean
that precision on every device (to test either on one machine). The choice never changes a cache
key: a model trained in either precision is the same recipe, and a page records which it ran.

Training runs in that precision; **measuring never does**. Every number a page judges (test
accuracies of networks and stitched networks, the activations they are computed from, DM
targets) is computed in fp32 (:data:`MEASURE_PRECISION`; on a GPU with TF32 off as well, see
:func:`exact_fp32`), whatever the training precision. Measured on an AMD EPYC with AVX512-BF16
(B-F2A at ``smoke``): with the stitched forward in bf16 the direct-matching self-stitch, which
is exact by construction, scored 0.10 points below its receiver (0.30 from the command line), so
the control that vouches for every stitch failed by rounding alone, and the same page's numbers
differed between CPU kinds. In fp32 it is 0 on both kinds, and a forward-only pass costs a small
fraction of training.

Memory format: channels_last for convolutional networks whose convolutions all have at least
8 output channels on a GPU, at least 16 on a CPU (:func:`channels_last_ok`). Narrower ones stay
NCHW. On the 2-core AVX2 CPU of the `demo` pages (torch 2.13, fp32, pre-activation ResNet-18
training, ``benchmarks/bench_cpu.py``), channels_last is faster at width 16 (about 1.3x) but
slower at width 8 (about 0.75x: its kernels barely use the second thread there, NCHW's do); and
oneDNN's channels_last kernels hang in ``backward()`` for 4-channel convolutions (a width-4
ResNet-10 hangs, widths 8 and 16 and NCHW do not).
"""

from __future__ import annotations

import contextlib
import functools
import os
import warnings

import torch
from torch import nn

from .environment import PRECISION_ENV  # noqa: F401  (what "auto" means: part of this module's API)

PRECISIONS = ("auto", "bf16", "fp32")
# The precision of every measurement a page judges (accuracies, activations); see the docstring.
MEASURE_PRECISION = "fp32"


def default_device() -> torch.device:
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def as_device(device: torch.device | str | None = None) -> torch.device:
    return torch.device(device) if device is not None else default_device()


def device_name(device: torch.device | str | None = None) -> str:
    device = as_device(device)
    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    return f"cpu ({os.cpu_count()} cores, {torch.get_num_threads()} threads, {cpu_capability()})"


def cpu_capability() -> str:
    """The CPU's vector capability as torch sees it, plus its native bf16 support."""
    cap = torch.backends.cpu.get_cpu_capability()
    return f"{cap}, native bf16" if cpu_has_native_bf16() else cap


@functools.lru_cache(maxsize=None)
def cpu_has_native_bf16() -> bool:
    checks = ("_is_avx512_bf16_supported", "_is_amx_tile_supported")
    return any(bool(getattr(torch.cpu, name, lambda: False)()) for name in checks)


def native_bf16(device: torch.device | str | None = None) -> bool:
    """Whether ``device`` computes bf16 matrix products natively (not emulated)."""
    device = as_device(device)
    if device.type == "cuda":
        return torch.cuda.is_bf16_supported()
    if device.type == "cpu":
        return cpu_has_native_bf16()
    return False


def resolve_precision(precision: str, device: torch.device | str | None = None) -> str:
    """'bf16' or 'fp32' for ``precision`` on ``device`` ('auto' asks the hardware)."""
    if precision not in PRECISIONS:
        raise ValueError(f"unknown precision {precision!r}; valid: {', '.join(PRECISIONS)}")
    if precision == "auto":
        forced = os.environ.get(PRECISION_ENV, "").strip().lower()
        if forced:
            if forced not in ("bf16", "fp32"):
                raise ValueError(f"{PRECISION_ENV}={forced!r} is invalid; valid: bf16, fp32 (or unset: "
                                 "bf16 where the hardware computes it natively)")
            return forced
        return "bf16" if native_bf16(device) else "fp32"
    return precision


@contextlib.contextmanager
def exact_fp32(device: torch.device | str | None = None):
    """fp32 that is fp32: on a CUDA device TF32 matrix products and convolutions are switched off
    inside the context (PyTorch lets cuDNN use TF32 by default, which rounds inputs to 10 mantissa
    bits); a no-op on a CPU. Measurements run inside it (see the module docstring)."""
    if as_device(device).type != "cuda":
        yield
        return
    matmul = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = False
    try:
        with torch.backends.cudnn.flags(enabled=torch.backends.cudnn.enabled, allow_tf32=False):
            yield
    finally:
        torch.backends.cuda.matmul.allow_tf32 = matmul


# Fewest output channels of every Conv2d for compiled CPU training: a compiled width-4 ResNet-18
# hangs in its second training step on the demo CPU (reproduced; likely the 4-channel oneDNN hang
# of the module docstring, if inductor picks channels_last for the convolutions); width 8 trains.
COMPILE_MIN_CHANNELS = 8
# Fewest optimiser steps for which a CPU run compiles its training step (compilation takes
# 3-40 s: worth it over minutes of training, never over a test's few steps).
COMPILE_MIN_STEPS = 500


@functools.lru_cache(maxsize=1)
def _cpp_compiler() -> bool:
    import shutil

    return any(shutil.which(c) for c in ("cc", "gcc", "clang", "c++", "g++"))


def compile_wins(device: torch.device | str | None = None, model: nn.Module | None = None, steps: int = 0) -> bool:
    """Whether training ``model`` for ``steps`` optimiser steps runs under ``torch.compile``.

    ``STITCHKIT_COMPILE=0`` never, ``=1`` always (given a C/C++ compiler on a CPU). Otherwise:
    on a CPU, a convolutional network that stays NCHW (narrow: see :func:`channels_last_ok`) but
    has at least :data:`COMPILE_MIN_CHANNELS` channels in every convolution, trained for at least
    :data:`COMPILE_MIN_STEPS` steps; never on a GPU. Measured on the 2-core
    AVX2 CPU of the demo pages (torch 2.13, fp32, crop + flip, batch 128, 120 steps including
    compilation, ``benchmarks/bench_cpu.py``): pre-activation ResNet-18 width 8 773 -> 1177
    img/s, the width-8 depth-20 bottleneck ResNet 387 -> 591 (about 1.5x: fusing BatchNorm and
    ReLU, which dominate at 8 channels); the width-8 Myrtle CNN about even; the width-16
    channels_last ResNet-18 (452 -> 381) and a width-64 ViT (510 -> 454) slower, so not those. On an H100 it does not win in the zoo's training
    path (R2222 width 64, batch 256: eager 2.4-2.8 s per epoch, compiled 2.9-3.3 s plus 22 s of
    compilation)."""
    flag = os.environ.get("STITCHKIT_COMPILE")
    dev = as_device(device)
    if flag == "0" or (dev.type == "cpu" and not _cpp_compiler()):
        return False
    if flag == "1":
        return True
    if dev.type != "cpu" or model is None or steps < COMPILE_MIN_STEPS:
        return False
    convs = [m for m in model.modules() if isinstance(m, nn.Conv2d)]
    return bool(convs) and not channels_last_ok(model) and min(m.out_channels for m in convs) >= COMPILE_MIN_CHANNELS


def narrow_conv_guard(model: nn.Module, device: torch.device | str | None = None):
    """A context that trains ``model`` without oneDNN (PyTorch's native CPU convolutions) when
    it is on a CPU and has a convolution narrower than :data:`COMPILE_MIN_CHANNELS` channels;
    otherwise a no-op. Seen with torch 2.13 on this AVX2 CPU: an OOD detector of width 4
    trained after width-4 networks in the same process died in its backward pass ("double free
    or corruption", reproduced three times), and never with oneDNN off for the detector."""
    convs = [m for m in model.modules() if isinstance(m, nn.Conv2d)]
    narrow = bool(convs) and min(min(m.in_channels, m.out_channels) for m in convs) < COMPILE_MIN_CHANNELS
    if as_device(device).type == "cpu" and narrow:
        return _without_onednn()
    return contextlib.nullcontext()


@contextlib.contextmanager
def _without_onednn():
    # torch's flags context also re-sets oneDNN's TF32 switch, which warns about Intel GPUs on
    # every enter and exit; that warning says nothing about this use, so it is silenced there only.
    def quietly(fn):
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="TF32 acceleration on top of oneDNN")
            return fn()

    flags = torch.backends.mkldnn.flags(enabled=False)
    quietly(flags.__enter__)
    try:
        yield
    finally:
        quietly(lambda: flags.__exit__(None, None, None))


def autocast(device: torch.device, precision: str):
    """bf16 autocast when the resolved precision is bf16, else a no-op context."""
    enabled = resolve_precision(precision, device) == "bf16"
    return torch.autocast(device.type, dtype=torch.bfloat16, enabled=enabled)


@contextlib.contextmanager
def measuring(device: torch.device | str | None, precision: str = MEASURE_PRECISION):
    """The numeric context of a forward pass that measures: bf16 autocast if ``precision``
    resolves to bf16, else :func:`exact_fp32`."""
    device = as_device(device)
    if resolve_precision(precision, device) == "bf16":
        with autocast(device, "bf16"):
            yield
    else:
        with exact_fp32(device):
            yield



# Fewest output channels of every Conv2d for channels_last, by device type (see the module docstring).
CHANNELS_LAST_MIN = {"cuda": 8, "cpu": 16}
# On a CPU that trains in bf16 (native bf16, or forced), from width 8 on (never under 8: the
# 4-channel hang). Two measurements on AMD EPYCs with AVX512-BF16 (2 cores, torch 2.13, eager
# ResNet-18 width 8 training): the reliability review's, bf16 NCHW 0.77x fp32 NCHW and bf16
# channels_last 1.27x; shared/ENVIRONMENT.md's, bf16 NCHW 900-1,330 img/s, fp32 NCHW 1,250-1,370,
# bf16 channels_last 1,340-1,870. `make bench` (benchmarks/bench_cpu.py) times the library's
# choice against the other format on the machine at hand.
CHANNELS_LAST_MIN_CPU_BF16 = 8


def channels_last_min(device: torch.device | str) -> int:
    """Fewest output channels of every Conv2d for channels_last on ``device`` in the precision
    its training resolves to ("auto")."""
    device = as_device(device)
    if device.type == "cpu" and resolve_precision("auto", device) == "bf16":
        return CHANNELS_LAST_MIN_CPU_BF16
    return CHANNELS_LAST_MIN.get(device.type, CHANNELS_LAST_MIN["cpu"])


def channels_last_ok(model: nn.Module) -> bool:
    """Whether ``model`` (and its inputs) should use channels_last on the device its parameters
    are on: every Conv2d has at least :func:`channels_last_min` output channels there."""
    convs = [m for m in model.modules() if isinstance(m, nn.Conv2d)]
    if not convs:
        return False
    least = channels_last_min(convs[0].weight.device)
    return all(m.out_channels >= least for m in convs)


def to_memory_format(model: nn.Module) -> nn.Module:
    """``model`` in channels_last where :func:`channels_last_ok`, else unchanged (NCHW)."""
    return model.to(memory_format=torch.channels_last) if channels_last_ok(model) else model
