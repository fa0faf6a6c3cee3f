"""Runs, the cache and provenance.

Atomic file writes, the paths and environment variables a run reads, the device and its precision,
terminal progress, float64 linear algebra, the content-addressed store, a run's provenance and the
networks it used, a Dask cluster by its address, each figure as files, and a figure of several
panels laid out again for a phone. It imports nothing else of stitchkit.
"""
