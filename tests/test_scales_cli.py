import dataclasses

import pytest

from stitchkit import cli, execution
from stitchkit.experiments import bansal
from stitchkit.results import Run
from stitchkit.scales import SCALES, UnknownParameterError, UnknownScaleError, preset


def test_presets_exist_for_every_scale_and_override_by_name():
    for scale in SCALES:
        assert isinstance(preset(bansal.PRESETS, scale), bansal.ConnectivityConfig)
    cfg = preset(bansal.PRESETS, "demo", width=32, stitch_epochs=None)
    assert cfg.width == 32 and cfg.stitch_epochs == bansal.PRESETS["demo"].stitch_epochs
    assert preset(bansal.PRESETS, "demo", seeds=[3, 4]).seeds == (3, 4)  # lists from papermill become tuples
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.width = 1


def test_paper_preset_is_the_papers_recipe():
    cfg = bansal.PRESETS["paper"]
    spec = cfg.model_spec(0)
    assert (cfg.width, spec.train.steps, spec.train.lr, spec.train.weight_decay) == (64, 64_000, 0.05, 1e-4)
    assert spec.train.milestones == (0.5, 0.75) and spec.train.gamma == 0.2 and spec.normalisation == "cifar"
    st = cfg.stitch_train()
    assert (st.optimizer, st.lr, st.schedule) == ("adam", 1e-3, "cosine")


def test_unknown_scale_and_field_list_valid_choices():
    with pytest.raises(UnknownScaleError, match="valid: smoke, demo, paper"):
        preset(bansal.PRESETS, "huge")
    with pytest.raises(UnknownParameterError, match="valid: model, width"):
        preset(bansal.PRESETS, "demo", widht=3)


def test_notebook_parameters_are_discovered():
    info = execution.get_notebook("B-F2A")
    names = info.parameter_names()
    assert names[0] == "scale" and "width" in names
    fields = {f.name for f in dataclasses.fields(bansal.ConnectivityConfig)}
    assert set(names[1:]) <= fields  # every notebook parameter is a preset field
    with pytest.raises(KeyError, match="valid: B-F2A"):
        execution.get_notebook("B-F99")


@pytest.mark.parametrize("argv, message", [
    (["run", "B-F2A", "--scale", "huge"], "unknown scale 'huge'; valid: smoke, demo, paper"),
    (["run", "B-F2A", "-p", "widht", "8"], "unknown parameter(s) widht for B-F2A; valid: scale, width"),
    (["run", "B-F99"], "unknown notebook 'B-F99'"),
    (["sweep", "B-F2A", "-p", "nope", "1", "2"], "unknown parameter(s) nope"),
    (["book", "--scale", "big"], "unknown scale 'big'"),
])
def test_cli_errors_exit_nonzero_before_compute(argv, message, capsys, monkeypatch):
    monkeypatch.setattr(execution, "execute", lambda *a, **k: pytest.fail("must not execute"))
    assert cli.main(argv) == 2
    assert message in capsys.readouterr().err


def test_cli_list(capsys):
    assert cli.main(["list"]) == 0
    out = capsys.readouterr().out
    assert "B-F2A" in out and "scale = 'smoke'" in out


def test_parse_values_and_grid():
    assert cli.parse_value("3") == 3 and cli.parse_value("0.5") == 0.5 and cli.parse_value("eval") == "eval"
    assert cli.parse_value("None") is None and cli.parse_value("[1, 2]") == [1, 2]
    assert execution.grid({"a": [1, 2], "b": ["x"]}) == [{"a": 1, "b": "x"}, {"a": 2, "b": "x"}]


def test_run_records_numbers_claims_and_provenance(tmp_path):
    run = Run("B-F2A", "demo", {"width": 16}, seed=0)
    run.number("acc", 0.5)
    run.claim("c", "a claim", criterion="acc > 0.4", paper="0.9", ours="0.5", holds=0.5 > 0.4)
    out = run.save(tmp_path / "r.json")
    import json

    saved = json.loads(out.read_text())
    assert saved["numbers"] == {"acc": 0.5} and saved["claims"][0]["verdict"] == "reproduced"
    assert {"commit", "dirty", "device", "packages", "compute_seconds"} <= set(saved["provenance"])
    smoke = Run("B-F2A", "smoke", {})
    assert smoke.claim("c", "t", criterion="", paper="", ours="", holds=True).verdict.startswith("not assessed")
    with pytest.raises(UnknownScaleError):
        Run("B-F2A", "tiny", {})


def test_missing_data_root_fails_with_a_clear_message(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("STITCHKIT_DATA_ROOT", str(tmp_path / "nowhere"))
    code = cli.main(["run", "B-F2A", "--scale", "smoke", "--out", str(tmp_path / "out")])
    assert code == 1
    err = capsys.readouterr().err
    assert "DataNotFoundError" in err and "not found under" in err


def test_claims_table_escapes_html_and_keeps_full_text():
    run = Run("B-F2A", "demo", {})
    long_text = "a claim whose text is much longer than the default column width of fifty characters"
    run.claim("c", long_text, criterion="x <= 3 & y", paper="p", ours="o", holds=True)
    html = run.claims_table().to_html()
    assert long_text in html
    assert "x &lt;= 3 &amp; y" in html
