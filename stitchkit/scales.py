"""Named scale presets: ``smoke`` (CI, seconds), ``demo`` (2 CPU cores, minutes), ``paper`` (GPU).

Each experiment defines its settings once as a frozen dataclass and a preset per scale; a
notebook resolves ``preset(PRESETS, scale, **overrides)`` where an override of ``None`` means
"keep the preset". Unknown scales and unknown fields raise with the valid choices.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping, TypeVar

SCALES = ("smoke", "demo", "paper")

T = TypeVar("T")


class UnknownScaleError(ValueError):
    pass


class UnknownParameterError(ValueError):
    pass


def check_scale(scale: str) -> str:
    if scale not in SCALES:
        raise UnknownScaleError(f"unknown scale {scale!r}; valid: {', '.join(SCALES)}")
    return scale


def preset(presets: Mapping[str, T], scale: str, **overrides: Any) -> T:
    """The preset for ``scale`` with ``overrides`` applied by field name (``None`` = keep)."""
    check_scale(scale)
    missing = [s for s in SCALES if s not in presets]
    if missing:
        raise ValueError(f"presets lack scales {missing}")
    base = presets[scale]
    names = [f.name for f in dataclasses.fields(base)]
    unknown = sorted(set(overrides) - set(names))
    if unknown:
        raise UnknownParameterError(f"unknown parameter(s) {', '.join(unknown)} for "
                                    f"{type(base).__name__}; valid: {', '.join(names)}")
    changes = {k: v for k, v in overrides.items() if v is not None}
    for k, v in changes.items():  # tuples survive papermill as lists
        if isinstance(getattr(base, k), tuple) and isinstance(v, list):
            changes[k] = tuple(v)
    return dataclasses.replace(base, **changes)


def as_table(config: Any):
    """A preset as a two-column DataFrame (setting, value) for display on a page."""
    import pandas as pd

    return pd.DataFrame([(f.name, repr(getattr(config, f.name))) for f in dataclasses.fields(config)],
                        columns=["setting", "value"]).set_index("setting")
