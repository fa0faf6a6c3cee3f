"""Your own networks.

``stitchkit compare``: any PyTorch classifier as a network to stitch (``adapter``), every measure
between two of a user's networks with the book's controls and intervals, in bounded memory
(``compare``), what the command reads (``inputs``), its HTML report and JSON (``html_report``), and
every notion on every layer pair (``notions``, which the part beyond the papers uses).
"""
