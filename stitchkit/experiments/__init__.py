"""Experiment recipes, one module per paper; notebooks call these and only these.

Each module registers its figures' configs (:func:`stitchkit.scales.figure_config`) when
imported; :func:`load_all` imports every module and registers each figure's presets
(:data:`PRESETS_OF`, the dictionary its notebook resolves its parameters from), so that the CLI
can validate parameters, and the rules between them, against the scale's preset before any compute.
"""

import importlib
import pkgutil

# figure ID -> (module, name of the presets dictionary its notebook passes to ``resolve``[, the
# scales this figure offers when it shares another figure's presets]); a test checks every
# notebook against this table
PRESETS_OF = {
    "B-F2A": ("bansal", "PRESETS_F2A"), "B-F2B": ("bansal_table", "PRESETS_F2B"),
    "B-F2C": ("bansal_sweeps", "PRESETS_F2C"), "B-F3A": ("bansal_sweeps", "PRESETS_F3A"),
    "B-F3B": ("bansal_sweeps", "PRESETS_F3B"), "B-F3C": ("bansal_sweeps", "PRESETS_F3C"),
    "B-F4": ("bansal", "PRESETS_F4"), "B-F5": ("bansal", "PRESETS_F5"), "B-F6": ("bansal_sweeps", "PRESETS_F6"),
    "B-F7": ("bansal_sweeps", "PRESETS_F7"), "B-F8": ("bansal_finetune", "PRESETS_F8"),
    "B-F9": ("bansal_freeze", "PRESETS_F9"), "B-T1": ("bansal_table", "PRESETS_T1"),
    "H-F2": ("hernandez", "PRESETS_F2"), "H-F4": ("hernandez", "PRESETS_F4"), "H-F5": ("hernandez", "PRESETS_F2", ("smoke", "demo", "paper")),
    "H-F6": ("hernandez", "PRESETS_F6"), "H-T1": ("hernandez", "PRESETS_T1"), "H-T2": ("hernandez", "PRESETS_T2"),
    "J-F1": ("balogh", "PRESETS_OOD"), "J-F2": ("balogh", "PRESETS_OOD"), "J-T1": ("balogh", "PRESETS_T1"),
    "J-T2": ("balogh", "PRESETS_T2"), "J-T3": ("balogh", "PRESETS_T3"),
    "S-4.2": ("smith", "PRESETS"), "S-F1A": ("smith", "PRESETS_F1A"), "S-F1B": ("smith", "PRESETS"),
    "S-F1C": ("smith", "PRESETS"), "S-FC5": ("smith", "PRESETS"), "S-FC6": ("smith", "PRESETS_FC6"),
    "S-TC1": ("smith", "PRESETS"),
    "X-1": ("across", "PRESETS_X1"),
}


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
