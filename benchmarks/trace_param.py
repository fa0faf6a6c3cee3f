"""Follow one notebook parameter from the page to the optimiser, as the code runs (issue 63: "``-p
stitch_lr X``: the value reaches the optimiser in at most 6 hops through at most 6 files").

The notebook's source (a jupytext percent file: plain Python) is executed in this process with the
parameter set to a value no preset holds. When an optimiser is first built with that learning rate,
the call stack is read: every frame of the notebook or of ``stitchkit`` whose local variables hold
the value (directly, or inside a config, recipe, dict or list up to a few levels down) is a *hop*,
and the trace is those frames, outermost first. The run stops there, so nothing is trained or
written. The hops before the notebook (``stitchkit run -p`` -> papermill's injected cell) cross a
process and are listed by hand (:data:`CLI_HOPS`); they are the same for every parameter.

    PYTHONPATH=<checkout> python benchmarks/trace_param.py S-F1B stitch_lr [--scale smoke] [--json OUT]

Run it against an older checkout (``git worktree add``) with PYTHONPATH to get the "before".
"""

from __future__ import annotations

import argparse
import dataclasses
import inspect
import json
import os
import sys
from pathlib import Path

import torch

CLI_HOPS = (("stitchkit/cli.py", "run: -p KEY VALUE parsed and checked against the figure's config"),
            ("stitchkit/book/execution.py", "papermill injects the value as the notebook's parameter"))
MARK = 0.01234567891  # a learning rate no preset holds


class Reached(Exception):
    pass


def _holds(obj, depth: int = 4, seen: set | None = None) -> bool:
    """Whether ``obj`` is the marked value or holds it within ``depth`` levels (dataclass fields,
    object attributes, mapping values, sequence items)."""
    if isinstance(obj, float):
        return obj == MARK
    if depth == 0 or obj is None or isinstance(obj, (str, bytes, int, bool, torch.Tensor, torch.nn.Module)):
        return False
    seen = set() if seen is None else seen
    if id(obj) in seen:
        return False
    seen.add(id(obj))
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        items = [getattr(obj, f.name, None) for f in dataclasses.fields(obj)]
    elif isinstance(obj, dict):
        items = list(obj.values())[:50]
    elif isinstance(obj, (list, tuple)):
        items = list(obj)[:50]
    else:
        return False
    return any(_holds(x, depth - 1, seen) for x in items)


def trace(figure_id: str, param: str, scale: str, root: Path) -> tuple[list, list]:
    """(hops, route): the frames on the stack that hold the value when the optimiser is built,
    outermost first; and every function of the project entered with the value among its arguments,
    in the order first entered (the route, side trips included)."""
    source = (root / "notebooks" / f"{figure_id}.py").read_text()
    hops: list[tuple[str, str, int]] = []
    route: dict[tuple[str, str], None] = {}
    original = torch.optim.Optimizer.__init__
    package = root / "stitchkit"

    def ours(filename: str) -> Path | None:
        path = Path(filename).resolve()
        return path if path == nb_path or package in path.parents else None

    def profile(frame, event, arg):
        if event == "call" and (path := ours(frame.f_code.co_filename)) is not None:
            code = frame.f_code
            args = [frame.f_locals.get(n) for n in code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]]
            if any(_holds(v) for v in args):
                route.setdefault((str(path.relative_to(root)), code.co_qualname), None)

    def spy(self, params, defaults):
        if defaults.get("lr") == MARK:
            for info in reversed(inspect.stack()[1:]):
                path = ours(info.filename)
                if path is not None and any(_holds(v) for k, v in info.frame.f_locals.items() if not k.startswith("__")):
                    hops.append((str(path.relative_to(root)), info.function, info.lineno))
            hops.append(("torch/optim", type(self).__name__, 0))
            raise Reached
        return original(self, params, defaults)

    nb_path = (root / "notebooks" / f"{figure_id}.py").resolve()
    # the parameters cell sets every parameter; papermill's injected cell follows it
    lines = source.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("# %%") and "parameters" in line)
    end = next(i for i, line in enumerate(lines) if line.startswith("# %%") and i > start)
    lines.insert(end, f"scale = {scale!r}\n{param} = {MARK!r}")
    code = compile("\n".join(lines), str(nb_path), "exec")
    torch.optim.Optimizer.__init__ = spy
    sys.setprofile(profile)
    try:
        exec(code, {"__name__": "__main__"})
    except Reached:
        return hops, list(route)
    finally:
        sys.setprofile(None)
        torch.optim.Optimizer.__init__ = original
    raise SystemExit(f"{figure_id}: no optimiser was built with {param} = {MARK}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("figure")
    ap.add_argument("param")
    ap.add_argument("--scale", default="smoke")
    ap.add_argument("--json", type=Path)
    a = ap.parse_args()
    import stitchkit
    root = Path(stitchkit.__file__).resolve().parents[1]
    os.chdir(root)
    hops, route = trace(a.figure, a.param, a.scale, root)
    rows = [*((f, what, 0) for f, what in CLI_HOPS), *hops]
    files = list(dict.fromkeys(f for f, _, _ in rows if f != "torch/optim"))
    print(f"{a.figure} -p {a.param}: the calls that hold the value when the optimiser is built")
    for k, (f, fn, line) in enumerate(rows, 1):
        print(f"{k:2d}. {f}{':' + str(line) if line else ''}  {fn}")
    moves = sum(a[0] != b[0] for a, b in zip(rows, rows[1:]))
    print(f"{len(rows) - 1} hops from the command line to the optimiser ({len(hops) - 1} in the kernel), "
          f"{moves} of them from one file to another, through {len(files)} files of the project")
    route_files = list(dict.fromkeys(f for f, _ in route))
    print(f"\nits whole route in the kernel (every function entered with the value, side trips included): "
          f"{len(route)} functions in {len(route_files)} files")
    for f, fn in route:
        print(f"    {f}  {fn}")
    if a.json:
        a.json.write_text(json.dumps({"figure": a.figure, "param": a.param, "hops": rows, "moves": moves, "files": files,
                                      "route": route}, indent=1))


if __name__ == "__main__":
    sys.exit(main())
