"""Named scale presets (``smoke`` CI, seconds to minutes, ``demo`` 2 CPU cores minutes, ``gpu`` one GPU
minutes per page with the papers' widths and data, ``paper`` the papers' settings, a cluster) and
the figure configs they preset.

Every figure has ``smoke``, ``demo`` and ``paper`` presets. ``gpu`` presets come figure by figure
(the figure registry, :mod:`stitchkit.registry.figures`, says which scales each offers): asking a figure
for a scale it has no preset for is an error naming the ones it has.

Each figure defines its settings once as a frozen dataclass whose fields are made with
:func:`param` (default, help text, allowed values); its presets (scale -> an instance) are named in
the figure registry, and the dataclass is the presets' type. A preset is self-contained: besides
its parameters it holds the recipes of the networks it trains (fields made with
:func:`stitchkit.networks.zoo.recipe_field`, set at the preset's scale by :func:`stitchkit.networks.zoo.at_scale`),
so that nothing below the page takes a scale and printing the config shows everything that runs.
It is the one source of truth for the figure's parameters:

- the notebook's ``parameters`` cell lists exactly its fields, each ``name = None  # help``
  (``stitchkit sync`` writes it; a test checks every notebook), and its opening line,
  ``run, cfg = open_page("B-F2A", globals())`` (:mod:`stitchkit.pagekit.page`), resolves them with
  :func:`resolve`: every field's value in the namespace that is not ``None`` overrides the
  scale's preset, by field name, without listing them by hand;
- the CLI validates ``-p`` values against it before any data is read or model built.

A field's allowed values are its type, ``choices``, bounds, and for a tuple the same rules per
item (``items``) and ``unique``. Rules between fields, or that need the networks the config's
recipes build (enough cuts, layer names of the model in use), are the config's ``check()`` method, which
:func:`preset` calls: ``run``, every point of a ``sweep`` and the notebook's own first cell all
check through it, before any compute. Fields named like a length or a size also get a
plausibility bound (:data:`PLAUSIBLE`) unless they state their own ``le``: a value past it is a
typo (``1e9`` epochs) or cannot fit, and is refused before it reaches an allocation.

Unknown scales, unknown fields and invalid values raise with the valid choices.
"""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from pathlib import Path
from typing import Any, Mapping, TypeVar

from ..base.ledger import networks_used
from .figures import REQUIRED_SCALES, SCALES, scales_of

# What each scale means, in one line (the CLI's help, the book's scale notes).
SCALE_MEANING = {
    "smoke": "CI: seconds to minutes per page (each page's time from an empty cache, measured: stitchkit list), "
             "tiny networks on a few thousand images; checks "
             "the wiring, judges nothing",
    "demo": "2 CPU cores, minutes per page: the papers' architectures at reduced width, data and schedule",
    "gpu": "one GPU, at most 8 minutes per page: the papers' widths and full data sets, shortened schedules",
    "paper": "the papers' settings (a cluster of GPUs)",
}

T = TypeVar("T")


class UnknownScaleError(ValueError):
    pass


class UnknownParameterError(ValueError):
    pass


class ParameterValueError(ValueError):
    pass


# Plausibility bounds by field name (suffix), for fields that state no ``le`` of their own: the
# papers' longest schedules are 200 epochs and their widest networks 512 channels at the base
# (VGG19's last stage) or 192 (ViT-Ti); a value past these bounds is refused before compute.
# Counts a page repeats its work by (initialisations, networks, pairs), sizes (noise examples per
# class: no more than a data set holds), learning rates and the like get a bound of the same kind
# (issue 66, finding 6: `-p noise_per_class 1e12` computed for 2 minutes, then asked for 80 TB).
PLAUSIBLE = {"epochs": 1000.0, "width": 1024.0, "steps": 10_000_000.0,
             "inits": 100.0, "networks": 100.0, "pairs": 1000.0, "per_class": 60_000.0, "lr": 10.0,
             "ranks": 10_000.0, "blocks": 1000.0, "pretrain": 1000.0, "finetune": 1000.0, "every": 1000.0,
             "layer": 1000.0, "cuts": 1000.0, "threshold": 100.0}


