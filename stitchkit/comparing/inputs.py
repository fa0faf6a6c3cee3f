"""What ``stitchkit compare`` compares: the models and the images, read from what the command
line names, every failure a one-line error naming it before any compute.

The models are named as the command line can load them (:func:`load_model`): a ``module:callable``
that builds one (``torchvision.models:resnet18``, ``stitchkit.networks.models:resnet18``, a function of the
user's), optionally with ``--weights`` (a state dict file, read as tensors only), or a file holding
a whole pickled ``nn.Module``, loaded only with ``--trust-pickle`` (unpickling runs code).

The images (:func:`sample_images`, :func:`load_images`) are one of the package's data sets by name
(``cifar10``, ``mnist``; the data root's copy), an image folder ``<root>/<split>/<class>/<image>``,
or the user's own data as ``module:callable`` (resolved as model specs are, the current folder on
the import path): called with the split name, ``"train"`` or ``"test"``, it returns a torch
``Dataset`` of ``(image, label)`` items or a ``DataLoader`` (any iterable) of ``(images, labels)``
batches, images float tensors ``(C, H, W)`` in [0, 1] and labels ints (:func:`user_data`). From
each source the fit images are a seeded, class-balanced sample of the training split and the
measured images one of the test split, in a seeded random order; a user's two splits must share no
image (checked). A ``Dataset`` is read twice (every label, then the sampled images: its transforms
should be deterministic), an iterable once and whole, in its order (a ``DataLoader`` that shuffles
unseeded is refused). Every failure of a user's data (the callable raises, returns another type,
an item is not ``(float tensor, int)``, images of several sizes without ``--resize``, splits that
overlap, images off the [0, 1] scale given a normalisation) is a one-line :class:`DataSpecError`
naming the spec, before any compute. ``--resize H W`` resizes every image of any source (bilinear,
antialiased when shrinking) before it is normalised. Nothing is downloaded.

Normalisation (:func:`normalisations`): ``--normalisation`` (default: a named data set's own; an
image folder and a user's data must say, ``none`` for images normalised already) for both models,
or ``--normalisation-a`` / ``--normalisation-b`` for each its own. When the two agree the images
are normalised once, as before; when they differ they are kept raw (on the [0, 1] scale) and each
model normalises its own input in a forward pre-hook on its root module (:func:`normalise_inputs`),
so its module names, the layers, are unchanged (the negative control's untrained copy of A keeps
A's). Both are recorded in the settings.
"""

from __future__ import annotations

import importlib
import json
import re
from pathlib import Path
from typing import Any, Sequence

import numpy as np

# stitchkit.data.batches.NORMALISATION's names, here without importing torch (the command line's choices; a test compares)
NORMALISATIONS = ("cifar", "half", "mnist", "mnist3", "none", "imagenet")


class ModelSpecError(ValueError):
    pass


# ``module:callable``: dotted module path, a colon, a name; resolved as such before any file lookup
_SPEC = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*:[A-Za-z_][A-Za-z0-9_]*$")

PICKLE_WARNING = ("a whole-model file is a pickle, and unpickling it runs whatever code it holds; pass "
                  "--trust-pickle (trust_pickle=True) only for a file you made yourself, or save a state dict "
                  "(torch.save(model.state_dict(), f)) and name the architecture as module:callable with "
                  "--weights-a/--weights-b")


def _torch_load(path: Path, what: str, *, trust_pickle: bool = False):
    """``torch.load`` of ``path`` on the CPU: tensors and plain data only (``weights_only``) unless
    ``trust_pickle``; every failure a :class:`ModelSpecError` naming the file."""
    import pickle

    import torch

    try:
        return torch.load(path, map_location="cpu", weights_only=not trust_pickle)
    except pickle.UnpicklingError as exc:
        if not trust_pickle and "weights_only" in str(exc):
            raise ModelSpecError(f"{path} ({what}) holds more than tensors and plain data, so it was not loaded: "
                                 f"{PICKLE_WARNING}") from None
        raise ModelSpecError(f"{path} ({what}) cannot be read: {_first_line(exc)}") from None
    except (OSError, EOFError, RuntimeError, ValueError, AttributeError, ImportError, ModuleNotFoundError) as exc:
        raise ModelSpecError(f"{path} ({what}) cannot be read as a torch file: {type(exc).__name__}: "
                             f"{_first_line(exc)}") from None


