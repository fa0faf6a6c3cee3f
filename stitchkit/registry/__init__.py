"""The figures, the papers and the scales.

The figure registry (every page: ID, title, module, presets, scales; plain data), the papers, the
scales and the figure configs' parameters (presets, validation), and staleness (the library a page
ran, by hash).
"""
