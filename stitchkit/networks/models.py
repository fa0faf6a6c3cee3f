"""Model registry and networks with named cut points.

Every model is a :class:`CutModel`: an ordered chain of named pieces whose outputs are the cut
points (``stem``, ``block1``, ..., ``pool``), followed by the classifier ``head``. Because the
full forward is literally the chain, ``forward_from(cut, forward_to(x, cut))`` equals
``forward(x)`` bit for bit. ``forward_intermediates(x, cuts)`` (timm's name) returns the
activations at several cuts from one forward pass; stitching, similarity and caching all get
activations through it.

Registered builders (``list_models()``):

- ``preact_resnet18``: Bansal et al.'s pre-activation ResNet-18, width k (stages k, 2k, 4k, 8k),
  3x3 stem conv with no BN/ReLU; ``final_bn=True`` (default, the standard pre-activation
  network the paper describes) adds BN-ReLU before pooling, which the authors' code lacks
  (``final_bn=False`` reproduces the code).
- ``resnet10``, ``resnet18``, ``resnet34`` and the 16 small ResNets ``r1111`` ... ``r2222`` of
  Hernandez et al. (digit i = BasicBlocks in stage i): CIFAR stem (3x3 s1 conv + BN + ReLU, no
  max-pool), post-activation BasicBlocks, global average pool, linear head.
- ``resnet18_imagenet``: Smith & Marcu's torchvision-style ResNet-18 with the ImageNet stem
  (7x7 stride-2 conv + BN + ReLU + 3x3 stride-2 max-pool), one piece per stage: cuts ``stem``,
  ``layer1`` ... ``layer4``, ``pool`` (i.e. before layer1 ... before the classifier). On 28x28
  input the stages see 7x7, 7x7, 4x4, 2x2 and 1x1 maps.
- ``vgg19``: torchvision's VGG19 without BN, one piece per module of ``features`` (cuts
  ``features_0`` ... ``features_36``, the output of torchvision's ``features.i``: cut
  ``features_1`` is "before features.2"), then
  ``avgpool`` (adaptive 7x7 average pool, flattened; "before classifier.0"); the head is the
  three-layer classifier (``hidden`` units, dropout 0.5).
- ``vit_ti``: Balogh & Jelasity's ViT-Ti (image 32, patch 4, dim 192 = ``width``, depth 12, 3
  heads, CLS token, pre-norm blocks): cuts ``embed``, ``block1`` ... ``block12`` (65 tokens of
  ``width`` features each), ``pool`` (the normalised CLS token).
"""

from __future__ import annotations

import copy
import itertools
from typing import Callable, Sequence

import torch
from torch import nn

_REGISTRY: dict[str, Callable[..., "CutModel"]] = {}


def register_model(name: str) -> Callable:
    def deco(fn: Callable[..., "CutModel"]) -> Callable[..., "CutModel"]:
        if name in _REGISTRY:
            raise ValueError(f"model {name!r} registered twice")
        _REGISTRY[name] = fn
        return fn
    return deco


def list_models() -> list[str]:
    return sorted(_REGISTRY)


def build_model(name: str, *, seed: int | None = None, **kwargs) -> "CutModel":
    """Build a registered model; ``seed`` makes the initialisation reproducible."""
    if name not in _REGISTRY:
        raise ValueError(f"unknown model {name!r}; valid: {', '.join(list_models())}")
    if seed is not None:
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            return _REGISTRY[name](**kwargs)
    return _REGISTRY[name](**kwargs)


INPUT = "input"  # the pseudo-cut before the first piece


