"""Experiment recipes, one module (or package) per paper; notebooks call these and only these.

Which module and presets dictionary serve each figure is the figure registry's
(:mod:`stitchkit.registry.figures`): :func:`stitchkit.registry.figures.presets` imports only that module.
"""