def _first_line(exc: BaseException, limit: int = 300) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return text if len(text) <= limit else text[:limit] + "..."


def parse_kwargs(text: str | None, flag: str) -> dict[str, Any]:
    """A factory's keyword arguments from ``--kwargs-a '{"num_classes": 10}'`` (a JSON object)."""
    if not text:
        return {}
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise ModelSpecError(f"{flag} {text[:200]!r} is not JSON ({exc}); give an object, e.g. "
                             f"{flag} '{{\"num_classes\": 10}}'") from None
    if not isinstance(value, dict):
        raise ModelSpecError(f"{flag} must be a JSON object of keyword arguments, not a {type(value).__name__}")
    return value


def layers(spec: str, *, kwargs: dict[str, Any] | None = None, weights: str | None = None, trust_pickle: bool = False,
           data: str | None = None, image_size: tuple[int, int, int] = (3, 32, 32),
           size: Sequence[int] | None = None) -> list[tuple[str, str, str]]:
    """``stitchkit layers MODEL``: every module a comparison can cut at (its name as ``--layers-a``
    takes it), its type and the shape of its output on one image (of ``data``'s size, a data set,
    an image folder or ``module:callable`` as :func:`compare_files` takes it, else ``image_size``;
    resized to ``size`` (H, W) when given); a module that runs twice, or returns no tensor, says so."""
    import torch

    check_size(size)
    model = load_model(spec, weights, trust_pickle=trust_pickle, kwargs=kwargs)
    x = _one_image(data, size) if data is not None else _resize(torch.zeros(1, *image_size), size)
    shapes: dict[str, list[str]] = {}
    hooks = []
    for name, module in model.named_modules():
        if not name:
            continue

        def hook(_m, _inp, out, name=name):
            t = out if isinstance(out, torch.Tensor) else next((o for o in out if isinstance(o, torch.Tensor)), None) \
                if isinstance(out, (tuple, list)) else None
            shapes.setdefault(name, []).append("x".join(map(str, t.shape[1:])) if t is not None else "(no tensor)")
        hooks.append(module.register_forward_hook(hook))
    try:
        with torch.no_grad():
            model(x)
    except Exception as exc:
        raise ModelSpecError(f"{spec!r} cannot take an image of shape {tuple(x.shape)}: {type(exc).__name__}: "
                             f"{_first_line(exc)} (give --data of the model's kind, or --resize H W)") from None
    finally:
        for h in hooks:
            h.remove()
    out = []
    for name, module in model.named_modules():
        if not name:
            continue
        got = shapes.get(name)
        shape = "(not run)" if not got else got[0] if len(got) == 1 else f"{got[0]} (runs {len(got)} times: not a cut)"
        out.append((name, type(module).__name__, shape))
    return out


def _import_callable(spec: str, error: type[ValueError], does: str, flag: str = ""):
    """The callable ``spec`` (``module:callable``) names, imported with the current folder on the
    import path; a failure is ``error`` naming ``flag`` and the spec, and saying what it ``does``."""
    import os
    import sys

    module, _, name = spec.partition(":")
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.insert(0, os.getcwd())  # a user's module in the current folder, as `python -m` finds it
    try:
        factory = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as exc:
        raise error(f"cannot load {flag}{spec!r}: {_first_line(exc)} (the current folder is on the import "
                    "path; a module elsewhere needs PYTHONPATH)") from None
    except Exception as exc:  # the module itself raised on import
        raise error(f"cannot load {flag}{spec!r}: importing {module} raised {type(exc).__name__}: "
                    f"{_first_line(exc)}") from None
    if not callable(factory):
        raise error(f"{flag}{spec!r} names a {type(factory).__name__}, not a callable that {does}")
    return factory


