"""Named scale presets (``smoke`` CI seconds, ``demo`` 2 CPU cores minutes, ``gpu`` one GPU
minutes per page with the papers' widths and data, ``paper`` the papers' settings, a cluster) and
the figure configs they preset.

Every figure has ``smoke``, ``demo`` and ``paper`` presets. ``gpu`` presets come figure by figure
(:func:`figure_presets` registers a figure's presets; :func:`available_scales` says which it
has): asking a figure for a scale it has no preset for is an error naming the ones it has.

Each figure defines its settings once as a frozen dataclass whose fields are made with
:func:`param` (default, help text, allowed values) and registers it under its ID with
:func:`figure_config`. That dataclass is the one source of truth for the figure's parameters:

- the notebook's ``parameters`` cell lists exactly its fields, each ``name = None  # help``
  (a test checks this for every notebook), and resolves them with
  ``cfg = resolve(PRESETS, scale, globals())``: every field's value in the namespace that is not
  ``None`` overrides the scale's preset, by field name, without listing them by hand;
- the CLI validates ``-p`` values against it before any data is read or model built.

Unknown scales, unknown fields and invalid values raise with the valid choices.
"""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from pathlib import Path
from typing import Any, Mapping, TypeVar

SCALES = ("smoke", "demo", "gpu", "paper")
REQUIRED_SCALES = ("smoke", "demo", "paper")  # every figure has these; "gpu" comes figure by figure
# What each scale means, in one line (the CLI's help, the book's scale notes).
SCALE_MEANING = {
    "smoke": "CI: seconds to a minute per page, tiny networks on a few thousand images; checks the wiring, "
             "judges nothing",
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


def check_scale(scale: str) -> str:
    if scale not in SCALES:
        raise UnknownScaleError(f"unknown scale {scale!r}; valid: {', '.join(SCALES)}")
    return scale


_PRESETS: dict[str, Mapping[str, Any]] = {}


def figure_presets(figure_id: str, presets: Mapping[str, T]) -> Mapping[str, T]:
    """Register ``presets`` (scale -> config) as figure ``figure_id``'s, so that the command line
    knows its scales before any compute; returns them."""
    missing = [s for s in REQUIRED_SCALES if s not in presets]
    unknown = [s for s in presets if s not in SCALES]
    if missing or unknown:
        raise ValueError(f"{figure_id}: presets lack scales {missing} or name unknown ones {unknown}")
    _PRESETS[figure_id] = presets
    return presets


def available_scales(figure_id: str) -> tuple[str, ...]:
    """The scales figure ``figure_id`` has presets for, in :data:`SCALES` order (a figure whose
    presets are not registered has the required ones)."""
    have = _PRESETS.get(figure_id)
    return tuple(s for s in SCALES if s in have) if have is not None else REQUIRED_SCALES


def check_figure_scale(figure_id: str, scale: str) -> str:
    """``scale`` if figure ``figure_id`` has a preset for it; else an error naming the ones it has."""
    check_scale(scale)
    have = available_scales(figure_id)
    if scale not in have:
        raise UnknownScaleError(f"{figure_id} has no {scale!r} preset yet; its scales: {', '.join(have)}")
    return scale


def param(default: Any, help: str, *, choices: tuple | None = None, ge: float | None = None,
          gt: float | None = None, le: float | None = None, existing_folder: bool = False) -> Any:
    """A config field with its help text (the comment in the notebook's parameters cell) and
    its allowed values (``choices``, bounds ``ge``/``gt``/``le``, or for a path, a folder that
    must exist when the value is given)."""
    meta = {"help": help, "choices": choices, "ge": ge, "gt": gt, "le": le, "existing_folder": existing_folder}
    if isinstance(default, (list, dict, set)):
        raise TypeError("use a tuple for a sequence default")
    return dataclasses.field(default=default, metadata=meta)


_CONFIGS: dict[str, type] = {}


def figure_config(figure_id: str):
    """Register a config dataclass as the parameters of notebook ``figure_id``."""
    def deco(cls: type) -> type:
        _CONFIGS[figure_id] = cls
        return cls
    return deco


def registered_config(figure_id: str) -> type | None:
    """The config class registered for ``figure_id`` (None if none is); experiment modules
    register theirs when imported (``stitchkit.experiments.load_all()``)."""
    return _CONFIGS.get(figure_id)


def fields(cls: type) -> list[dataclasses.Field]:
    return [f for f in dataclasses.fields(cls) if "help" in f.metadata]


def _describe(tp: Any, meta: Mapping[str, Any]) -> str:
    if meta.get("choices"):
        return "one of " + ", ".join(repr(c) for c in meta["choices"])
    kind = {int: "an integer", float: "a finite number", bool: "true or false", str: "a string"}.get(
        _base_type(tp), str(tp))
    bounds = [f"{op} {meta[k]}" for k, op in (("ge", "≥"), ("gt", ">"), ("le", "≤")) if meta.get(k) is not None]
    return kind + (" " + " and ".join(bounds) if bounds else "")


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
    tp, meta = hints[name], field.metadata
    optional = type(None) in typing.get_args(tp)
    base = _base_type(tp)

    original = value

    def bad() -> ParameterValueError:
        return ParameterValueError(f"parameter {name!r} = {original!r} is invalid: expected {_describe(tp, meta)}"
                                   + (" or None" if optional else ""))

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
        value = tuple(value)
    if meta.get("choices") and value not in meta["choices"]:
        raise bad()
    if meta.get("existing_folder") and not Path(value).expanduser().is_dir():
        raise ParameterValueError(f"parameter {name!r} = {original!r} is invalid: expected an existing folder "
                                  f"({Path(value).expanduser().resolve()} is {'a file' if Path(value).exists() else 'missing'})")
    for key, ok in (("ge", lambda v, b: v >= b), ("gt", lambda v, b: v > b), ("le", lambda v, b: v <= b)):
        if meta.get(key) is not None and not ok(value, meta[key]):
            raise bad()
    return value


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
    return dataclasses.replace(base, **check_overrides(type(base), overrides))


def resolve(presets: Mapping[str, T], scale: str, namespace: Mapping[str, Any]) -> T:
    """The preset for ``scale`` overridden by every config field found in ``namespace`` (a
    notebook's ``globals()``) whose value is not None."""
    check_scale(scale)
    cls = type(presets["demo"])
    return preset(presets, scale, **{f.name: namespace[f.name] for f in fields(cls) if f.name in namespace})


def parameters_cell(cls: type, scales: tuple[str, ...] = REQUIRED_SCALES) -> str:
    """The parameters cell a notebook for config ``cls`` must have (scale first, its comment the
    figure's ``scales``)."""
    lines = [f'scale = "smoke"  # {" | ".join(scales)}']
    lines += [f"{f.name} = None  # {f.metadata['help']}" for f in fields(cls)]
    return "\n".join(lines)


def as_table(config: Any):
    """A config as a three-column DataFrame (setting, value, meaning) for display on a page."""
    import pandas as pd

    return pd.DataFrame([(f.name, repr(getattr(config, f.name)), f.metadata.get("help", ""))
                         for f in dataclasses.fields(config)],
                        columns=["setting", "value", "meaning"]).set_index("setting")
