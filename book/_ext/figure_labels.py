"""Figures named by their page: each caption starts "B-F9 · figure 1.", counted per page.

Sphinx's ``numfig`` numbers figures across the whole book ("Fig. 17" on B-F9), numbers that mean
nothing to a reader and clash with the papers' own figure numbers; the book turns it off and
this extension labels each figure with its page's ID instead.
"""

from docutils import nodes


def label_figures(app, doctree, docname: str) -> None:
    page = docname.rsplit("/", 1)[-1]
    count = 0
    for figure in doctree.findall(nodes.figure):
        captions = [c for c in figure.children if isinstance(c, nodes.caption)]
        if captions:
            count += 1
            captions[0].insert(0, nodes.strong(text=f"{page} · figure {count}. "))


def no_book_wide_numbers(app, config) -> None:
    config.numfig = False  # after the other extensions' defaults (jupyter_book turns it on)


def setup(app):
    app.connect("config-inited", no_book_wide_numbers, priority=900)
    app.connect("doctree-resolved", label_figures)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
