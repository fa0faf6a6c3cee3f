"""Stitching and stitch grids.

The stitch kinds, direct-matching initialisation and task-loss matching (``stitches``), and the
stitch grid: its spec, its execution and its runner, on one machine or a Dask cluster.
"""
