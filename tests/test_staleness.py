"""A page's record of the library it was computed with (issue 48): hashes, changes, comparisons."""

from stitchkit.base import paths
from stitchkit.registry import staleness


def test_a_run_records_the_library_modules_it_imported_by_hash():
    hashes = staleness.library_hashes()
    assert "stitchkit/registry/staleness.py" in hashes and "stitchkit/base/paths.py" in hashes
    assert hashes["stitchkit/registry/staleness.py"] == staleness.code_hash(paths.REPO_ROOT / "stitchkit" / "registry" / "staleness.py")
    assert all(k.startswith("stitchkit/") and k.endswith(".py") for k in hashes)


def test_changed_and_gone_modules_are_named(tmp_path):
    (tmp_path / "stitchkit").mkdir()
    kept, edited = tmp_path / "stitchkit" / "kept.py", tmp_path / "stitchkit" / "edited.py"
    kept.write_text("a = 1\n")
    edited.write_text("b = 1\n")
    results = {"library_sha256": {"stitchkit/kept.py": staleness.file_hash(kept),
                                  "stitchkit/edited.py": staleness.file_hash(edited),
                                  "stitchkit/gone.py": "0" * 64}}
    assert staleness.library_changes(results, tmp_path) == ["stitchkit/gone.py"]
    edited.write_text("b = 2\n")
    assert staleness.library_changes(results, tmp_path) == ["stitchkit/edited.py", "stitchkit/gone.py"]
    assert staleness.behind_reason(results, root=tmp_path) == "library changed since the run: edited.py, gone.py"
    assert staleness.behind_reason({}, root=tmp_path) is None  # a run from before the record: its notebook alone
    assert staleness.named([f"stitchkit/m{i}.py" for i in range(6)]) == "m0.py, m1.py, m2.py, m3.py and 2 more"


def test_a_module_is_behind_when_its_code_changes_not_its_docstrings_or_comments(tmp_path):
    """Code hashes (issue 48): a docstring, a comment or the layout leaves the pages current; a
    change to what runs does not. A run recorded before code hashes is compared by its files' bytes."""
    (tmp_path / "stitchkit").mkdir()
    m = tmp_path / "stitchkit" / "m.py"
    m.write_text('"""Doc."""\n\ndef f(x):\n    """Twice."""\n    return 2 * x  # double\n')
    results = {"library_sha256": {"stitchkit/m.py": staleness.code_hash(m)}, "library_hash": staleness.CODE_HASH}
    old = {"library_sha256": {"stitchkit/m.py": staleness.file_hash(m)}}
    m.write_text('"""Another doc."""\n\n\ndef f(x):  # a new comment\n    """Two times x."""\n    return 2 * x\n')
    assert staleness.library_changes(results, tmp_path) == []
    assert staleness.library_changes(old, tmp_path) == ["stitchkit/m.py"]  # bytes, as it was recorded
    m.write_text('def f(x):\n    return 3 * x\n')
    assert staleness.library_changes(results, tmp_path) == ["stitchkit/m.py"]
    m.write_text('def f(x):\n    """Only a docstring now."""\n')
    assert staleness.library_changes(results, tmp_path) == ["stitchkit/m.py"]  # the body went: code changed


def test_a_demo_page_does_not_depend_on_the_gpu_rows_of_a_table_keyed_by_scale(tmp_path):
    """Issue 47: adding or tuning a ``gpu`` preset or recipe leaves the pages at smoke and demo
    current; a change to their own rows, or to code, does not; a gpu page depends on every row."""
    (tmp_path / "stitchkit").mkdir()
    m = tmp_path / "stitchkit" / "m.py"

    def record(scale):
        return {"scale": scale, "library_hash": staleness.CODE_HASH,
                "library_sha256": {"stitchkit/m.py": staleness.code_hash(m, scale)}}

    m.write_text('T = {"smoke": 1, "demo": 2, "paper": 4}\nP = dict(T)\n')
    demo, smoke, paper = record("demo"), record("smoke"), record("paper")
    m.write_text('T = {"smoke": 1, "demo": 2, "gpu": 3, "paper": 4}\nP = dict(T)\nP["gpu"] = 5\n')
    assert staleness.library_changes(demo, tmp_path) == [] and staleness.library_changes(smoke, tmp_path) == []
    assert staleness.library_changes(paper, tmp_path) == ["stitchkit/m.py"]  # a paper run hashes every row
    gpu = record("gpu")
    m.write_text('T = {"smoke": 1, "demo": 2, "gpu": 30, "paper": 4}\nP = dict(T)\nP["gpu"] = 5\n')
    assert staleness.library_changes(demo, tmp_path) == [] and staleness.library_changes(gpu, tmp_path) != []
    m.write_text('T = {"smoke": 1, "demo": 20, "gpu": 30, "paper": 4}\nP = dict(T)\nP["gpu"] = 5\n')
    assert staleness.library_changes(demo, tmp_path) == ["stitchkit/m.py"]
    assert staleness.library_changes(smoke, tmp_path) == ["stitchkit/m.py"]  # a row of another scale, not gpu
    old = {"scale": "demo", "library_hash": "code-v1", "library_sha256": {"stitchkit/m.py": staleness.code_hash(m)}}
    m.write_text('T = {"smoke": 1, "demo": 20, "gpu": 3, "paper": 4}\nP = dict(T)\nP["gpu"] = 5\n')
    assert staleness.library_changes(old, tmp_path) == ["stitchkit/m.py"]  # code-v1 records hashed every row


