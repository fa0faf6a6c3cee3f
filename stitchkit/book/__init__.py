"""The book: the machinery that turns the notebooks into the companion's pages. Nothing a notebook
runs imports it (a page's kernel needs only the science below), and it imports nothing from the
command line; a test checks both.

``catalogue`` (the papers' figures, results files read back), ``notebooks`` (the notebook sources
and their parameters cells, read without torch), ``sync`` (parameters cells written from the
configs), ``changes`` (what changed after a run, shown on its page), ``amendments`` (verdicts from
before a redesign, shown beside the new ones), ``pages`` (what goes on each executed page),
``cost`` (the Cost page), ``findings`` (what the book and the part beyond the papers find, at a
glance), ``report`` (the reproducibility report), ``networks_page`` (every network the verdicts
rest on), ``apipage`` (the API reference page, from the docstrings), ``bookpages`` (scorecard, part pages, table of
contents), ``runs`` (output folders, run errors, a sweep's table), ``kernels`` (a page's kernel:
IPC sockets, stopped at once by a signal), ``execution`` (papermill, sweeps, the book build),
``batch`` (the pages a lent GPU runs: priority, budget, checks before any training), ``transfer``
(pages run on a GPU machine, packed, imported).
"""
