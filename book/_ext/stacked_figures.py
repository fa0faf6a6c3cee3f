"""A figure of several panels carries its phone rendering too: the same panels one per row.

A page glues each figure under its key and, when it has more than one panel, the same figure
laid out for a phone under the key and ``STACKED_SUFFIX``
(:meth:`stitchkit.verdicts.results.Run.figure`). This extension makes ``{glue:figure}`` put both
images in the one figure, under the one caption: the wide one classed ``sk-wide``, the phone one
``sk-stacked``, the figure ``sk-has-stacked``. The book's style sheet (book/_static/stitchkit.css)
shows the wide one and hides the other, and the reverse on a phone. A figure glued alone (a single
panel, or a page run before this) renders as before.
"""

from docutils import nodes
from myst_nb.core.variables import RetrievalError, render_variable_outputs
from myst_nb.ext.glue.directives import PasteFigureDirective
from myst_nb.ext.glue.utils import retrieve_glue_data

from stitchkit.verdicts.results import STACKED_SUFFIX


def _classed(found: list, name: str) -> list:
    for node in found:
        for image in node.findall(nodes.image):
            image["classes"].append(name)
    return found


class StackedFigure(PasteFigureDirective):
    """``{glue:figure}``, with the figure's phone rendering beside the wide one where the page glued it."""

    def run(self):
        key = self.arguments[0]
        try:
            stacked = retrieve_glue_data(self.document, key + STACKED_SUFFIX)
        except RetrievalError:
            return super().run()
        alt = {"image": {"alt": self.options["alt"]}} if "alt" in self.options else None
        found = super().run()
        figure = next((n for n in found if isinstance(n, nodes.figure)), None)
        if figure is None:  # the wide figure's own warning
            return found
        figure["classes"].append("sk-has-stacked")
        for child in list(figure.children):
            if not isinstance(child, (nodes.caption, nodes.legend)):
                _classed([child], "sk-wide")
        phone = _classed(render_variable_outputs([stacked], self.document, self.line, self.source, render=alt),
                         "sk-stacked")
        at = next((i for i, c in enumerate(figure.children) if isinstance(c, (nodes.caption, nodes.legend))),
                  len(figure.children))
        for offset, node in enumerate(phone):
            figure.insert(at + offset, node)
        return found


def setup(app):
    app.add_directive_to_domain("glue", "figure", StackedFigure, override=True)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
