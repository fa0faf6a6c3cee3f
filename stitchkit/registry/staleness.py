"""Whether a page is behind the code that made it: its notebook, or the library modules its run
imported.

About 95% of a page's computation is library code, so a run records, beside its notebook's hash
(``source_sha256``), the SHA-256 of every ``stitchkit`` module its kernel had imported when it saved
its results (``library_sha256``: path relative to the repository root -> hash; taken by
:func:`library_hashes` in :meth:`stitchkit.verdicts.results.Run.to_dict`). :func:`library_changes` names the
modules whose file has changed (or gone) since; :func:`behind_reason` says why a page is behind, in
one line, for ``stitchkit list``, ``make book`` (which marks it), ``make rerun`` (which re-runs it), the part pages and the page's provenance box. A run
from before this record (no ``library_sha256``) is judged by its notebook alone.

A module's hash is of its code, not its bytes (:func:`code_hash`, recorded with ``library_hash``:
:data:`CODE_HASH`): the module's syntax tree without its docstrings, so an edit to a docstring, a
comment or the layout leaves the pages current (no docstring reaches a page's results).

The hash is of the code a run *at its scale* depends on: for a run at ``smoke`` or ``demo``, the
``gpu`` rows of the tables keyed by scale are left out (a dict literal whose keys are all scale
names loses its ``"gpu"`` entry; a statement ``TABLE["gpu"] = ...`` is dropped), so adding or tuning
a figure's ``gpu`` preset or a network family's ``gpu`` recipe leaves the CPU pages current (issue
47). This holds because no library code reads a ``gpu`` row by name (a test checks: a row is read
only by the run's own scale), so nothing a demo run computes comes from one. A ``gpu`` or ``paper``
run hashes every row.

Runs recorded earlier are compared as they recorded: ``code-v1`` (every row), or, with no
``library_hash``, their files' bytes.

A page behind the library is re-run by ``make rerun``; if the re-run (from the cache: minutes)
reproduces the page's numbers and verdicts bit for bit, the page is current again and says so
(:func:`same_results`); otherwise the build names what changed.

Plain Python: ``stitchkit list`` reads it without importing torch.
"""

from __future__ import annotations

import ast
import hashlib
import math
import sys
import time
from pathlib import Path
from typing import Any, Mapping

from ..base import paths

PACKAGE = "stitchkit"
# results keys that describe the run rather than what it found: left out when two runs' results are compared
RUN_KEYS = ("provenance", "library_sha256", "library_hash", "source", "source_sha256", "figures")
CODE_HASH = "code-v2"  # library_sha256 holds code_hash(path, scale) values (code-v1: every scale's rows;
# a record without library_hash: file_hash())
SCALE_NAMES = ("smoke", "demo", "gpu", "paper")  # stitchkit.registry.figures.SCALES (kept here: no import cycle)
OPTIONAL_ROWS = {"smoke": ("gpu",), "demo": ("gpu",)}  # run scale -> the rows its code hash leaves out
_HASHES: dict[tuple[str, str, int, int], str] = {}
RACY_NS = 2_000_000_000  # a file modified less than this long ago is hashed afresh each time


def _memo_hash(path: Path, kind: str, digest_of) -> str:
    """``digest_of(bytes)`` of a file, remembered per path, modification time and size once the file
    is older than the clock's granularity could hide (two writes of the same size within one
    timestamp tick would otherwise share a memo, as in "racy git")."""
    st = path.stat()
    memo = (kind, str(path), st.st_mtime_ns, st.st_size)
    if memo in _HASHES:
        return _HASHES[memo]
    digest = digest_of(path.read_bytes())
    if time.time_ns() - st.st_mtime_ns > RACY_NS:
        _HASHES[memo] = digest
    return digest


def file_hash(path: Path) -> str:
    """SHA-256 of a file's bytes (a notebook's; a library module's in runs recorded before
    :data:`CODE_HASH`)."""
    return _memo_hash(path, "file", lambda data: hashlib.sha256(data).hexdigest())


