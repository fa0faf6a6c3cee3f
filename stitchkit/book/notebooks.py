"""The notebook sources: ``notebooks/<ID>.py``, jupytext percent files, each with one cell tagged
``parameters`` whose first parameter is ``scale``; read without running anything (jupytext only,
no torch), so that ``stitchkit list`` and the command line's checks stay fast."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..base import paths
from ..registry.papers import PARTS


@dataclass(frozen=True)
class Parameter:
    name: str
    default: Any
    comment: str


@dataclass(frozen=True)
class NotebookInfo:
    id: str
    source: Path
    parameters: tuple[Parameter, ...]

    @property
    def part(self) -> str:
        prefix = self.id.split("-", 1)[0]
        if prefix not in PARTS:
            raise ValueError(f"notebook {self.id}: ID prefix {prefix!r} is none of {', '.join(PARTS)}")
        return PARTS[prefix]

    def book_notebook(self, book_dir: Path = paths.BOOK_DIR) -> Path:
        return book_dir / self.part / f"{self.id}.ipynb"

    def parameter_names(self) -> list[str]:
        return [p.name for p in self.parameters]


def parse_parameters(source: Path) -> tuple[Parameter, ...]:
    """Parameters from the ``parameters``-tagged cell: ``name = literal  # comment`` lines."""
    import jupytext

    nb = jupytext.read(source)
    cells = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    if len(cells) != 1:
        raise ValueError(f"{source}: expected exactly one cell tagged 'parameters', found {len(cells)}")
    text = cells[0].source
    lines = text.splitlines()
    params = []
    try:
        body = ast.parse(text).body
    except SyntaxError as exc:
        raise ValueError(f"{source}: the parameters cell does not parse ({exc.msg}, line {exc.lineno} of the "
                         "cell)") from None
    for node in body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            target = node.targets[0] if isinstance(node, ast.Assign) else node.target
            line = lines[node.lineno - 1]
            comment = line.split("#", 1)[1].strip() if "#" in line else ""
            try:
                value = ast.literal_eval(node.value)
            except ValueError:
                raise ValueError(f"{source}: parameter {target.id!r} must be a literal (a number, string, "
                                 "None, ...)") from None
            params.append(Parameter(target.id, value, comment))
    if not params or params[0].name != "scale":
        raise ValueError(f"{source}: the first parameter must be 'scale'")
    return tuple(params)


def discover(notebooks_dir: Path | None = None, *, broken: dict[str, str] | None = None
             ) -> dict[str, NotebookInfo]:
    """Every notebook source, by ID, in catalogue order of the file names. A notebook whose
    parameters cell cannot be read affects only itself: it is left out, and its message (naming
    its file) goes into ``broken`` when given."""
    found = {}
    for p in sorted(Path(notebooks_dir or paths.NOTEBOOKS_DIR).glob("*.py")):
        try:
            found[p.stem] = NotebookInfo(p.stem, p, parse_parameters(p))
        except ValueError as exc:
            if broken is not None:
                broken[p.stem] = str(exc)
    return found


def get_notebook(figure_id: str, notebooks_dir: Path | None = None) -> NotebookInfo:
    notebooks_dir = Path(notebooks_dir or paths.NOTEBOOKS_DIR)
    source = notebooks_dir / f"{figure_id}.py"
    if "/" not in figure_id and "\\" not in figure_id and source.is_file():
        return NotebookInfo(figure_id, source, parse_parameters(source))  # its own error, naming its file
    found = discover(notebooks_dir)
    raise KeyError(f"unknown notebook {figure_id!r}; valid: {', '.join(found) or '(none)'}")


__all__ = ["NotebookInfo", "Parameter", "discover", "get_notebook", "parse_parameters"]