def load_model(spec: str, weights: str | None = None, *, trust_pickle: bool = False,
               kwargs: dict[str, Any] | None = None):
    """An ``nn.Module`` from ``spec``, with ``weights`` (a state-dict file) loaded into it when
    given; in eval mode.

    ``spec`` is ``module:callable`` (resolved as such before any file lookup, with the current
    folder on the import path), or a file holding a whole pickled module, which is loaded only with
    ``trust_pickle`` (:data:`PICKLE_WARNING`). ``weights`` is always read as tensors only. Every
    failure is a :class:`ModelSpecError` naming the spec."""
    import torch
    from torch import nn

    if _SPEC.match(spec):
        factory = _import_callable(spec, ModelSpecError, "builds a model")
        try:
            model = factory(**(kwargs or {}))
        except Exception as exc:
            called = f"with {json.dumps(kwargs)}" if kwargs else "with no arguments"
            raise ModelSpecError(f"{spec!r} raised {type(exc).__name__} when called {called}: "
                                 f"{_first_line(exc)}" + ("" if kwargs else " (give its arguments with --kwargs-a/"
                                                          "--kwargs-b, a JSON object)")) from None
    elif Path(spec).is_file():
        if kwargs:
            raise ModelSpecError(f"{spec} is a file: --kwargs-a/--kwargs-b are a factory's arguments (module:callable)")
        obj = _torch_load(Path(spec), "the model", trust_pickle=trust_pickle)
        if isinstance(obj, dict) and not isinstance(obj, nn.Module):
            raise ModelSpecError(f"{spec} holds a state dict, not a model: name the architecture as module:callable "
                                 f"and give this file as its weights (--weights-a/--weights-b {spec})")
        model = obj
    else:
        raise ModelSpecError(f"{spec!r} is neither module:callable (e.g. stitchkit.networks.models:resnet18, "
                             "torchvision.models:resnet18) nor a file (a .pt file holding a whole model, with "
                             "--trust-pickle)")
    if not isinstance(model, nn.Module):
        raise ModelSpecError(f"{spec!r} gave a {type(model).__name__}, not a torch nn.Module")
    if weights is not None:
        state = _torch_load(Path(weights), "the weights")
        if not isinstance(state, dict) or not all(isinstance(v, torch.Tensor) for v in state.values()):
            raise ModelSpecError(f"{weights} is not a state dict (a dict of tensors): it holds a "
                                 f"{type(state).__name__}")
        try:
            model.load_state_dict(state)
        except RuntimeError as exc:
            lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
            detail = " ".join(lines[1:3]) if len(lines) > 1 else lines[0] if lines else ""
            detail = detail if len(detail) <= 600 else detail[:600] + "..."
            raise ModelSpecError(f"{weights} does not fit {spec}: {detail}") from None
    return model.eval()


class DataSpecError(ValueError):
    """``--data module:callable`` that cannot give images: one line naming the spec and what was expected."""


EXPECTED_DATA = ("a torch Dataset of (image, label) items or a DataLoader (any iterable) of (images, labels) "
                 "batches, images float tensors (C, H, W) in [0, 1], labels ints")


def data_kind(data: str) -> str:
    """What ``--data`` names: ``"callable"`` (``module:callable``, resolved as such before any
    folder of its name), ``"folder"`` (an image folder) or ``"dataset"`` (a data set's name)."""
    from ..data import datasets

    if _SPEC.match(data):
        return "callable"
    if Path(data).is_dir():
        return "folder"
    if data in datasets.list_datasets():
        return "dataset"
    raise ValueError(f"--data {data!r} is neither a data set ({', '.join(datasets.list_datasets())}), an image "
                     "folder <root>/<split>/<class>/<image>, nor module:callable (your own data: a function of the "
                     "split name, 'train' or 'test', returning a torch Dataset or DataLoader)")


