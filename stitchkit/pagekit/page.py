"""A notebook's opening line: its figure, scale and parameters resolved once, and the page's run.

Every notebook in ``notebooks/`` opens with::

    run, cfg = open_page("B-F2A", globals())

after its ``parameters`` cell (whose first line is ``scale``). The figure registry
(:mod:`stitchkit.registry.figures`) says which experiment module holds the figure's presets; the preset for
the notebook's scale is overridden by every parameter the cell sets (not None), validated once,
and handed to a :class:`~stitchkit.verdicts.results.Run` that records the page's numbers, claims and figures.
"""

from __future__ import annotations

from dataclasses import fields, is_dataclass, replace
from typing import Any, Mapping

from ..networks import zoo
from ..registry import figures
from ..registry.scales import check_figure_scale, resolve
from ..verdicts.results import Run


def open_page(figure_id: str, namespace: Mapping[str, Any], **run_options: Any) -> tuple[Run, Any]:
    """Figure ``figure_id``'s config at the notebook's ``scale`` with the parameters ``namespace``
    (the notebook's ``globals()``) sets, and the page's :class:`Run` (``run_options``: e.g.
    ``role``, what a page that judges nothing does instead). An unknown figure, a scale it does not
    offer or a bad value raises before any compute, naming the valid choices."""
    if figure_id not in figures.BY_ID:
        raise KeyError(f"unknown figure {figure_id!r}; valid: {', '.join(figures.BY_ID)}")
    if "scale" not in namespace:
        raise KeyError(f"figure {figure_id}: the notebook sets no 'scale' (the parameters cell's first line)")
    scale = check_figure_scale(figure_id, namespace["scale"])
    cfg = resolve(figures.presets(figure_id), scale, namespace)
    run = Run(figure_id, scale, cfg, **run_options)
    for name, recipe in held_recipes(cfg).items():
        run.text(f"recipe_{name}", zoo.describe(recipe))
    return run, cfg


def held_recipes(cfg: Any) -> dict[str, zoo.Recipe]:
    """The network recipes ``cfg`` holds (its :func:`stitchkit.networks.zoo.recipe_field` fields
    that are recipes), by field name: a page glues each in words as ``recipe_<name>``, so that its
    prose says which networks ran (``{glue:text}`recipe_net```)."""
    if not is_dataclass(cfg):
        return {}
    held = {f.name: getattr(cfg, f.name) for f in fields(cfg)
            if f.metadata.get("recipe") and isinstance(getattr(cfg, f.name), zoo.Recipe)}
    # the page's own width, length and data-size parameters override the recipes its builders pass them to:
    # the main recipe (``net``), unless the config says which (its RECIPE_OVERRIDES: parameter -> fields)
    targets = getattr(type(cfg), "RECIPE_OVERRIDES", {p: ("net",) for p in ("width", "model_epochs", "model_train_size")})
    for param, names in targets.items():
        value = getattr(cfg, param, None)
        if value is None:
            continue
        for name in (n for n in names if n in held):
            held[name] = replace(held[name], **{OVERRIDDEN[param]: value},
                                 **({"steps": None} if OVERRIDDEN[param] == "epochs" else {}))
    return held


# a page parameter that overrides a recipe's field -> that field
OVERRIDDEN = {"width": "width", "model_epochs": "epochs", "simclr_epochs": "epochs", "model_train_size": "train_size"}


__all__ = ["held_recipes", "open_page"]