class CutModel(nn.Module):
    """A chain of named pieces (each output is a cut point) followed by ``head``."""

    def __init__(self, pieces: list[tuple[str, nn.Module]], head: nn.Module) -> None:
        super().__init__()
        self.pieces = nn.ModuleDict(pieces)
        self.head = head
        self.cuts: tuple[str, ...] = tuple(name for name, _ in pieces)
        self.stage_ends: tuple[str, ...] = ()  # ResNets: the last block of each stage (set by the builder)

    def check_cut(self, cut: str) -> int:
        """The index of ``cut`` in :attr:`cuts`; the pseudo-cut ``input`` (the image itself, so a
        stitch into it generates an image) is -1."""
        if cut == INPUT:
            return -1
        try:
            return self.cuts.index(cut)
        except ValueError:
            raise ValueError(f"unknown cut {cut!r} for {type(self).__name__}; valid: {', '.join(self.cuts)} "
                             f"(and {INPUT!r})") from None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for piece in self.pieces.values():
            x = piece(x)
        return self.head(x)

    def forward_intermediates(self, x: torch.Tensor, cuts: Sequence[str] | None = None) -> dict[str, torch.Tensor]:
        """Activations at each of ``cuts`` (default: every cut), in the order given, from one
        forward pass that stops after the deepest requested cut."""
        cuts = list(self.cuts if cuts is None else cuts)
        if not cuts:
            return {}
        last = max(self.check_cut(c) for c in cuts)
        wanted, found = set(cuts), {INPUT: x}
        for name, piece in itertools.islice(self.pieces.items(), last + 1):
            x = piece(x)
            if name in wanted:
                found[name] = x
        return {c: found[c] for c in cuts}

    def forward_to(self, x: torch.Tensor, cut: str) -> torch.Tensor:
        """Activations at ``cut`` (the output of that piece)."""
        return self.forward_intermediates(x, [cut])[cut]

    def forward_between(self, h: torch.Tensor, cut_from: str, cut_to: str) -> torch.Tensor:
        """Activations at ``cut_to`` from activations ``h`` at ``cut_from`` (an earlier cut, or
        the same one): runs only the pieces in between."""
        a, b = self.check_cut(cut_from), self.check_cut(cut_to)
        if b < a:
            raise ValueError(f"cut {cut_to!r} comes before {cut_from!r}; valid: a cut at or after {cut_from!r}")
        for piece in itertools.islice(self.pieces.values(), a + 1, b + 1):
            h = piece(h)
        return h

    def forward_from(self, cut: str, h: torch.Tensor) -> torch.Tensor:
        """Logits from activations ``h`` at ``cut`` (runs every piece after it, then the head)."""
        start = self.check_cut(cut)
        for piece in itertools.islice(self.pieces.values(), start + 1, None):
            h = piece(h)
        return self.head(h)

    def shape_at(self, cut: str, input_shape: tuple[int, ...] = (3, 32, 32)) -> tuple[int, ...]:
        """Per-example activation shape at ``cut`` (the input's for ``input``)."""
        self.check_cut(cut)
        return tuple(input_shape) if cut == INPUT else self.cut_shapes(input_shape)[cut]

    def cut_shapes(self, input_shape: tuple[int, ...] = (3, 32, 32)) -> dict[str, tuple[int, ...]]:
        """Per-example activation shape at every cut, computed on the meta device (no data) once
        per input shape (the architecture never changes; a grid asks for every stitch)."""
        key = tuple(input_shape)
        cache = self.__dict__.setdefault("_shape_cache", {})
        if key not in cache:
            meta = copy.deepcopy(self).to("meta").eval()
            x = torch.empty((1, *key), device="meta")
            shapes = {}
            with torch.no_grad():
                for name, piece in meta.pieces.items():
                    x = piece(x)
                    shapes[name] = tuple(x.shape[1:])
            cache[key] = shapes
        return dict(cache[key])


# --------------------------------------------------------------------------------------------
# Blocks


def conv3x3(c_in: int, c_out: int, stride: int = 1) -> nn.Conv2d:
    return nn.Conv2d(c_in, c_out, 3, stride=stride, padding=1, bias=False)


class BasicBlock(nn.Module):
    """Post-activation block: relu(bn(conv(relu(bn(conv(x))))) + shortcut(x))."""

    def __init__(self, c_in: int, c_out: int, stride: int = 1) -> None:
        super().__init__()
        self.conv1, self.bn1 = conv3x3(c_in, c_out, stride), nn.BatchNorm2d(c_out)
        self.conv2, self.bn2 = conv3x3(c_out, c_out), nn.BatchNorm2d(c_out)
        self.shortcut = nn.Sequential()
        if stride != 1 or c_in != c_out:
            self.shortcut = nn.Sequential(nn.Conv2d(c_in, c_out, 1, stride=stride, bias=False), nn.BatchNorm2d(c_out))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = torch.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return torch.relu(out + self.shortcut(x))