def _plausible_le(name: str) -> float | None:
    for suffix, bound in PLAUSIBLE.items():
        if name == suffix or name.endswith("_" + suffix):
            return bound
    return None


def check_scale(scale: str) -> str:
    if scale not in SCALES:
        raise UnknownScaleError(f"unknown scale {scale!r}; valid: {', '.join(SCALES)}")
    return scale


def check_figure_scale(figure_id: str, scale: str) -> str:
    """``scale`` if figure ``figure_id`` has a preset for it; else an error naming the ones it has."""
    check_scale(scale)
    have = scales_of(figure_id)
    if scale not in have:
        raise UnknownScaleError(f"{figure_id} has no {scale!r} preset yet; its scales: {', '.join(have)}")
    return scale


# Bounds that follow from the data, one place for every config (issue 50: checked before compute).
MIN_TEST_IMAGES = 100  # fewer test images cannot resolve a point of accuracy (and the bootstrap needs them)
MAX_TRAIN_IMAGES = 50_000  # the CIFAR-10 training split (MNIST has 60,000): no fit or batch can take more


def derived(cls: type, base: Any, *, drop: tuple[str, ...] = (), **changes: Any) -> Any:
    """``base`` (a preset) as a preset of ``cls``, a dataclass that takes its fields (a subclass
    adding fields, or a figure's own config on another's presets), with ``changes``; ``drop``:
    fields of ``base`` that ``cls`` does not take. The one way a figure derives its presets from
    another's."""
    values = {f.name: getattr(base, f.name) for f in dataclasses.fields(base) if f.name not in drop}
    return cls(**{**values, **changes})


def derive_presets(cls: type, presets: Mapping[str, Any], per_scale: Mapping[str, Mapping[str, Any]] | None = None,
                   *, drop: tuple[str, ...] = ()) -> dict[str, Any]:
    """Every scale's preset of ``presets`` as a preset of ``cls`` (:func:`derived`), with that
    scale's changes in ``per_scale``."""
    per_scale = per_scale or {}
    return {scale: derived(cls, cfg, drop=drop, **per_scale.get(scale, {})) for scale, cfg in presets.items()}


def param(default: Any, help: str, *, choices: tuple | None = None, ge: float | None = None,
          gt: float | None = None, le: float | None = None, existing_folder: bool = False,
          items: Mapping[str, Any] | None = None, unique: bool = False, nonempty: bool = False,
          length: int | None = None) -> Any:
    """A config field with its help text (the comment in the notebook's parameters cell) and
    its allowed values (``choices``, bounds ``ge``/``gt``/``le``, or for a path, a folder that
    must exist when the value is given). For a tuple, ``items`` holds the rules of each item
    (keys ``choices``, ``ge``, ``gt``, ``le``, ``odd``), ``unique`` forbids repeats,
    ``nonempty`` an empty one and ``length`` any other number of items (a pair: 2)."""
    if items and set(items) - {"choices", "ge", "gt", "le", "odd"}:
        raise TypeError(f"unknown item rule(s) {sorted(set(items) - {'choices', 'ge', 'gt', 'le', 'odd'})}")
    meta = {"help": help, "choices": choices, "ge": ge, "gt": gt, "le": le, "existing_folder": existing_folder,
            "items": dict(items or {}), "unique": unique, "nonempty": nonempty, "length": length}
    if isinstance(default, (list, dict, set)):
        raise TypeError("use a tuple for a sequence default")
    return dataclasses.field(default=default, metadata=meta)


def fields(cls: type) -> list[dataclasses.Field]:
    return [f for f in dataclasses.fields(cls) if "help" in f.metadata]