def _scale_key(node: ast.AST | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and node.value in SCALE_NAMES else None


class _LeaveOutRows(ast.NodeTransformer):
    """Drops the rows of tables keyed by scale whose scale is in ``rows``."""

    def __init__(self, rows: tuple[str, ...]) -> None:
        self.rows = rows

    def visit_Dict(self, node: ast.Dict) -> ast.AST:
        self.generic_visit(node)
        scales = [_scale_key(k) for k in node.keys]
        if node.keys and all(scales):
            kept = [(k, v) for k, v, s in zip(node.keys, node.values, scales) if s not in self.rows]
            node.keys, node.values = [k for k, _ in kept], [v for _, v in kept]
        return node

    def _row_store(self, targets: list[ast.expr]) -> bool:
        return bool(targets) and all(isinstance(t, ast.Subscript) and _scale_key(t.slice) in self.rows
                                     for t in targets)

    def visit_Assign(self, node: ast.Assign) -> ast.AST | None:
        return None if self._row_store(node.targets) else self.generic_visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> ast.AST | None:
        return None if self._row_store([node.target]) else self.generic_visit(node)


def _code_digest(source: bytes, rows: tuple[str, ...] = ()) -> str:
    tree = ast.parse(source)
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and body
                and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)):
            node.body = body[1:] or [ast.Pass()]
    if rows:  # (a block a dropped row leaves empty is fine: the tree is dumped, never compiled)
        tree = _LeaveOutRows(rows).visit(tree)
    return hashlib.sha256(ast.dump(tree).encode()).hexdigest()


def code_hash(path: Path, scale: str | None = None) -> str:
    """SHA-256 of a module's code as a run at ``scale`` depends on it: its syntax tree (no line
    numbers) without docstrings, and without the rows :data:`OPTIONAL_ROWS` leaves out at ``scale``
    (None: every row, ``code-v1``). Comments, docstrings and layout do not change it; any change to
    what such a run executes does."""
    rows = OPTIONAL_ROWS.get(scale or "", ())
    return _memo_hash(path, "code:" + ",".join(rows), lambda data: _code_digest(data, rows))


def library_hashes(root: Path | None = None, scale: str | None = None) -> dict[str, str]:
    """{module file relative to ``root`` (the repository root): :func:`code_hash` at ``scale``}
    for every ``stitchkit`` module imported in this process whose file lies under ``root``."""
    root = Path(root or paths.REPO_ROOT).resolve()
    out = {}
    for name, module in list(sys.modules.items()):
        if name != PACKAGE and not name.startswith(PACKAGE + "."):
            continue
        file = getattr(module, "__file__", None)
        if not file or not file.endswith(".py"):
            continue
        path = Path(file).resolve()
        if path.is_relative_to(root):
            out[path.relative_to(root).as_posix()] = code_hash(path, scale)
    return dict(sorted(out.items()))


def library_changes(results: Mapping[str, Any], root: Path | None = None) -> list[str]:
    """The library modules recorded by the run of ``results`` whose file has changed or gone since
    (paths relative to the repository root, sorted); [] when nothing changed or nothing was recorded."""
    recorded = results.get("library_sha256")
    if not isinstance(recorded, Mapping):
        return []
    root = Path(root or paths.REPO_ROOT)
    kind = results.get("library_hash")
    if kind == CODE_HASH:
        def digest(path: Path) -> str:
            return code_hash(path, results.get("scale"))
    elif kind == "code-v1":
        digest = code_hash
    else:
        digest = file_hash
    return sorted(rel for rel, sha in recorded.items()
                  if not (root / rel).is_file() or digest(root / rel) != sha)


def named(modules: list[str], most: int = 4) -> str:
    """``a.py, b.py and 3 more``: module files by their names within the package."""
    names = [m.removeprefix(PACKAGE + "/") for m in modules]
    return ", ".join(names[:most]) + (f" and {len(names) - most} more" if len(names) > most else "")


