"""Experiment recipes, one module per paper; notebooks call these and only these."""