def resolve_normalisation(data: str, name: str | None, flag: str = "--normalisation") -> str:
    """``name`` checked against :data:`NORMALISATIONS`, or when None a named data set's own; an
    image folder and a user's data have none of their own, so they need ``flag``."""
    if name is not None:
        if name not in NORMALISATIONS:
            raise ValueError(f"unknown normalisation {name!r} ({flag}); valid: {', '.join(NORMALISATIONS)}")
        return name
    kind = data_kind(data)
    if kind == "dataset":
        from ..data import datasets

        return datasets.default_normalisation(data)
    choices = " | ".join(NORMALISATIONS)
    if kind == "folder":
        raise ValueError(f"{data} is an image folder: say how the models expect its images normalised "
                         f"({flag} {choices})")
    raise ValueError(f"{data} is your own data (module:callable): say how the models expect its images normalised "
                     f"({flag} {choices}; none if its images are normalised already)")


def normalisations(data: str, normalisation: str | None = None, normalisation_a: str | None = None,
                   normalisation_b: str | None = None) -> tuple[str, str]:
    """Model A's and model B's normalisation: each its own flag's, else ``normalisation``'s, else
    the data set's own (:func:`resolve_normalisation`); every name checked before any is defaulted."""
    for flag, name in (("--normalisation", normalisation), ("--normalisation-a", normalisation_a),
                       ("--normalisation-b", normalisation_b)):
        if name is not None:
            resolve_normalisation(data, name, flag)
    flags = {"A": "--normalisation-a", "B": "--normalisation-b"}
    got = {m: own if own is not None else normalisation for m, own in (("A", normalisation_a), ("B", normalisation_b))}
    missing = [flags[m] for m, name in got.items() if name is None]
    flag = "--normalisation" if len(missing) == 2 else f"{missing[0]} or --normalisation" if missing else ""
    return tuple(resolve_normalisation(data, name, flag) for name in got.values())  # type: ignore[return-value]


def _normaliser(name: str):
    from ..data.batches import NORMALISATION, normalise

    if name not in NORMALISATION:
        raise ValueError(f"unknown normalisation {name!r}; valid: {', '.join(NORMALISATIONS)}")
    return lambda x: normalise(x, name)


def _stats(name: str, like):
    """``name``'s (mean, std) as (1, C, 1, 1) tensors of ``like``'s dtype and device, or None."""
    from ..data.batches import NORMALISATION

    stats = NORMALISATION[name]
    if stats is None:
        return None
    return tuple(like.new_tensor(v).view(1, -1, 1, 1) for v in stats)


def normalise_images(x, name: str):
    """Float images ``x`` (N, C, H, W) on the [0, 1] scale normalised as ``name`` says, in place
    (the same arithmetic as :func:`stitchkit.data.batches.normalise` on uint8 images)."""
    stats = _stats(name, x)
    if stats is None:
        return x
    if stats[0].shape[1] != x.shape[1]:
        raise ValueError(f"normalisation {name!r} has {stats[0].shape[1]} channels, images have {x.shape[1]}")
    return x.sub_(stats[0]).div_(stats[1])


def normalise_inputs(model, name: str):
    """Give ``model`` its own normalisation: a forward pre-hook on its root module normalises its
    input (raw images on the [0, 1] scale, not changed in place) as ``name`` says, so no module is
    added and the layers keep their names. Returns the hook's handle, or None for ``none``."""
    from ..data.batches import NORMALISATION

    if NORMALISATION[name] is None:
        return None

    def hook(_module, args):
        x, *rest = args
        mean, std = _stats(name, x)
        return ((x - mean) / std, *rest)

    return model.register_forward_pre_hook(hook)


