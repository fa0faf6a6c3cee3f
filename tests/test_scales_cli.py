import dataclasses

import pytest

from stitchkit import cli
from stitchkit.book import execution, notebooks, runs
from stitchkit.experiments.bansal import common, f7
from stitchkit.registry.figures import FIGURES, SCALES
from stitchkit.registry.scales import ParameterValueError, UnknownParameterError, UnknownScaleError, preset, resolve
from stitchkit.verdicts.claims import ClaimSpec
from stitchkit.verdicts.results import Control, Criterion, Run, at_least, at_most, within


def test_presets_exist_for_every_scale_and_override_by_name():
    from stitchkit.registry.figures import REQUIRED_SCALES
    from stitchkit.registry.scales import UnknownScaleError

    for scale in REQUIRED_SCALES:
        assert isinstance(preset(common.PRESETS, scale), common.ConnectivityConfig)
    assert isinstance(preset(common.PRESETS, "gpu"), common.ConnectivityConfig)  # since issue 47
    # gpu comes figure by figure: presets without it say which scales they have
    no_gpu = {s: c for s, c in common.PRESETS.items() if s in REQUIRED_SCALES}
    with pytest.raises(UnknownScaleError, match="no 'gpu' preset for ConnectivityConfig yet; its scales: smoke, "
                                                "demo, paper"):
        preset(no_gpu, "gpu")
    assert SCALES == ("smoke", "demo", "gpu", "paper")
    cfg = preset(common.PRESETS, "demo", width=32, stitch_epochs=None)
    assert cfg.width == 32 and cfg.stitch_epochs == common.PRESETS["demo"].stitch_epochs
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.width = 1


def test_resolve_reads_overrides_by_field_name_from_a_namespace():
    namespace = {"scale": "demo", "width": 24, "stitch_lr": None, "unrelated": 1}
    cfg = resolve(common.PRESETS, "demo", namespace)
    assert cfg.width == 24 and cfg.stitch_lr == common.PRESETS["demo"].stitch_lr


@pytest.mark.parametrize("name, value, message", [
    ("width", 0, "expected an integer ≥ 1"), ("width", "abc", "expected an integer"), ("width", 1.5, "integer"),
    ("stitch_lr", float("nan"), "finite"), ("stitch_lr", 0.0, "> 0"), ("stitch_batch", 0, "≥ 1"),
    ("frozen_bn", "banana", "one of 'eval', 'train'"), ("stitch_augment", "maybe", "true or false"),
    ("test_size", 0, "≥ 1"),
])
def test_invalid_values_are_refused_naming_the_parameter(name, value, message):
    with pytest.raises(ParameterValueError, match=f"parameter '{name}'") as err:
        preset(common.PRESETS, "demo", **{name: value})
    assert message in str(err.value)


def test_boolean_words_are_read_as_booleans():
    assert preset(common.PRESETS, "demo", stitch_augment="no").stitch_augment is False
    assert preset(common.PRESETS, "demo", stitch_augment="yes").stitch_augment is True


def test_unknown_scale_and_field_list_valid_choices():
    with pytest.raises(UnknownScaleError, match="valid: smoke, demo, gpu, paper"):
        preset(common.PRESETS, "huge")
    with pytest.raises(UnknownParameterError, match="valid: width, model_epochs"):
        preset(common.PRESETS, "demo", widht=3)


def test_notebook_parameters_are_discovered():
    info = notebooks.get_notebook("B-F2A")
    names = info.parameter_names()
    assert names[0] == "scale" and "width" in names
    with pytest.raises(KeyError, match="valid: B-F2A"):
        notebooks.get_notebook("B-F99")


@pytest.mark.parametrize("argv, message", [
    (["run", "B-F2A", "--scale", "huge"], "unknown scale 'huge'; valid: smoke, demo, gpu, paper"),
    (["run", "B-F2A", "--scale", "gpu"], "B-F2A has no 'gpu' preset yet; its scales: smoke, demo, paper"),
    (["sweep", "B-F4", "--scale", "gpu", "-p", "width", "8"], "B-F4 has no 'gpu' preset yet; its scales: smoke, demo, paper"),
    (["run", "B-F2A", "-p", "widht", "8"], "unknown parameter(s) widht for B-F2A; valid: width"),
    (["run", "B-F99"], "unknown notebook 'B-F99'"),
    (["sweep", "B-F2A", "-p", "nope", "1", "2"], "unknown parameter(s) nope"),
    (["run", "B-F2A", "-p", "width", "0"], "parameter 'width' = 0 is invalid"),
    (["run", "B-F2A", "-p", "stitch_augment", "maybe"], "parameter 'stitch_augment'"),
    (["run", "B-F2A", "-p", "scale", "demo"], "give the scale once"),
    (["sweep", "B-F2A", "-p", "stitch_lr", "0.1", "0"], "parameter 'stitch_lr' = 0 is invalid"),
    (["book", "--scale", "big"], "unknown scale 'big'"),
])
def test_cli_errors_exit_nonzero_before_compute(argv, message, capsys, monkeypatch):
    from stitchkit.registry import figures

    # B-F2A and B-F4 as figures without a gpu preset (they have one since issue 47)
    monkeypatch.setitem(figures.OPTIONAL, "gpu", tuple(i for i in figures.OPTIONAL["gpu"] if i not in ("B-F2A", "B-F4")))
    for name in ("execute", "_execute"):  # run and sweep reach the kernel through _execute (checked once)
        monkeypatch.setattr(execution, name, lambda *a, **k: pytest.fail("must not execute"))
    assert cli.main(argv) == 2
    assert message in capsys.readouterr().err