def _bounds(meta: Mapping[str, Any]) -> list[str]:
    return [f"{op} {meta[k]:g}" if isinstance(meta[k], float) else f"{op} {meta[k]}"
            for k, op in (("ge", "≥"), ("gt", ">"), ("le", "≤")) if meta.get(k) is not None]


def _describe_items(meta: Mapping[str, Any]) -> str:
    rules = meta.get("items") or {}
    if rules.get("choices"):
        what = "each one of " + ", ".join(repr(c) for c in rules["choices"])
    else:
        what = " and ".join((["odd"] if rules.get("odd") else []) + _bounds(rules))
        what = f"each {what}" if what else ""
    what += (", " if what else "") + "no repeats" if meta.get("unique") else ""
    what = ("at least one" + (", " if what else "") + what) if meta.get("nonempty") else what
    what = (f"exactly {meta['length']}" + (", " if what else "") + what) if meta.get("length") else what
    return f" ({what})" if what else ""


def _describe(tp: Any, meta: Mapping[str, Any]) -> str:
    if meta.get("choices"):
        return "one of " + ", ".join(repr(c) for c in meta["choices"])
    base = _base_type(tp)
    kind = {int: "an integer", float: "a finite number", bool: "true or false", str: "a string",
            tuple: "a list"}.get(base, str(tp))
    if base is tuple:
        return kind + _describe_items(meta)
    bounds = _bounds(meta)
    return kind + (" " + " and ".join(bounds) if bounds else "")


def _item_type(tp: Any) -> Any:
    """The item type of ``tuple[X, ...]`` (under Optional), else None."""
    args = [a for a in typing.get_args(tp) if a is not type(None)]
    if typing.get_origin(tp) in (typing.Union, types.UnionType) and len(args) == 1:
        return _item_type(args[0])
    if typing.get_origin(tp) is tuple and typing.get_args(tp):
        return typing.get_args(tp)[0]
    return None


def _base_type(tp: Any) -> Any:
    args = [a for a in typing.get_args(tp) if a is not type(None)]
    if typing.get_origin(tp) in (typing.Union, types.UnionType) and len(args) == 1:
        return _base_type(args[0])
    return typing.get_origin(tp) or tp


_BOOL_WORDS = {"true": True, "yes": True, "1": True, "false": False, "no": False, "0": False}


def validate(cls: type, name: str, value: Any) -> Any:
    """``value`` checked (and normalised: lists become tuples, ints become floats) against field
    ``name`` of config ``cls``; raises ParameterValueError naming the parameter and what is allowed."""
    hints = typing.get_type_hints(cls)
    field = {f.name: f for f in dataclasses.fields(cls)}[name]
    tp, meta = hints[name], dict(field.metadata)
    if meta.get("le") is None and _base_type(tp) in (int, float):
        meta["le"] = _plausible_le(name)
    optional = type(None) in typing.get_args(tp)
    base = _base_type(tp)

    original = value

    def bad() -> ParameterValueError:
        return ParameterValueError(f"parameter {name!r} = {_shown(original)} is invalid: expected "
                                   f"{_describe(tp, meta)}" + (" or None" if optional else ""))

    if value is None:
        if optional:
            return None
        raise bad()
    if base is bool:
        if isinstance(value, str) and value.lower() in _BOOL_WORDS:
            value = _BOOL_WORDS[value.lower()]
        elif isinstance(value, int) and not isinstance(value, bool) and value in (0, 1):
            value = bool(value)
        if not isinstance(value, bool):
            raise bad()
    elif base is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise bad()
    elif base is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise bad()
        value = float(value)
    elif base is str:
        if not isinstance(value, str):
            raise bad()
    elif base is tuple:
        if not isinstance(value, (list, tuple)):
            raise bad()
        if meta.get("length") is not None and len(value) != meta["length"]:
            raise ParameterValueError(f"parameter {name!r} = {_shown(original)} is invalid: expected exactly "
                                      f"{meta['length']} items, got {len(value)} ({_describe(tp, meta)})")
        checked = []
        for i, v in enumerate(value):
            try:
                checked.append(_check_item(v, _item_type(tp), meta.get("items") or {}, bad))
            except ParameterValueError:  # name the item: "expected a list" alone misleads for a list
                raise ParameterValueError(f"parameter {name!r} = {_shown(original)} is invalid: item {i + 1} "
                                          f"({_shown(v)}) is not allowed; expected {_describe(tp, meta)}") from None
        value = tuple(checked)
        if meta.get("unique") and len(set(value)) != len(value):
            raise bad()
        if meta.get("nonempty") and not value:
            raise bad()
    if meta.get("choices") and value not in meta["choices"]:
        raise bad()
    if meta.get("existing_folder") and not Path(value).expanduser().is_dir():
        raise ParameterValueError(f"parameter {name!r} = {original!r} is invalid: expected an existing folder "
                                  f"({Path(value).expanduser().resolve()} is {'a file' if Path(value).exists() else 'missing'})")
    for key, ok in (("ge", lambda v, b: v >= b), ("gt", lambda v, b: v > b), ("le", lambda v, b: v <= b)):
        if meta.get(key) is not None and not ok(value, meta[key]):
            raise bad()
    return value