class PreActBlock(nn.Module):
    """Pre-activation block: conv(relu(bn(conv(relu(bn(x)))))) + shortcut, shortcut on relu(bn(x))."""

    def __init__(self, c_in: int, c_out: int, stride: int = 1) -> None:
        super().__init__()
        self.bn1, self.conv1 = nn.BatchNorm2d(c_in), conv3x3(c_in, c_out, stride)
        self.bn2, self.conv2 = nn.BatchNorm2d(c_out), conv3x3(c_out, c_out)
        self.shortcut = None
        if stride != 1 or c_in != c_out:
            self.shortcut = nn.Conv2d(c_in, c_out, 1, stride=stride, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = torch.relu(self.bn1(x))
        skip = self.shortcut(out) if self.shortcut is not None else x
        out = self.conv1(out)
        out = self.conv2(torch.relu(self.bn2(out)))
        return out + skip


class Pool(nn.Module):
    """Global average pool to a vector, optionally after BN-ReLU (pre-activation nets)."""

    def __init__(self, channels: int | None = None) -> None:
        super().__init__()
        self.bn = nn.BatchNorm2d(channels) if channels else None

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # (B, C, H, W) -> (B, C)
        if self.bn is not None:
            x = torch.relu(self.bn(x))
        return x.mean(dim=(2, 3))


def _stages(block: type[nn.Module], blocks: tuple[int, ...], width: int) -> tuple[list[tuple[str, nn.Module]], int]:
    """Residual blocks named block1, block2, ... in order; stage s has width * 2**s channels."""
    pieces, c_in = [], width
    for s, n in enumerate(blocks):
        c_out = width * 2 ** s
        for b in range(n):
            stride = 2 if (s > 0 and b == 0) else 1
            pieces.append((f"block{len(pieces) + 1}", block(c_in, c_out, stride)))
            c_in = c_out
    return pieces, c_in


def resnet(blocks: tuple[int, ...], width: int = 64, num_classes: int = 10, in_channels: int = 3) -> CutModel:
    """CIFAR BasicBlock ResNet (post-activation), stage widths width * 2**i."""
    if len(blocks) != 4 or any(b < 1 for b in blocks):
        raise ValueError(f"blocks must be 4 positive counts, got {blocks}")
    stem = nn.Sequential(conv3x3(in_channels, width), nn.BatchNorm2d(width), nn.ReLU())
    body, c = _stages(BasicBlock, blocks, width)
    model = CutModel([("stem", stem), *body, ("pool", Pool())], nn.Linear(c, num_classes))
    model.stage_ends = tuple(f"block{n}" for n in itertools.accumulate(blocks))
    return model


@register_model("preact_resnet18")
def preact_resnet18(width: int = 64, num_classes: int = 10, in_channels: int = 3, final_bn: bool = True) -> CutModel:
    """Bansal et al.'s pre-activation ResNet-18 (stem conv has no BN/ReLU); ``final_bn`` adds
    BN-ReLU before the pool (standard pre-activation design; absent in the authors' code)."""
    body, c = _stages(PreActBlock, (2, 2, 2, 2), width)
    pool = Pool(c if final_bn else None)
    return CutModel([("stem", conv3x3(in_channels, width)), *body, ("pool", pool)], nn.Linear(c, num_classes))


class PreActBottleneck(nn.Module):
    """Pre-activation bottleneck (He et al. 2016b): 1x1 (c -> m), 3x3 (m -> m, stride), 1x1
    (m -> 4m), each after BN-ReLU; the shortcut (a 1x1 conv where the shape changes) reads
    relu(bn(x))."""

    expansion = 4

    def __init__(self, c_in: int, mid: int, stride: int = 1) -> None:
        super().__init__()
        c_out = mid * self.expansion
        self.bn1, self.conv1 = nn.BatchNorm2d(c_in), nn.Conv2d(c_in, mid, 1, bias=False)
        self.bn2, self.conv2 = nn.BatchNorm2d(mid), conv3x3(mid, mid, stride)
        self.bn3, self.conv3 = nn.BatchNorm2d(mid), nn.Conv2d(mid, c_out, 1, bias=False)
        self.shortcut = None
        if stride != 1 or c_in != c_out:
            self.shortcut = nn.Conv2d(c_in, c_out, 1, stride=stride, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = torch.relu(self.bn1(x))
        skip = self.shortcut(out) if self.shortcut is not None else x
        out = self.conv1(out)
        out = self.conv2(torch.relu(self.bn2(out)))
        out = self.conv3(torch.relu(self.bn3(out)))
        return out + skip


@register_model("preact_resnet164")
def preact_resnet164(width: int = 16, num_classes: int = 10, in_channels: int = 3, depth: int = 164) -> CutModel:
    """Pre-activation bottleneck ResNet for CIFAR (He et al. 2016b): a 3x3 stem conv of ``width``
    channels, three stages of (depth - 2) / 9 bottleneck blocks (18 at depth 164) with inner
    widths width, 2 width, 4 width (outputs 4x that), a final BN-ReLU, the pool. Cuts: stem,
    block1 ... block<3n>, pool."""
    if depth < 11 or (depth - 2) % 9:
        raise ValueError(f"depth must be 9n + 2 with n >= 1 (164: n = 18), got {depth}")
    n = (depth - 2) // 9
    pieces, c_in = [], width
    for s in range(3):
        mid = width * 2 ** s
        for b in range(n):
            pieces.append((f"block{len(pieces) + 1}", PreActBottleneck(c_in, mid, 2 if (s > 0 and b == 0) else 1)))
            c_in = mid * PreActBottleneck.expansion
    return CutModel([("stem", conv3x3(in_channels, width)), *pieces, ("pool", Pool(c_in))],
                    nn.Linear(c_in, num_classes))


class _ConvBNReLU(nn.Sequential):
    def __init__(self, c_in: int, c_out: int, pool: bool) -> None:
        layers = [conv3x3(c_in, c_out), nn.BatchNorm2d(c_out), nn.ReLU()]
        super().__init__(*(layers + ([nn.MaxPool2d(2)] if pool else [])))


class _MaxFlatten(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.amax(x, dim=(2, 3))


class _ScaledLinear(nn.Linear):
    """A linear layer whose output is multiplied by a constant (Page's ``Mul(0.125)``)."""

    def __init__(self, c_in: int, c_out: int, scale: float) -> None:
        super().__init__(c_in, c_out)
        self.scale = float(scale)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return super().forward(x) * self.scale

    def extra_repr(self) -> str:
        return f"{super().extra_repr()}, scale={self.scale}"


@register_model("myrtle")
def myrtle(width: int = 64, num_classes: int = 10, in_channels: int = 3, logit_scale: float = 1.0) -> CutModel:
    """The Myrtle CNN (Page 2018, as in Bansal et al.): Conv-BN-ReLU of ``width`` channels, then
    three Conv-BN-ReLU-MaxPool layers of 2, 4, 8 times ``width``, a global max pool and a linear
    layer. Cuts: layer1 ... layer4, pool. ``logit_scale``: Page's network multiplies the logits
    by 0.125 (``Mul(0.125)``), which its learning rate of 0.4 assumes; 1 leaves them as they are."""
    if not logit_scale > 0:
        raise ValueError(f"logit_scale must be positive, got {logit_scale!r}")
    widths = [width, 2 * width, 4 * width, 8 * width]
    pieces, c = [], in_channels
    for k, w in enumerate(widths):
        pieces.append((f"layer{k + 1}", _ConvBNReLU(c, w, pool=k > 0)))
        c = w
    head = nn.Linear(c, num_classes) if logit_scale == 1.0 else _ScaledLinear(c, num_classes, logit_scale)
    return CutModel([*pieces, ("pool", _MaxFlatten())], head)


@register_model("resnet10")
def resnet10(width: int = 64, num_classes: int = 10, in_channels: int = 3) -> CutModel:
    return resnet((1, 1, 1, 1), width, num_classes, in_channels)


@register_model("resnet18")
def resnet18(width: int = 64, num_classes: int = 10, in_channels: int = 3) -> CutModel:
    return resnet((2, 2, 2, 2), width, num_classes, in_channels)


@register_model("resnet34")
def resnet34(width: int = 64, num_classes: int = 10, in_channels: int = 3) -> CutModel:
    return resnet((3, 4, 6, 3), width, num_classes, in_channels)


def _register_small_resnets() -> None:
    # Hernandez et al.'s R_abcd: a..d in {1, 2} BasicBlocks per stage (r2222 = ResNet-18).
    for digits in itertools.product((1, 2), repeat=4):
        name = "r" + "".join(map(str, digits))

        def builder(width: int = 64, num_classes: int = 10, in_channels: int = 3, _d=digits) -> CutModel:
            return resnet(_d, width, num_classes, in_channels)

        builder.__doc__ = f"Small ResNet {name.upper()} (blocks per stage {digits})."
        register_model(name)(builder)


_register_small_resnets()


@register_model("resnet18_imagenet")
def resnet18_imagenet(width: int = 64, num_classes: int = 10, in_channels: int = 3) -> CutModel:
    """torchvision-style ResNet-18 with the ImageNet stem (7x7/2 conv, BN, ReLU, 3x3/2 max-pool);
    cuts at the stem and after each stage (two BasicBlocks), then the pooled vector."""
    stem = nn.Sequential(nn.Conv2d(in_channels, width, 7, stride=2, padding=3, bias=False), nn.BatchNorm2d(width),
                         nn.ReLU(), nn.MaxPool2d(3, stride=2, padding=1))
    blocks, c = _stages(BasicBlock, (2, 2, 2, 2), width)
    layers = [(f"layer{s + 1}", nn.Sequential(*(b for _, b in blocks[2 * s:2 * s + 2]))) for s in range(4)]
    return CutModel([("stem", stem), *layers, ("pool", Pool())], nn.Linear(c, num_classes))


VGG19_LAYOUT = (64, 64, "M", 128, 128, "M", 256, 256, 256, 256, "M", 512, 512, 512, 512, "M", 512, 512, 512, 512, "M")


class _Flatten7(nn.Module):
    """torchvision VGG's adaptive 7x7 average pool followed by flattening."""

    def __init__(self) -> None:
        super().__init__()
        self.pool = nn.AdaptiveAvgPool2d((7, 7))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.flatten(self.pool(x), 1)


@register_model("vgg19")
def vgg19(width: int = 64, num_classes: int = 10, in_channels: int = 3, hidden: int = 4096,
          init: str = "torchvision") -> CutModel:
    """torchvision's VGG19 (no BN) with channel counts scaled by ``width`` / 64 and ``hidden``
    units in the classifier's two hidden layers; pieces named like torchvision's modules.
    ``init``: ``torchvision`` (Kaiming-normal fan-out convs, N(0, 0.01) linear layers) or
    ``fan_in`` (Kaiming-normal fan-in for every layer; thin, briefly trained networks stay at
    chance with torchvision's)."""
    if init not in ("torchvision", "fan_in"):
        raise ValueError(f"unknown init {init!r}; valid: torchvision, fan_in")
    pieces: list[tuple[str, nn.Module]] = []
    c = in_channels
    for v in VGG19_LAYOUT:
        if v == "M":
            pieces.append((f"features_{len(pieces)}", nn.MaxPool2d(2, 2)))
        else:
            out = max(1, v * width // 64)
            pieces.append((f"features_{len(pieces)}", nn.Conv2d(c, out, 3, padding=1)))
            pieces.append((f"features_{len(pieces)}", nn.ReLU()))
            c = out
    pieces.append(("avgpool", _Flatten7()))
    head = nn.Sequential(nn.Linear(c * 49, hidden), nn.ReLU(), nn.Dropout(), nn.Linear(hidden, hidden), nn.ReLU(),
                         nn.Dropout(), nn.Linear(hidden, num_classes))
    model = CutModel(pieces, head)
    for m in model.modules():  # PyTorch's default initialisation leaves the deep no-BN net untrainable
        if isinstance(m, (nn.Conv2d, nn.Linear)):
            nn.init.zeros_(m.bias)
            if init == "fan_in":
                nn.init.kaiming_normal_(m.weight, mode="fan_in", nonlinearity="relu")
            elif isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            else:
                nn.init.normal_(m.weight, 0, 0.01)
    return model


class PatchEmbed(nn.Module):
    """Image -> tokens: non-overlapping ``patch`` x ``patch`` patches linearly embedded, a learned
    CLS token prepended, learned position embeddings added. (B, C, H, W) -> (B, 1 + HW/p², dim)."""

    def __init__(self, in_channels: int, dim: int, patch: int, image: int) -> None:
        super().__init__()
        if image % patch:
            raise ValueError(f"image size {image} is not a multiple of the patch size {patch}")
        self.proj = nn.Conv2d(in_channels, dim, patch, stride=patch)
        self.cls = nn.Parameter(torch.zeros(1, 1, dim))
        self.pos = nn.Parameter(torch.zeros(1, 1 + (image // patch) ** 2, dim))
        nn.init.trunc_normal_(self.pos, std=0.02)
        nn.init.trunc_normal_(self.cls, std=0.02)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        t = self.proj(x).flatten(2).transpose(1, 2)  # (B, N, dim)
        return torch.cat([self.cls.expand(t.shape[0], -1, -1), t], dim=1) + self.pos


class EncoderBlock(nn.Module):
    """Pre-norm transformer block: x + MSA(LN(x)), then x + MLP(LN(x)) (GELU, ``mlp_ratio`` x dim)."""

    def __init__(self, dim: int, heads: int, mlp_ratio: float = 4.0) -> None:
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(dim, eps=1e-6), nn.LayerNorm(dim, eps=1e-6)
        self.attn = nn.MultiheadAttention(dim, heads, batch_first=True)
        hidden = int(dim * mlp_ratio)
        self.mlp = nn.Sequential(nn.Linear(dim, hidden), nn.GELU(), nn.Linear(hidden, dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.norm1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        return x + self.mlp(self.norm2(x))


class ClsPool(nn.Module):
    """Final LayerNorm, then the CLS token: (B, T, dim) -> (B, dim)."""

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(dim, eps=1e-6)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(x)[:, 0]


def vit(dim: int = 192, depth: int = 12, heads: int | None = None, patch: int = 4, image: int = 32,
        num_classes: int = 10, in_channels: int = 3) -> CutModel:
    """Vision transformer (Dosovitskiy et al. 2021) with a CLS token; cuts ``embed`` (tokens after
    the patch and position embeddings), ``block1`` ... ``block<depth>`` (tokens (1 + N, dim)) and
    ``pool`` (the normalised CLS token). ``heads`` defaults to dim // 64 (at least 1)."""
    heads = heads or max(1, dim // 64)
    if dim % heads:
        raise ValueError(f"dim {dim} is not divisible by {heads} heads")
    pieces = [("embed", PatchEmbed(in_channels, dim, patch, image))]
    pieces += [(f"block{k + 1}", EncoderBlock(dim, heads)) for k in range(depth)]
    model = CutModel([*pieces, ("pool", ClsPool(dim))], nn.Linear(dim, num_classes))
    for m in model.modules():
        if isinstance(m, nn.Linear):
            nn.init.trunc_normal_(m.weight, std=0.02)
            if m.bias is not None:
                nn.init.zeros_(m.bias)
    return model


@register_model("vit_ti")
def vit_ti(width: int = 192, num_classes: int = 10, in_channels: int = 3, depth: int = 12, patch: int = 4,
           image: int = 32, heads: int | None = None) -> CutModel:
    """Balogh & Jelasity's ViT-Ti for CIFAR: image 32, patch 4 (64 tokens + CLS), dim ``width``
    (192), depth 12, ``heads`` heads (default ``width // 64``: 3)."""
    return vit(width, depth, heads, patch, image, num_classes, in_channels)
