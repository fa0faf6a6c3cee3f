"""Experiment recipes, one module per paper; notebooks call these and only these.

Each module registers its figures' configs (:func:`stitchkit.scales.figure_config`) when
imported; :func:`load_all` imports every module so that the CLI can validate parameters.
"""

import importlib
import pkgutil


def load_all() -> None:
    for mod in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{mod.name}")