def _resize(x, size: Sequence[int] | None):
    """``x`` (N, C, H, W) float resized to ``size`` (H, W): bilinear, antialiased when shrinking
    (as torchvision's ``Resize``); unchanged when None or already that size."""
    import torch.nn.functional as F

    if size is None or tuple(x.shape[-2:]) == tuple(size):
        return x
    return F.interpolate(x, size=tuple(size), mode="bilinear", align_corners=False, antialias=True)


def _sample_order(labels, n: int | None, seed: int):
    """Indices of a seeded, class-balanced sample of ``n`` of ``labels`` (all when None), in a
    seeded random order: never the first ``n`` (a split stored class by class would give one or
    two classes, and minibatches of one class)."""
    import torch

    from ..data.splits import stratified_subset

    count = len(labels) if n is None else min(n, len(labels))
    idx = stratified_subset(labels, count, seed)
    g = torch.Generator().manual_seed(seed + 1)
    return idx[torch.randperm(len(idx), generator=g)]  # mixed classes in every minibatch


def sample_images(data: str, split: str, n: int | None, *, seed: int = 0, size: Sequence[int] | None = None):
    """(images, labels) of ``data`` (:func:`data_kind`) at ``split``: a seeded, class-balanced
    sample of ``n`` images (all when None) in a seeded random order (:func:`_sample_order`), float
    on the [0, 1] scale, not normalised, resized to ``size`` (H, W) when given. The fit sample
    comes from the training split and the test sample from the test split."""
    from ..data import datasets
    from ..data.archives import image_folder

    kind = data_kind(data)
    if kind == "callable":
        return _user_sample(data, split, n, seed, size)
    if kind == "folder":
        split_data = image_folder(Path(data), split)
    else:
        spec = datasets.DataSpec(data)
        split_data = datasets.test_split(spec) if split == "test" else datasets.train_split(spec)
    import torch

    idx = _sample_order(split_data.labels, n, seed)
    images = split_data.images[idx].to(torch.float32).div_(255.0)
    return _resize(images, size), split_data.labels[idx]


def load_images(data: str, split: str, n: int | None, normalisation: str | None, *, seed: int = 0,
                size: Sequence[int] | None = None):
    """(images, labels, normalisation used) of ``data`` at ``split``: :func:`sample_images`
    normalised as ``normalisation`` says (a named data set's own by default; an image folder and a
    user's data need one, :func:`resolve_normalisation`)."""
    normalisation = resolve_normalisation(data, normalisation)
    x, y = sample_images(data, split, n, seed=seed, size=size)
    return normalise_images(x, normalisation), y, normalisation


# --------------------------------------------------------------------------------------------
# The user's own data: --data module:callable


def user_data(spec: str, split: str):
    """What the user's ``module:callable`` gives for ``split`` (called with it): a map-style torch
    ``Dataset`` or an iterable (a ``DataLoader``), else a :class:`DataSpecError` naming the spec."""
    import torch
    from torch.utils.data import DataLoader, RandomSampler

    factory = _import_callable(spec, DataSpecError, f"returns a data set ({EXPECTED_DATA})", "--data ")
    try:
        got = factory(split)
    except Exception as exc:
        raise DataSpecError(f"--data {spec!r} raised {type(exc).__name__} when called with {split!r}: "
                            f"{_first_line(exc)}") from None
    if _map_style(got):
        return got
    if isinstance(got, (torch.Tensor, str, bytes, dict)) or not hasattr(got, "__iter__"):
        raise DataSpecError(f"--data {spec!r} returned {_describe(got)} for {split!r}; expected {EXPECTED_DATA}")
    if isinstance(got, DataLoader) and isinstance(got.sampler, RandomSampler) and got.sampler.generator is None:
        raise DataSpecError(f"--data {spec!r} returned a DataLoader that shuffles for {split!r}, so the sample drawn "
                            "from it would differ from run to run: return it with shuffle=False (the command draws "
                            "a seeded sample in a mixed order itself)")
    return got


