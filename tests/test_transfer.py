"""Pages computed elsewhere (a lent GPU), packed into one archive and imported into the book."""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path

import pytest

from stitchkit import cli
from stitchkit.base.provenance import git_state
from stitchkit.book import bookpages, catalogue, execution, transfer
from stitchkit.registry import papers
from stitchkit.verdicts.results import GLUE_PREFIX as GLUE


def _preset_params(figure_id: str, scale: str) -> dict:
    from dataclasses import asdict

    from stitchkit.registry import figures

    return json.loads(json.dumps(asdict(figures.presets(figure_id)[scale])))


def _fake_execute(info, out, scale, params=None, *, progress=True):
    """What execution.execute leaves behind, without a kernel: the page (gluing its number, as a
    page does) and its results, run at this checkout's commit with the scale's preset."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    results = {"id": info.id, "scale": scale, "source_sha256": catalogue.source_hash(info.source),
               "source": f"notebooks/{info.id}.py", "numbers": {"x": 1.5}, "params": _preset_params(info.id, scale),
               "provenance": {"wall_seconds": 12.5, "commit": git_state()["commit"], "device": "a GPU"},
               "claims": [{"key": "k", "text": "a claim", "verdict": "reproduced", "paper": "p", "ours": "o"}]}
    out.with_suffix(".results.json").write_text(json.dumps(results))
    glued = {"output_type": "display_data", "metadata": {"scrapbook": {"name": "x", "mime_prefix": GLUE}},
             "data": {GLUE + "text/plain": "1.5"}}
    out.write_text(json.dumps({"cells": [{"cell_type": "code", "source": "", "metadata": {}, "execution_count": 1,
                                          "outputs": [glued]}], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    return results


@pytest.fixture
def archive(tmp_path, monkeypatch):
    monkeypatch.setattr(execution, "execute", _fake_execute)
    path = tmp_path / "out" / "pages.tar.gz"
    manifest = transfer.pack_pages(["H-F2"], "gpu", path, progress=False)
    assert [p["id"] for p in manifest["pages"]] == ["H-F2"] and manifest["scale"] == "gpu"
    return path


def _book(tmp_path: Path, scale: str = "demo") -> Path:
    book = tmp_path / "book"
    (book / "hernandez").mkdir(parents=True)
    (book / "hernandez" / "H-F2.ipynb").write_text("{}")
    (book / "hernandez" / "H-F2.results.json").write_text(json.dumps(
        {"id": "H-F2", "scale": scale, "claims": [{"key": "k", "text": "a claim", "verdict": "not reproduced"}]}))
    return book


def _rewrite(path: Path, edit, *, rebind: bool = True) -> None:
    """Rewrite ``path``'s members through ``edit(name, bytes) -> bytes | None`` (None drops one).
    ``rebind``: also rewrite the manifest's SHA-256 of each member (a forger who knows the format);
    without it, an edit the manifest no longer matches."""
    import hashlib

    with tarfile.open(path, "r:gz") as tar:
        members = {m.name: tar.extractfile(m).read() for m in tar.getmembers()}
    edited = {}
    for name, data in members.items():
        data = edit(name, data)
        if data is not None:
            edited[name] = data
    if rebind and "manifest.json" in edited:
        manifest = json.loads(edited["manifest.json"])
        manifest["members"] = {n: hashlib.sha256(d).hexdigest() for n, d in edited.items() if n != "manifest.json"}
        edited["manifest.json"] = json.dumps(manifest).encode()
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, data in edited.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    path.write_bytes(buf.getvalue())


def test_an_imported_page_replaces_a_lower_scale_and_keeps_its_verdicts_beside(archive, tmp_path):
    book = _book(tmp_path, "demo")
    lines = transfer.import_pages(archive, book)
    assert "the gpu page placed" in lines[0] and "H-F2.demo.results.json" in lines[0]
    shown = json.loads((book / "hernandez" / "H-F2.results.json").read_text())
    kept = json.loads((book / "hernandez" / "H-F2.demo.results.json").read_text())
    assert shown["scale"] == "gpu" and kept["scale"] == "demo"
    # the scorecard lists both scales' verdicts, linked to the one page; the part page shows one page
    pages = catalogue.load_pages(book)
    assert [(p.results["scale"], p.shown, p.doc) for p in pages] == [("gpu", True, "hernandez/H-F2"),
                                                                      ("demo", False, "hernandez/H-F2")]
    records = [r for r in bookpages.rows(pages) if r["id"] == "H-F2"]
    assert [(r["scale"], r["verdict"]) for r in records] == [("gpu", "reproduced"), ("demo", "not reproduced")]
    # one run a figure is counted (issue 68, item 6): the gpu run, of the notebook as it is now
    assert records[0]["superseded"] == "" and "the current gpu run is counted" in records[1]["superseded"]
    counted = bookpages.counted(records)
    assert [(r["scale"], r["verdict"]) for r in counted] == [("gpu", "reproduced")]
    part = bookpages.part_markdown(papers.PAPER_BY_PART["hernandez"], pages, counted)
    assert part.count("hernandez/H-F2") == 0 and "(`demo` verdicts beside it)" in part


def test_a_higher_scale_run_under_retired_rules_is_not_counted_while_a_current_run_is_beside_it(archive, tmp_path):
    """Issue 68, finding 6: H-F2's shown page was its gpu run under controls since retired, and the
    scorecard counted its verdicts beside the current demo run's (each claim twice)."""
    book = _book(tmp_path, "demo")
    transfer.import_pages(archive, book)
    gpu_file, demo_file = book / "hernandez" / "H-F2.results.json", book / "hernandez" / "H-F2.demo.results.json"
    gpu, demo = json.loads(gpu_file.read_text()), json.loads(demo_file.read_text())
    demo["source_sha256"], gpu["source_sha256"] = gpu["source_sha256"], "an earlier notebook"
    gpu_file.write_text(json.dumps(gpu))
    demo_file.write_text(json.dumps(demo))
    pages = catalogue.load_pages(book)
    records = [r for r in bookpages.rows(pages) if r["id"] == "H-F2"]
    counted = bookpages.counted(records)
    assert [(r["scale"], r["verdict"]) for r in counted] == [("demo", "not reproduced")]
    assert "made from an earlier version of its notebook (rules since retired); the current demo run is counted" in \
        records[0]["superseded"]
    part = bookpages.part_markdown(papers.PAPER_BY_PART["hernandez"], pages, counted)
    assert "`gpu` page; `demo` verdicts counted" in part and "not reproduced" in part


