"""Experiment recipes, one module per paper; notebooks call these and only these.

Each module registers its figures' configs (:func:`stitchkit.scales.figure_config`) when
imported; :func:`load_all` imports every module and registers each figure's presets
(:data:`PRESETS_OF`, the dictionary its notebook resolves its parameters from), so that the CLI
can validate parameters, and the rules between them, against the scale's preset before any compute.
"""

import importlib
import pkgutil

from ..figures import FIGURES

# figure ID -> (module, name of the presets dictionary its notebook passes to ``resolve``[, the
# scales this figure offers when it shares another figure's presets]), from the figure registry
# (stitchkit.figures); a test checks every notebook against it
PRESETS_OF = {f.id: (f.module, f.presets, *((f.scales,) if f.scales else ())) for f in FIGURES}


def load_all() -> None:
    from ..scales import figure_presets, registered_presets

    for mod in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{mod.name}")
    for figure_id, (module, name, *scales) in PRESETS_OF.items():
        presets = getattr(importlib.import_module(f"{__name__}.{module}"), name)
        if scales:  # a figure sharing another's presets, at fewer scales
            presets = {s: presets[s] for s in scales[0]}
        if registered_presets(figure_id) != presets:
            figure_presets(figure_id, presets)