def test_cli_list(capsys, monkeypatch):
    monkeypatch.setattr(cli, "smoke_times", lambda: {"B-F2A": {"seconds": 99.2}})
    assert cli.main(["list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == len(FIGURES) + 2  # a header, one line per figure (the registry's), a hint
    b = next(ln for ln in lines if ln.startswith("B-F2A"))
    assert "Stitching" in b or "stitching" in b
    # its measured smoke time from an empty cache; '-' for a page not timed
    assert " 1.7 min " in b and " - " in next(ln for ln in lines if ln.startswith("B-F2B"))
    assert next(ln for ln in lines if ln.startswith("X-1")).split()[1] == "Agreement"
    assert cli.main(["list", "X-1"]) == 0
    out = capsys.readouterr().out
    assert "zoo = None" in out and "measures = None" in out
    assert cli.main(["list", "B-F2A"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("B-F2A: ") and "scale = 'smoke'" in out
    assert cli.main(["list", "B-F99"]) == 2
    assert "B-F99" in capsys.readouterr().err


def test_parse_values_and_grid():
    assert cli.parse_value("3") == 3 and cli.parse_value("0.5") == 0.5 and cli.parse_value("eval") == "eval"
    assert cli.parse_value("None") is None and cli.parse_value("[1, 2]") == [1, 2]
    assert runs.grid({"a": [1, 2], "b": ["x"]}) == [{"a": 1, "b": "x"}, {"a": 2, "b": "x"}]


def E(v: float):
    """A measured value with a narrow interval (a bare number would get the zero-width control, issue 46)."""
    from stitchkit.verdicts.noise import Estimate

    return Estimate(v, v - 0.01, v + 0.01)


def test_run_records_numbers_claims_and_provenance(tmp_path):
    run = Run("B-F2A", "demo", {"width": 16}, seed=0)
    run.record({"acc": 0.5}, [ClaimSpec(key="c", text="a claim", criterion=at_least(E(0.5), 0.4, "acc"), paper="0.9",
                                        ours="0.5")])
    out = run.save(tmp_path / "r.json")
    import json

    saved = json.loads(out.read_text())
    assert saved["numbers"] == {"acc": 0.5} and saved["claims"][0]["verdict"] == "reproduced"
    assert saved["claims"][0]["criterion"] == "acc ≥ 0.40 points"
    assert {"commit", "dirty", "device", "precision", "packages", "compute_seconds"} <= set(saved["provenance"])
    smoke = Run("B-F2A", "smoke", {})
    assert smoke.claim("c", "t", criterion=at_most(1, 2, "x"), paper="", ours="").verdict.startswith("not assessed")
    with pytest.raises(UnknownScaleError):
        Run("B-F2A", "tiny", {})
    with pytest.raises(ValueError, match="twice"):
        run.claim("c", "again", criterion=at_most(1, 2, "x"), paper="", ours="")


def test_verdicts_are_three_valued_and_a_failed_control_makes_a_claim_inconclusive():
    run = Run("B-F2A", "demo", {})
    ok = Control.of("self stitch", at_most(0.1, 0.5, "max self penalty"), "0.10")
    bad = Control.of("self stitch", at_most(0.9, 0.5, "max self penalty"), "0.90")
    assert run.claim("a", "t", criterion=at_most(E(1), 3, "x"), paper="", ours="", controls=[ok]).verdict == "reproduced"
    assert run.claim("b", "t", criterion=at_most(E(4), 3, "x"), paper="", ours="",
                     controls=[ok]).verdict == "not reproduced"
    for holds_value in (1, 4):  # a failed control decides, whichever way the criterion goes
        c = run.claim(f"c{holds_value}", "t", criterion=at_most(E(holds_value), 3, "x"), paper="", ours="",
                      controls=[ok, bad])
        assert c.verdict == "inconclusive at this scale" and c.failed_controls == [bad]
    w = within(0.97, 0.99, 0.02, "accuracy", unit="")
    assert w.holds and w.text == "|accuracy − paper's 0.99| ≤ 0.02"
    assert not within(0.96, 0.99, 0.02, "accuracy").holds


def test_every_notebook_parameters_cell_matches_its_config():
    """The config dataclass is the one source of truth: same names, same order, same comments."""
    import jupytext

    from stitchkit.registry import figures
    from stitchkit.registry.scales import parameters_cell

    broken: dict[str, str] = {}
    found = notebooks.discover(broken=broken)
    assert not broken and len(found) == len(list(execution.paths.NOTEBOOKS_DIR.glob("*.py")))
    for info in found.values():
        cls = figures.config_class(info.id)
        assert cls is not None, f"{info.id} is not in the figure registry (stitchkit.registry.figures)"
        cell = [c for c in jupytext.read(info.source).cells if "parameters" in c.metadata.get("tags", [])][0]
        expected = parameters_cell(cls, figures.BY_ID[info.id].unused)  # less the shared fields it does not use
        assert cell.source.strip() == expected, f"{info.id}: parameters cell differs from {cls.__name__}"


def test_missing_data_root_fails_with_a_clear_message(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("STITCHKIT_DATA_ROOT", str(tmp_path / "nowhere"))
    code = cli.main(["run", "B-F2A", "--scale", "smoke", "--out", str(tmp_path / "out")])
    assert code == 2  # a bad input, as the command line documents (issue 50: it was 1, from inside the notebook)
    err = capsys.readouterr().err
    assert "dataset 'cifar10' not found under" in err and "STITCHKIT_DATA_ROOT" in err


def test_claims_table_escapes_html_and_keeps_full_text():
    run = Run("B-F2A", "demo", {})
    long_text = "a claim whose text is much longer than the default column width of fifty characters"
    run.claim("c", long_text, criterion=Criterion("x <= 3 & y", True), paper="p", ours="o")
    html = run.claims_table().data
    assert long_text in html
    assert "x &lt;= 3 &amp; y" in html
    assert "reproduced · demo" in html  # the verdict badge carries its scale
    failed = {"text": "receiver into itself (exact): |penalty| ≤ 0.5", "criterion": "≤ 0.5", "value": "0.9",
              "passed": False, "record": {"value": 0.9, "low": 0.7, "high": 1.1, "threshold": 0.0,
                                          "direction": "within", "tolerance": 0.5, "unit": "points"}}
    from stitchkit.verdicts.results import claims_html

    html = claims_html([{"text": "t", "criterion": "c", "verdict": "inconclusive at this scale", "scale": "demo",
                         "controls": [failed], "reason": "control failed: receiver into itself"}])
    assert "control ✗</b> receiver into itself: self-penalty 0.9 [0.7, 1.1] points" in html
    assert "why inconclusive" not in html  # the failed control says it


def test_tuple_parameters_reach_the_notebook_as_lists():
    """papermill writes a tuple as its string; the executor hands it a list (the config turns it
    back into a tuple)."""
    from papermill.translators import PythonTranslator

    from stitchkit.book.execution import _for_papermill

    code = PythonTranslator.codify(_for_papermill({"archs": ("resnet18",), "width": 8}))
    assert "archs = [\"resnet18\"]" in code or "archs = ['resnet18']" in code
    assert "width = 8" in code


def test_every_notebook_opens_with_its_own_figure():
    """Each notebook opens with one line, ``run, cfg = open_page("<its ID>", globals())``: the
    presets the CLI checks a run against are the registry's, the ones that line reads."""
    import re

    from stitchkit.registry import figures

    for info in notebooks.discover().values():
        src = info.source.read_text()
        assert re.findall(r'^run, cfg = open_page\("([^"]+)", globals\(\)', src, re.M) == [info.id], info.id
        assert "resolve(" not in src and "Run(" not in src, info.id
        assert figures.presets(info.id) is not None


@pytest.mark.parametrize("argv, message", [
    # finding 1: an item of a list parameter
    (["run", "B-F2A", "-p", "other_archs", "['foo']"],
     "parameter 'other_archs' = ['foo'] is invalid: item 1 ('foo') is not allowed; expected a list (each one of 'resnet18_x0.5'"),
    (["run", "B-F2A", "-p", "other_archs", "['vit', 'vit']"], "no repeats"),
    (["run", "B-F2A", "-p", "other_archs", "myrtle"], "expected a list (each one of"),
    # finding 2: every point of a sweep, before the first runs
    (["sweep", "B-F4", "-p", "kernel_sizes", "[1]", "[2]"], "parameter 'kernel_sizes' = [2] is invalid: item 1 (2) is not allowed; expected a "
                                                            "list (at least one, each odd and ≥ 1 and ≤ 15, no repeats)"),
    # finding 3: rules that need the scale's model
    (["run", "B-F3B", "--scale", "demo", "-p", "cuts", "['stem', 'block3']"],
     "parameter 'cuts' = ['stem', 'block3'] is invalid: 2 cut(s); needs at least 3; valid: stem, block1"),
    (["run", "B-F2C", "-p", "cuts", "['stem', 'blok3', 'pool']"], "unknown cut(s) 'blok3'; valid: stem, block1"),
    (["run", "B-F4", "-p", "cuts", "['pool']"], "unknown map cut(s) 'pool'"),
    (["run", "B-F8", "-p", "cuts", "['block99']"], "unknown cut(s) 'block99'; valid: stem, block1"),
    (["run", "H-F2", "-p", "controls", "['r2121']"], "architecture(s) 'r2121' not in archs"),
    # finding 4: plausibility bounds
    (["run", "B-F2A", "-p", "model_epochs", "1e9"], "parameter 'model_epochs' = 1000000000.0 is invalid: expected a "
                                                    "finite number ≥ 0 and ≤ 1000"),
    (["run", "B-F2A", "-p", "width", "100000"], "parameter 'width' = 100000 is invalid: expected an integer ≥ 1 and "
                                                "≤ 1024"),
    # finding 8: exit 2 with the prefix, and a point given twice
    (["sweep", "S-F1A", "-p", "per_class", "1", "1"], "-p per_class: value(s) 1 given twice"),
    (["run", "B-F2A", "-p", "width"], "-p width needs a value"),
    (["run", "B-F2A", "-p", "width", "8", "-p", "width", "4"], "parameter width given twice"),
    (["sweep", "B-F2A"], "sweep needs at least one -p"),
    (["sweep", "B-F2A", "-p", "width", "4", "--dask", "tcp://x:1", "--dask-timeout", "nan"], "--dask-timeout must"),
])
def test_bad_parameters_are_refused_before_compute_with_exit_2(argv, message, capsys, monkeypatch):
    """Issue 35, findings 1-4 and 8: every parameter and the rules between them are checked
    before any run starts, with exit code 2 and one line naming the parameter and what is allowed."""
    monkeypatch.setattr(execution, "execute", lambda *a, **k: pytest.fail("must not execute"))
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("stitchkit: error: ") and message in err, err


def test_the_configuration_table_shows_the_values_that_ran(monkeypatch):
    from stitchkit.base import ledger
    from stitchkit.registry import scales

    monkeypatch.setattr(ledger, "_NETWORKS", {})
    cfg = f7.PRESETS_F7["demo"]
    assert cfg.width is None and cfg.model_epochs is None
    for key, width, epochs, steps in (("k1", 8, 3.0, None), ("k2", 16, 0.0, 1170), ("k3", 8, 0.0, None)):
        ledger.note_network(key, {"model": "preact_resnet18", "width": width, "epochs": epochs, "steps": steps,
                                  "train_size": None, "trained": bool(epochs or steps), "accuracy": 0.6})
    table = scales.as_table(cfg).data  # a Styler: meanings are not cut at 50 characters
    assert table.loc["width", "value"] == "8, 16 (None: the recipe's)"  # the untrained network's width is left out
    assert table.loc["model_epochs", "value"] == "3, 1170 steps (None: the recipe's)"
    ledger._NETWORKS.clear()
    assert scales.as_table(cfg).data.loc["width", "value"] == "the recipe's width (None)"


def test_sync_writes_a_parameters_cell_from_its_config_and_nothing_else(tmp_path, capsys):
    """Issue 48: ``stitchkit sync`` writes each notebook's parameters cell from its config; every
    notebook here agrees (``--check``), and a cell edited by hand is put back, the rest untouched."""
    import shutil

    from stitchkit.book.sync import sync

    assert cli.main(["sync", "--check"]) == 0 and "0 parameters cell(s) differ" in capsys.readouterr().out
    shutil.copy(execution.paths.NOTEBOOKS_DIR / "B-F4.py", tmp_path / "B-F4.py")
    original = (tmp_path / "B-F4.py").read_text()
    (tmp_path / "B-F4.py").write_text(original.replace("kernel_sizes = None  #", "kernel_sizes = (1, 3)  #"))
    assert sync(["B-F4"], check=True, notebooks_dir=tmp_path) == ["B-F4"]
    assert sync(["B-F4"], notebooks_dir=tmp_path) == ["B-F4"] and (tmp_path / "B-F4.py").read_text() == original
    with pytest.raises(KeyError, match="unknown figure 'B-F99'"):
        sync(["B-F99"], check=True, notebooks_dir=tmp_path)