def _shown(value: Any, limit: int = 80) -> str:
    """``repr(value)`` as an error shows it: cut after ``limit`` characters (a 100 kB value is not echoed)."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} characters)"


def _check_item(value: Any, tp: Any, rules: Mapping[str, Any], bad) -> Any:
    """One item of a tuple parameter checked against its type and ``rules``."""
    if tp is int and (isinstance(value, bool) or not isinstance(value, int)):
        raise bad()
    if tp is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise bad()
        value = float(value)
    if tp is str and not isinstance(value, str):
        raise bad()
    if rules.get("choices") and value not in rules["choices"]:
        raise bad()
    if rules.get("odd") and value % 2 != 1:
        raise bad()
    for key, ok in (("ge", lambda v, b: v >= b), ("gt", lambda v, b: v > b), ("le", lambda v, b: v <= b)):
        if rules.get(key) is not None and not ok(value, rules[key]):
            raise bad()
    return value


def check_names(name: str, given: Any, valid: "typing.Sequence[str]", *, at_least: int = 1,
                what: str = "cut", among: str = "") -> None:
    """A tuple parameter of names (cuts, architectures) checked against the ``valid`` ones (of the
    model in use; ``among`` names them when they are another parameter's): known, no repeats, at
    least ``at_least`` of them; raises :class:`ParameterValueError`."""
    if given is None:
        return
    given = tuple(given)
    bad = [c for c in given if c not in valid]
    problem = (f"{what}(s) {', '.join(map(repr, bad))} not in {among}" if bad and among else
               f"unknown {what}(s) {', '.join(map(repr, bad))}" if bad else
               f"repeated {what}(s)" if len(set(given)) != len(given) else
               f"{len(given)} {what}(s); needs at least {at_least}" if len(given) < at_least else None)
    if problem:
        raise ParameterValueError(f"parameter {name!r} = {list(given)!r} is invalid: {problem}; valid: "
                                  f"{', '.join(valid)}" + (f" (at least {at_least})" if at_least > 1 else ""))


def check_config(config: T) -> T:
    """``config`` with its cross-field rules checked (its ``check()`` method, if any, which checks
    layer names against the networks its recipes build; it raises :class:`ParameterValueError`
    naming the parameter and what is allowed)."""
    check = getattr(config, "check", None)
    if callable(check):
        check()
    return config


def check_overrides(cls: type, overrides: Mapping[str, Any]) -> dict[str, Any]:
    """Overrides checked by name and value (``None`` = keep the preset) against config ``cls``."""
    names = [f.name for f in fields(cls)]
    unknown = sorted(set(overrides) - set(names))
    if unknown:
        raise UnknownParameterError(f"unknown parameter(s) {', '.join(unknown)} for "
                                    f"{cls.__name__}; valid: {', '.join(names)}")
    return {k: validate(cls, k, v) for k, v in overrides.items() if v is not None}


def preset(presets: Mapping[str, T], scale: str, **overrides: Any) -> T:
    """The preset for ``scale`` with ``overrides`` applied by field name (``None`` = keep)."""
    check_scale(scale)
    missing = [s for s in REQUIRED_SCALES if s not in presets]
    if missing:
        raise ValueError(f"presets lack scales {missing}")
    if scale not in presets:
        have = [s for s in SCALES if s in presets]
        raise UnknownScaleError(f"no {scale!r} preset for {type(presets['demo']).__name__} yet; its scales: "
                                f"{', '.join(have)}")
    base = presets[scale]
    return check_config(dataclasses.replace(base, **check_overrides(type(base), overrides)))


def resolve(presets: Mapping[str, T], scale: str, namespace: Mapping[str, Any]) -> T:
    """The preset for ``scale`` overridden by every config field found in ``namespace`` (a
    notebook's ``globals()``) whose value is not None."""
    check_scale(scale)
    cls = type(presets["demo"])
    return preset(presets, scale, **{f.name: namespace[f.name] for f in fields(cls) if f.name in namespace})


def parameters_cell(cls: type, skip: tuple[str, ...] = ()) -> str:
    """The parameters cell a notebook for config ``cls`` must have (scale first, its comment every
    scale: which of them a figure offers is the registry's, so that a figure gaining a ``gpu``
    preset leaves its notebook, and its pages at other scales, as they were), less the fields
    ``skip`` (a shared config's fields this figure does not use)."""
    lines = [f'scale = "smoke"  # {" | ".join(SCALES)}']
    lines += [f"{f.name} = None  # {f.metadata['help']}" for f in fields(cls) if f.name not in skip]
    return "\n".join(lines)


# Fields whose None means "the network recipe's value": the value that ran is read from the
# networks the run used (:mod:`stitchkit.base.ledger`), by this attribute of their record.
FROM_NETWORKS = {"width": "width", "model_epochs": "epochs", "model_train_size": "train_size"}


def _ran(name: str, networks: list[dict[str, Any]]) -> str | None:
    """What a None-valued zoo field was in this run, from the trained networks it used (several
    values: all of them, e.g. the widths of B-F3C's networks); None if no network says."""
    attr = FROM_NETWORKS.get(name)
    nets = [n for n in networks if n.get("trained")]
    if attr is None or not nets:
        return None
    if attr == "epochs":  # a recipe set in steps has epochs 0
        values = [f"{n['steps']} steps" if n.get("steps") else f"{n.get('epochs', 0):g}" for n in nets]
    elif attr == "train_size":
        values = ["all" if n.get("train_size") is None else f"{n['train_size']}" for n in nets]
    else:
        values = [f"{n[attr]}" for n in nets if n.get(attr) is not None]
    return ", ".join(sorted(set(values), key=lambda v: (len(v), v))) or None


def as_table(config: Any):
    """A config as a table (setting, value, meaning) for display on a page, showing the values
    that ran: a None that means "the recipe's" shows the value of the networks this run used
    (:data:`FROM_NETWORKS`), another None what its help says None means ("all 10k"). Meanings are
    shown whole (a Styler: pandas would cut them at 50 characters)."""
    import pandas as pd

    networks = networks_used()
    rows = []
    for f in dataclasses.fields(config):
        value, text = getattr(config, f.name), f.metadata.get("help") or f.metadata.get("recipe", "")
        shown = repr(value)
        if value is None:
            ran = _ran(f.name, networks)
            clause = text.rpartition("None: ")[2].rstrip(")") if "None: " in text else ""
            shown = f"{ran} (None: the recipe's)" if ran else f"{clause} (None)" if clause else "None"
        rows.append((f.name, shown, text))
    table = pd.DataFrame(rows, columns=["setting", "value", "meaning"]).set_index("setting")
    return table.style.set_properties(**{"text-align": "left"})