def _map_style(got) -> bool:
    """Whether ``got`` is a map-style torch ``Dataset`` (indexed, with a length), not an iterable one."""
    from torch.utils.data import Dataset, IterableDataset

    return isinstance(got, Dataset) and hasattr(got, "__len__") and not isinstance(got, IterableDataset)


def _describe(obj) -> str:
    import torch

    if isinstance(obj, torch.Tensor):
        return f"a {str(obj.dtype).removeprefix('torch.')} tensor of shape {tuple(obj.shape)}"
    if isinstance(obj, (tuple, list)):
        return f"a {type(obj).__name__} of {len(obj)}"
    return "None" if obj is None else f"a {type(obj).__name__}"


def _as_batch(element, where: str):
    """An item ``(image, label)`` or a batch ``(images, labels)`` as (images (B, C, H, W) float32,
    labels (B,) int64), else a :class:`DataSpecError` saying ``where`` it is and what was expected."""
    import torch

    expected = ("expected (image, label), the image a float tensor (C, H, W) and the label an int, or a batch "
                "(images (B, C, H, W), labels (B,))")
    if not isinstance(element, (tuple, list)) or len(element) != 2:
        raise DataSpecError(f"{where} is {_describe(element)}; {expected}")
    x, y = element
    if not isinstance(x, torch.Tensor) or not x.is_floating_point() or x.dim() not in (3, 4):
        raise DataSpecError(f"{where}: its image is {_describe(x)}; {expected}")
    if x.dim() == 3:
        y = y.item() if isinstance(y, torch.Tensor) and y.numel() == 1 and not y.is_floating_point() else y
        if isinstance(y, bool) or not isinstance(y, (int, np.integer)):
            raise DataSpecError(f"{where}: its label is {_describe(y)}; {expected}")
        x, y = x.unsqueeze(0), torch.tensor([int(y)])
    else:
        try:
            y = torch.as_tensor(y) if isinstance(y, (list, tuple, torch.Tensor)) else None
        except (TypeError, ValueError, RuntimeError):
            y = None
        if y is None or y.dim() != 1 or len(y) != len(x) or y.is_floating_point() or y.dtype == torch.bool:
            raise DataSpecError(f"{where}: a batch of {len(x)} images whose labels are {_describe(element[1])}; "
                                f"{expected}")
    if (y < 0).any():
        raise DataSpecError(f"{where}: a label is negative ({int(y.min())}); labels are class indices from 0")
    return x.detach().to("cpu", torch.float32), y.to(torch.int64)


def _one_size(images: list, where: str):
    """``images`` (batches) concatenated, or a :class:`DataSpecError` when their sizes differ."""
    import torch

    shapes = list(dict.fromkeys(tuple(x.shape[1:]) for x in images))
    if len(shapes) > 1:
        raise DataSpecError(f"{where} holds images of different shapes ({', '.join(map(str, shapes[:3]))}): give "
                            "--resize H W, or images of one size")
    return torch.cat(images)


def _elements(got, where: str, indices: Sequence[int] | None = None):
    """(name, element) of the user's data: a ``Dataset``'s items at ``indices`` (every one by
    default), an iterable's elements in its order; an exception while reading one is a
    :class:`DataSpecError` naming it."""
    name = f"item 0 of {where}" if _map_style(got) else f"element 0 of {where}"
    try:
        if _map_style(got):
            for i in range(len(got)) if indices is None else indices:
                name = f"item {i} of {where}"
                yield name, got[i]
        else:
            for k, element in enumerate(got):
                yield name, element
                name = f"element {k + 1} of {where}"
    except Exception as exc:
        raise DataSpecError(f"reading {name} raised {type(exc).__name__}: {_first_line(exc)}") from None


