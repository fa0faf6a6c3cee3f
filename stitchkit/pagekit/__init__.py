"""The page kit.

A notebook's opening line (``page``), the plots, and the tables and captions a page shows.
"""