def behind_reason(results: Mapping[str, Any], notebook: Path | None = None, root: Path | None = None) -> str | None:
    """Why the run of ``results`` is behind the code (its notebook ``notebook``, when given and
    present, changed; or library modules it imported changed, named; or, for a page built from
    other pages, one of those pages' results changed since it read them: :func:`source_changes`),
    or None when it is current."""
    recorded = results.get("source_sha256")
    if notebook is not None and recorded and Path(notebook).is_file() and file_hash(Path(notebook)) != recorded:
        return "notebook changed since the run"
    changed = library_changes(results, root)
    if changed:
        return f"library changed since the run: {named(changed)}"
    moved = source_changes(results, root)
    if moved:
        return f"a page it is built from changed since the run: {', '.join(moved)}"
    return None


def results_digest(results: Mapping[str, Any] | None) -> str | None:
    """SHA-256 of what a run found (its results less what describes the run, :data:`RUN_KEYS`, as
    :func:`same_results` compares them): a re-run that reproduces a page bit for bit keeps it."""
    import json

    if results is None:
        return None
    found = {k: v for k, v in json.loads(json.dumps(results)).items() if k not in RUN_KEYS}
    return hashlib.sha256(json.dumps(found, sort_keys=True).encode()).hexdigest()


def source_record(read: Mapping[str, tuple[Path, Mapping[str, Any] | None]]) -> dict[str, dict[str, Any]]:
    """What a page built from other pages records of them (``results["sources"]``): figure ID ->
    the results file it read (relative to the repository root where it is inside it) and the
    :func:`results_digest` of what it found there (None: the page had not run)."""
    out = {}
    for fid, (path, results) in read.items():
        path = Path(path).resolve()
        try:
            shown = path.relative_to(paths.REPO_ROOT.resolve()).as_posix()
        except ValueError:
            shown = str(path)
        out[fid] = {"path": shown, "digest": results_digest(results)}
    return out


def source_changes(results: Mapping[str, Any], root: Path | None = None) -> list[str]:
    """The pages a derived page read (``results["sources"]``, :func:`source_record`) whose results
    differ now from what it read: each named, with "not run then" or "gone now" where it applies."""
    import json

    sources = results.get("sources")
    if not isinstance(sources, Mapping):
        return []
    base = Path(root or paths.REPO_ROOT)
    out = []
    for fid, rec in sources.items():
        if not isinstance(rec, Mapping) or not isinstance(rec.get("path"), str):
            continue
        path = Path(rec["path"]) if Path(rec["path"]).is_absolute() else base / rec["path"]
        try:
            now = json.loads(path.read_text()) if path.exists() else None
        except ValueError:
            now = None
        digest = results_digest(now)
        if digest != rec.get("digest"):
            out.append(fid + (" (gone now)" if now is None else " (not run then)" if rec.get("digest") is None
                              else ""))
    return out


def _differences(a: Any, b: Any, where: str, out: list[str]) -> None:
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        for k in sorted(set(a) | set(b), key=str):
            if k not in a or k not in b:
                out.append(f"{where}/{k} {'added' if k not in a else 'gone'}")
            else:
                _differences(a[k], b[k], f"{where}/{k}", out)
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            _differences(x, y, f"{where}[{i}]", out)
    elif not (a == b or (isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b))):
        out.append(where)


def same_results(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[str]:
    """Where two runs' results differ, leaving out what describes the run (:data:`RUN_KEYS`):
    [] when every number, verdict and text is the same bit for bit."""
    import json

    out: list[str] = []
    a, b = ({k: v for k, v in json.loads(json.dumps(r)).items() if k not in RUN_KEYS} for r in (before, after))
    _differences(a, b, "", out)
    return out


__all__ = ["CODE_HASH", "OPTIONAL_ROWS", "PACKAGE", "SCALE_NAMES", "RUN_KEYS", "behind_reason", "code_hash", "file_hash",
           "library_changes", "library_hashes", "named", "results_digest", "same_results", "source_changes",
           "source_record"]