def test_a_lower_scale_never_replaces_a_higher_one(archive, tmp_path):
    book = _book(tmp_path, "paper")
    assert "kept the paper page" in transfer.import_pages(archive, book)[0]
    assert json.loads((book / "hernandez" / "H-F2.results.json").read_text())["scale"] == "paper"
    assert json.loads((book / "hernandez" / "H-F2.gpu.results.json").read_text())["scale"] == "gpu"


@pytest.mark.parametrize("edit, message", [
    (lambda n, d: d.replace(b'"source_sha256": "', b'"source_sha256": "0') if n == "manifest.json" else d,
     "was run from another notebook source"),
    (lambda n, d: d.replace(b'"verdict": "reproduced"', b'"verdict": ""') if n.endswith(".results.json") else d,
     "claim 'k' has verdict ''"),
    (lambda n, d: d.replace(b'"scale": "gpu"', b'"scale": "huge"') if n == "manifest.json" else d,
     "unknown scale 'huge'"),
    (lambda n, d: None if n.endswith(".ipynb") else d, "are missing"),
    (lambda n, d: None if n == "manifest.json" else d, "no manifest.json"),
    # issue 50: tampering that a consistent manifest does not hide
    (lambda n, d: d.replace(b'"x": 1.5', b'"x": 2.5') if n.endswith(".results.json") else d,
     "glued x = 1.5, its results file says 2.5"),
    (lambda n, d: d.replace(b'"x": 1.5', b'"x": NaN') if n.endswith(".results.json") else d,
     "numbers.x is not a finite number"),
    (lambda n, d: d.replace(b'"commit": "', b'"commit": "0000000') if n.endswith(".results.json") else d,
     "not in this checkout's history"),
    (lambda n, d: d.replace(b'"stitch_epochs": 4', b'"stitch_epochs": 1') if n.endswith(".results.json") else d,
     "parameters are not the 'gpu' preset's .differ in stitch_epochs"),
    (lambda n, d: d.replace(b'"device": "a GPU"', b'"device": "cpu (2 cores)"') if n.endswith(".results.json") else d,
     "a 'gpu' page run on cpu"),
])
def test_a_bad_archive_is_refused_before_anything_is_written(archive, tmp_path, edit, message):
    _rewrite(archive, edit)
    book = _book(tmp_path)
    before = sorted(p.name for p in (book / "hernandez").iterdir())
    with pytest.raises(transfer.ArchiveError, match=message):
        transfer.import_pages(archive, book)
    assert sorted(p.name for p in (book / "hernandez").iterdir()) == before


def test_a_member_edited_after_packing_or_given_twice_is_refused(archive, tmp_path):
    _rewrite(archive, lambda n, d: d.replace(b'"ours": "o"', b'"ours": "O"') if n.endswith(".results.json") else d,
             rebind=False)
    with pytest.raises(transfer.ArchiveError, match="hernandez/H-F2.results.json' does not match the SHA-256"):
        transfer.import_pages(archive, _book(tmp_path))
    with tarfile.open(archive, "r:gz") as tar:
        members = [(m.name, tar.extractfile(m).read()) for m in tar.getmembers()]
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, data in [*members, members[-1]]:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    archive.write_bytes(buf.getvalue())
    with pytest.raises(transfer.ArchiveError, match="appears twice"):
        transfer.import_pages(archive, _book(tmp_path / "again"))


