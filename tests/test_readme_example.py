"""The README's worked example of adding a figure runs against the library as it is (issue 63: "a
worked example adds a figure"): its module's code, taken from the README, is loaded as a module of
the Bansal package, its presets resolve and refuse a bad value, and at smoke it computes and judges."""

import re
import sys
import types

import pytest

from stitchkit.base import paths
from stitchkit.registry import scales


def _example_module() -> types.ModuleType:
    text = (paths.REPO_ROOT / "README.md").read_text()
    block = next(b for b in re.findall(r"```python\n(.*?)```", text, re.S) if "class StitchDataConfig" in b)
    name = "stitchkit.experiments.bansal.f10_readme_example"
    module = types.ModuleType(name)
    module.__package__ = "stitchkit.experiments.bansal"
    sys.modules[name] = module  # dataclasses look their module up while the class is made
    try:
        exec(compile(block, "README.md (worked example)", "exec"), module.__dict__)
    finally:
        del sys.modules[name]
    return module


def test_the_examples_presets_resolve_and_refuse_a_bad_value():
    f10 = _example_module()
    assert set(scales.REQUIRED_SCALES) <= set(f10.PRESETS_F10)
    cfg = scales.resolve(f10.PRESETS_F10, "smoke", {"scale": "smoke"})
    assert cfg.stitch_sizes == (500, 1_000) and cfg.net is not None  # the networks' recipe came with the preset
    with pytest.raises(ValueError, match="stitch_sizes"):
        scales.resolve(f10.PRESETS_F10, "smoke", {"scale": "smoke", "stitch_sizes": (500, 10)})
    with pytest.raises(ValueError, match="block99"):
        scales.resolve(f10.PRESETS_F10, "smoke", {"scale": "smoke", "cuts": ("stem", "block99")})


@pytest.mark.slow
def test_the_example_computes_and_judges_at_smoke(tmp_path, monkeypatch):
    f10 = _example_module()
    cfg = scales.resolve(f10.PRESETS_F10, "smoke", {"scale": "smoke"})
    table = f10.stitch_data(cfg, progress=False)
    numbers, claims = f10.stitch_data_claims(table, cfg)
    assert set(table.images) == {500, 1_000} and set(table.cut_i) == {"stem", "block3"} and [c.key for c in claims] == ["few_images_connect"]
    assert numbers["largest_gap_low"] <= numbers["largest_gap"] + 1e-9
    assert claims[0].controls and claims[0].controls[0].kind == "positive"