def _user_sample(spec: str, split: str, n: int | None, seed: int, size):
    """:func:`sample_images` of the user's data: a ``Dataset`` read twice (every label, then the
    sampled items), an iterable once, whole, in its order."""
    import torch

    got = user_data(spec, split)
    where = f"--data {spec!r} ({split!r})"
    if _map_style(got):
        labels = [_as_batch(item, name)[1] for name, item in _elements(got, where)]
        if not labels:
            raise DataSpecError(f"{where} gave no images")
        labels = torch.cat(labels)
        idx = _sample_order(labels, n, seed)
        images = [_resize(_as_batch(item, name)[0], size) for name, item in _elements(got, where, idx.tolist())]
        return _one_size(images, where), labels[idx]
    batches = [_as_batch(element, name) for name, element in _elements(got, where)]
    if not batches:
        raise DataSpecError(f"{where} gave no images")
    images = _one_size([_resize(x, size) for x, _ in batches], where)
    labels = torch.cat([y for _, y in batches])
    idx = _sample_order(labels, n, seed)
    return images[idx], labels[idx]


def check_images(x, fit_x, data: str, norms: dict[str, str]) -> None:
    """Before any compute: each model's normalisation fits the images' channels; a user's images
    are on the [0, 1] scale where one is normalised; a user's fit and measured images share none."""
    from ..data.batches import NORMALISATION

    channels = x.shape[1]
    for model, name in norms.items():
        stats = NORMALISATION[name]
        if stats is not None and len(stats[0]) != channels:
            fits = [k for k, v in NORMALISATION.items() if v is None or len(v[0]) == channels]
            raise ValueError(f"normalisation {name!r} (model {model}) is for {len(stats[0])}-channel images, these "
                             f"have {channels}; valid for them: {', '.join(fits)}")
    if data_kind(data) != "callable":
        return
    normalised = [f"{name!r} (model {model})" for model, name in norms.items() if NORMALISATION[name] is not None]
    lo, hi = (float(min(t.min() for t in (x, fit_x))), float(max(t.max() for t in (x, fit_x))))
    if normalised and (lo < -1e-3 or hi > 1 + 1e-3):
        raise DataSpecError(f"--data {data!r} gives images from {lo:.3g} to {hi:.3g}, not on the [0, 1] scale that "
                            f"normalisation {' and '.join(normalised)} expects: if they are normalised already, pass "
                            "--normalisation none")
    shared = len(_image_digests(x) & _image_digests(fit_x))
    if shared:
        raise DataSpecError(f"--data {data!r}: {shared} of the {len(x)} measured images ('test') are also among the "
                            f"{len(fit_x)} fit images ('train'): its two splits overlap; return disjoint ones for "
                            "'train' and 'test'")


def _image_digests(x) -> set[str]:
    import hashlib

    return {hashlib.sha256(img.contiguous().numpy().tobytes()).hexdigest() for img in x}


def _one_image(data: str, size: Sequence[int] | None):
    """One image of ``data``'s test split, raw (its shape is what :func:`layers` needs): a user's
    first item, read without the sampling's whole pass."""
    if data_kind(data) != "callable":
        return sample_images(data, "test", 1, size=size)[0]
    where = f"--data {data!r} ('test')"
    name, first = next(_elements(user_data(data, "test"), where), (None, None))
    if name is None:
        raise DataSpecError(f"{where} gave no images")
    return _resize(_as_batch(first, name)[0][:1], size)

def check_size(size: Sequence[int] | None) -> None:
    """``--resize``'s (H, W) checked: two sizes, each at least 1 (None: no resize)."""
    if size is not None and (len(size) != 2 or not all(isinstance(v, int) and v >= 1 for v in size)):
        raise ValueError(f"--resize takes a height and a width, H W, each at least 1; got {' '.join(map(str, size))}")