def test_pack_refuses_a_destination_it_cannot_write_before_any_page_runs(tmp_path, monkeypatch):
    ran = []
    monkeypatch.setattr(execution, "execute", lambda *a, **k: ran.append(a))
    with pytest.raises(ValueError, match="is a folder"):
        transfer.pack_pages(["H-F2"], "gpu", tmp_path, progress=False)
    (tmp_path / "file").write_text("")
    with pytest.raises(ValueError, match="cannot write there"):
        transfer.pack_pages(["H-F2"], "gpu", tmp_path / "file" / "p.tar.gz", progress=False)
    assert not ran


def test_a_stray_member_or_an_unreadable_file_is_refused(archive, tmp_path):
    with tarfile.open(archive, "r:gz") as tar:
        members = {m.name: tar.extractfile(m).read() for m in tar.getmembers()}
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, data in {**members, "../evil.txt": b"x"}.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    archive.write_bytes(buf.getvalue())
    with pytest.raises(transfer.ArchiveError, match="not the manifest's pages"):
        transfer.import_pages(archive, _book(tmp_path))
    archive.write_bytes(b"not a tarball")
    with pytest.raises(transfer.ArchiveError, match="not a readable .tar.gz"):
        transfer.import_pages(archive, _book(tmp_path / "again"))


def test_pages_refuses_a_figure_without_the_scale_before_any_run(tmp_path, monkeypatch, capsys):
    from stitchkit.registry import figures

    monkeypatch.setitem(figures.OPTIONAL, "gpu", tuple(i for i in figures.OPTIONAL["gpu"] if i != "B-F9"))
    ran = []
    monkeypatch.setattr(execution, "execute", lambda *a, **k: ran.append(a))
    code = cli.main(["pages", "H-F2", "B-F9", "--scale", "gpu", "--pack", str(tmp_path / "p.tar.gz")])
    assert code == 2 and not ran
    assert "B-F9 has no 'gpu' preset yet; its scales: smoke, demo, paper" in capsys.readouterr().err
    assert cli.main(["import-pages", str(tmp_path / "missing.tar.gz")]) == 2
    assert "no archive at" in capsys.readouterr().err


def _fake_execute_with_figure(info, out, scale, params=None, *, progress=True):
    """:func:`_fake_execute` for a page that draws one figure: its files beside the page."""
    results = _fake_execute(info, out, scale, params, progress=progress)
    results["figures"] = {"grid": ["grid.svg", "grid.csv"]}
    Path(out).with_suffix(".results.json").write_text(json.dumps(results))
    folder = Path(out).with_name(f"{info.id}.figures")
    folder.mkdir()
    (folder / "grid.svg").write_text("<svg/>")
    (folder / "grid.csv").write_text("panel,value\n1,0.5\n")
    return results


def test_figure_files_travel_with_their_page_and_replace_the_old_ones(tmp_path, monkeypatch):
    monkeypatch.setattr(execution, "execute", _fake_execute_with_figure)
    path = tmp_path / "out" / "pages.tar.gz"
    manifest = transfer.pack_pages(["H-F2"], "gpu", path, progress=False)
    assert manifest["pages"][0]["figures"] == ["grid.csv", "grid.svg"]
    assert "hernandez/H-F2.figures/grid.svg" in manifest["members"]
    book = _book(tmp_path, "demo")
    old = book / "hernandez" / "H-F2.figures"
    old.mkdir()
    (old / "stale.svg").write_text("<svg/>")  # a figure the new page no longer draws
    transfer.import_pages(path, book)
    assert sorted(p.name for p in old.iterdir()) == ["grid.csv", "grid.svg"]
    assert (old / "grid.csv").read_text() == "panel,value\n1,0.5\n"
    # a name that would leave the page's folder is refused before anything is written
    _rewrite(path, lambda n, d: d.replace(b'"grid.csv"', b'"../grid.csv"') if n == "manifest.json" else d)
    with pytest.raises(transfer.ArchiveError, match="'../grid.csv' is not a plain file name"):
        transfer.import_pages(path, _book(tmp_path / "again", "demo"))


def test_the_batch_log_gives_each_pages_training_rate_and_its_share_of_the_measured_peak():
    nets = [{"images_per_second": 1000.0, "train_seconds": 10.0, "train_flops_per_image": 3e9},
            {"images_per_second": 3000.0, "train_seconds": 30.0, "train_flops_per_image": 1e9},
            {"images_per_second": 500.0, "train_seconds": 2.0},  # trained before flops were counted: rate only
            {"images_per_second": None, "train_seconds": None}]  # read from the cache, never timed
    speed = transfer.training_speed(nets, peak=1e13)
    assert speed["networks_timed"] == 3 and speed["train_images_per_second"] == round(101_000 / 42, 1)
    rate = (1000 * 10 * 3e9 + 3000 * 30 * 1e9) / 40  # FLOPs over the seconds of the counted networks
    assert speed["train_tflops_per_second"] == round(rate / 1e12, 2) and speed["share_of_peak"] == round(rate / 1e13, 4)
    assert transfer.training_speed(nets)["share_of_peak"] is None  # no GPU measured: no share
    assert transfer.training_speed([])["train_tflops_per_second"] is None