def test_no_library_code_reads_a_gpu_row_by_name():
    """What makes leaving the gpu rows out of a demo page's hash sound: a table's row is read by the
    run's own scale (a variable), never by the name "gpu", so no gpu row flows into another scale
    (except inside a statement that sets a gpu row, which is left out with it). A comparison with
    "gpu" is code, and stays in every hash."""
    import ast

    def gpu_row_store(node):  # TABLE["gpu"] = ...: left out of a demo page's hash whole, its reads with it
        return isinstance(node, ast.Assign) and all(
            isinstance(t, ast.Subscript) and isinstance(t.slice, ast.Constant) and t.slice.value == "gpu"
            for t in node.targets)

    found = []
    for path in sorted((paths.REPO_ROOT / "stitchkit").rglob("*.py")):
        if path.parent.name == "book" or path.name in ("cli.py", "__main__.py"):
            continue  # the book's machinery and the command line: no page imports them (tests/test_layout.py)
        tree = ast.parse(path.read_text())
        inside = {id(n) for s in ast.walk(tree) if gpu_row_store(s) for n in ast.walk(s.value)}
        for node in ast.walk(tree):
            if id(node) in inside:
                continue
            read = (isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load)
                    and isinstance(node.slice, ast.Constant) and node.slice.value == "gpu")
            got = (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get"
                   and node.args and isinstance(node.args[0], ast.Constant) and node.args[0].value == "gpu")
            if read or got:
                found.append(f"{path.relative_to(paths.REPO_ROOT)}:{node.lineno}")
    assert found == []


def test_runs_are_compared_on_what_they_found_not_on_how_they_ran():
    a = {"id": "X", "numbers": {"acc": 0.5, "n": [1, 2]}, "claims": [{"verdict": "reproduced"}],
         "provenance": {"wall_seconds": 10.0}, "library_sha256": {"m": "1"}}
    b = {**a, "provenance": {"wall_seconds": 3.0}, "library_sha256": {"m": "2"}, "numbers": {"acc": 0.5, "n": (1, 2)}}
    assert staleness.same_results(a, b) == []
    c = {**a, "numbers": {"acc": 0.5000001, "n": [1, 2], "new": 1}, "claims": [{"verdict": "not reproduced"}]}
    assert staleness.same_results(a, c) == ["/claims[0]/verdict", "/numbers/acc", "/numbers/new added"]


def test_a_run_records_the_library_as_it_imported_it(monkeypatch):
    """A module edited while a page runs is not recorded as the one that ran: the hashes taken when
    the run starts win; modules first imported later are hashed when it saves."""
    from stitchkit.verdicts.results import Run

    calls = iter([{"stitchkit/a.py": "at start"}, {"stitchkit/a.py": "edited", "stitchkit/b.py": "later"}])
    monkeypatch.setattr(staleness, "library_hashes", lambda **kw: next(calls))
    run = Run("B-F2A", "demo", {})
    assert run.to_dict()["library_sha256"] == {"stitchkit/a.py": "at start", "stitchkit/b.py": "later"}


def test_a_file_rewritten_within_one_timestamp_tick_is_hashed_afresh(tmp_path):
    import os

    f = tmp_path / "m.py"
    f.write_text("b = 1\n")
    first = staleness.file_hash(f)
    stamp = f.stat().st_mtime_ns
    f.write_text("b = 2\n")  # same size, and the same modification time, as a coarse clock would give
    os.utime(f, ns=(stamp, stamp))
    assert staleness.file_hash(f) != first


def test_a_page_built_from_other_pages_is_behind_when_one_of_them_changes(tmp_path):
    """Issue 68, finding 6: B-T1 ran before its source pages were re-run and still showed their old
    verdicts, and nothing marked it stale."""
    import json

    from stitchkit.registry import staleness
    from stitchkit.verdicts.results import Run

    src = tmp_path / "B-F2A.results.json"
    first = {"id": "B-F2A", "scale": "demo", "claims": [{"key": "connected", "verdict": "not reproduced"}],
             "numbers": {"x": 6.83}, "provenance": {"date": "2026-11-28"}}
    src.write_text(json.dumps(first))
    run = Run("B-T1", "smoke", {})
    run.built_from({"B-F2A": (src, first), "B-F3A": (tmp_path / "B-F3A.results.json", None)})
    results = run.to_dict()
    assert set(results["sources"]) == {"B-F2A", "B-F3A"}
    assert staleness.source_changes(results, tmp_path) == []
    # re-run bit for bit (only what describes the run differs): still current
    src.write_text(json.dumps({**first, "provenance": {"date": "2026-12-01"}}))
    assert staleness.source_changes(results, tmp_path) == []
    src.write_text(json.dumps({**first, "claims": [{"key": "connected", "verdict": "inconclusive at this scale"}]}))
    (tmp_path / "B-F3A.results.json").write_text(json.dumps(first))
    assert staleness.source_changes(results, tmp_path) == ["B-F2A", "B-F3A (not run then)"]
    results["library_sha256"] = {}
    assert staleness.behind_reason(results, root=tmp_path) == \
        "a page it is built from changed since the run: B-F2A, B-F3A (not run then)"
    src.unlink()
    assert "B-F2A (gone now)" in staleness.source_changes(results, tmp_path)
