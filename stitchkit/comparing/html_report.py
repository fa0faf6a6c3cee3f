"""``stitchkit compare``: two of a user's networks compared from the command line, written as one
HTML report and one JSON of every number.

What it compares, the models and the images, is read by :mod:`stitchkit.comparing.inputs`. The
report (:func:`write_report`) opens with what was compared and the controls' outcome, then a heat
map per measure (layer of A by layer of B) and the table of every row with its interval;
``results.json`` holds the same rows and the settings. :func:`compare_files` is the Python entry the
command calls and returns the table it wrote.
"""

from __future__ import annotations

import base64
import datetime as dt
import html
import io
import json
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from ..base.fileio import atomic_write_files, claimed, output_folder
from .inputs import (check_images, check_size, data_kind, load_model, normalisations, normalise_images,
                     normalise_inputs, sample_images)


def _digest(tensors) -> str:
    import hashlib

    h = hashlib.sha256()
    for t in tensors:
        h.update(str(tuple(t.shape)).encode() + str(t.dtype).encode())
        h.update(t.detach().cpu().contiguous().numpy().tobytes())
    return h.hexdigest()


def provenance(a, b, x, fit_x) -> dict[str, Any]:
    """What the JSON records so that a report can be traced and reproduced: the versions, the
    device, the sampling and resampling seeds, the resample count, a SHA-256 of each model's
    weights (state dict, in order) and of the images measured and fitted on."""
    import platform

    import torch

    from .. import __version__
    from ..base.hardware import device_name
    from ..verdicts import noise

    return {"versions": {"stitchkit": __version__, "torch": torch.__version__, "numpy": np.__version__,
                         "python": platform.python_version()},
            "device": device_name(next(a.parameters()).device), "sample_seed": 0,
            "resampling": "paired bootstrap over the measured images, seeded by the test set's name and size "
                          "('compare images'), the same draws for every row", "resamples": noise.RESAMPLES,
            "weights_sha256": {"A": _digest(a.state_dict().values()), "B": _digest(b.state_dict().values())},
            "images_sha256": {"measured": _digest([x]), "fit": _digest([fit_x])}}


def compare_files(model_a: str, model_b: str, layers_a: Sequence[str], layers_b: Sequence[str], data: str, *,
                  out: Path, weights_a: str | None = None, weights_b: str | None = None,
                  normalisation: str | None = None, normalisation_a: str | None = None,
                  normalisation_b: str | None = None, size: Sequence[int] | None = None,
                  images: int | None = 2000, fit_images: int | None = 2000,
                  measures: Sequence[str] | None = None, batch_size: int = 250, trust_pickle: bool = False,
                  kwargs_a: dict[str, Any] | None = None, kwargs_b: dict[str, Any] | None = None,
                  device: str | None = None, seed: int = 0, resamples: int | None = None, verbose: bool = False):
    """Load, compare (:func:`stitchkit.comparing.compare.compare`) and write ``out/report.html`` and
    ``out/results.json``; returns the table. ``normalisation_a`` and ``normalisation_b`` default
    to ``normalisation`` (:func:`normalisations`); ``size`` (H, W) resizes every image;
    ``verbose`` shows each task-loss stitch's own training bar."""
    from .compare import DEFAULT_MEASURES, MEASURES

    measures = tuple(measures or DEFAULT_MEASURES)
    unknown = [m for m in measures if m not in MEASURES]
    if unknown:
        raise ValueError(f"unknown measure(s) {', '.join(map(repr, unknown))}; valid: {', '.join(MEASURES)}")
    data_kind(data)  # an unknown --data refused before any model is loaded
    norms = dict(zip("AB", normalisations(data, normalisation, normalisation_a, normalisation_b)))
    check_size(size)
    created = not Path(out).exists()
    out = output_folder(out)  # writable, before any compute (a file in its place, /proc, a read-only disk)
    from ..verdicts import noise

    before = noise.RESAMPLES
    if resamples is not None:
        noise.use_resamples(resamples)  # for this comparison only: restored below
    try:
        with claimed(out):  # and this run's alone while it computes and writes
            return _compare_into(out, model_a, model_b, layers_a, layers_b, data, weights_a=weights_a,
                                 weights_b=weights_b, norms=norms, size=size, images=images,
                                 fit_images=fit_images, measures=measures, batch_size=batch_size,
                                 trust_pickle=trust_pickle, kwargs_a=kwargs_a, kwargs_b=kwargs_b, device=device,
                                 seed=seed, verbose=verbose)
    except BaseException:
        if created and out.is_dir() and not any(out.iterdir()):
            out.rmdir()  # a comparison that failed leaves no empty folder of its own making
        raise
    finally:
        noise.RESAMPLES = before



def _compare_into(out: Path, model_a: str, model_b: str, layers_a: Sequence[str], layers_b: Sequence[str], data: str,
                  *, weights_a, weights_b, norms: dict[str, str], size, images, fit_images, measures, batch_size,
                  trust_pickle, kwargs_a=None, kwargs_b=None, device=None, seed: int = 0, verbose: bool = False):
    import copy

    from ..base.progress import say
    from .compare import compare

    a = load_model(model_a, weights_a, trust_pickle=trust_pickle, kwargs=kwargs_a)
    b = load_model(model_b, weights_b, trust_pickle=trust_pickle, kwargs=kwargs_b)
    if device is not None:
        a, b = a.to(device), b.to(device)
    x, y = sample_images(data, "test", images, seed=seed, size=size)
    fit_x, fit_y = sample_images(data, "train", fit_images, seed=seed, size=size)
    check_images(x, fit_x, data, norms)
    same = norms["A"] == norms["B"]
    if same:  # as before: the images normalised once, for both
        x, fit_x = normalise_images(x, norms["A"]), normalise_images(fit_x, norms["A"])
    elif a is b:  # a factory that gave one object twice: each model needs a root of its own for its hook
        b = copy.deepcopy(a)
    hooks = [] if same else [normalise_inputs(a, norms["A"]), normalise_inputs(b, norms["B"])]
    say(f"[stitchkit] comparing {len(layers_a)} x {len(layers_b)} layer pairs by {', '.join(measures)} on "
        f"{len(y)} images (fit on {len(fit_y)}), on {device or next(a.parameters()).device}")
    try:
        table = compare(a, b, list(layers_a), list(layers_b), x, y, measures=measures, fit_images=fit_x,
                        fit_labels=fit_y, batch_size=batch_size, device=device, verbose=verbose)
    finally:
        for hook in hooks:
            if hook is not None:
                hook.remove()
    settings = {"model_a": model_a, "weights_a": weights_a, "model_b": model_b, "weights_b": weights_b,
                "layers_a": list(layers_a), "layers_b": list(layers_b), "data": data,
                "normalisation": norms["A"] if same else "per model", "normalisation_a": norms["A"],
                "normalisation_b": norms["B"], "normalised": "the images, once" if same else
                "by each model, in a forward pre-hook on its root module (the images kept on the [0, 1] scale)",
                "resize": list(size) if size is not None else None, "image_shape": list(x.shape[1:]),
                "images": len(y), "fit_images": len(fit_y), "measures": list(measures), "batch_size": batch_size,
                "date": dt.datetime.now().isoformat(timespec="seconds"), "kwargs_a": kwargs_a or {},
                "kwargs_b": kwargs_b or {}, **provenance(a, b, x, fit_x), "sample_seed": seed}
    write_report(table, settings, Path(out))
    return table


# Each measure's direction and range, as the report states them (a similarity and a distance never share
# a reading: the colour map runs so that "more alike" is always the bright end).
MEASURE_SCALES = {
    "cka": (True, "similarity, 0 to 1: higher is more alike"),
    "pwcca": (False, "distance, 0 to 1: lower is more alike"),
    "procrustes": (False, "distance, 0 to 2 (normalised orthogonal Procrustes): lower is more alike"),
    "dm": (False, "distance, the relative residual of the least-squares map: 0 is an exact map, lower is more alike"),
    "dm_accuracy": (True, "B's accuracy with the direct-matching stitch relative to its own: 1 is as good as B, "
                          "higher is more alike"),
    "tlm_accuracy": (True, "B's accuracy with the task-loss stitch relative to its own: 1 is as good as B, "
                           "higher is more alike"),
}


def _heatmap(table, measure: str) -> str:
    """A measure's values, layer of A by layer of B in the order the user gave them, each cell
    labelled with its value, the colour bar saying its direction and range; as an inline PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = table[table.measure == measure]
    grid = rows.pivot(index="layer_a", columns="layer_b", values="value").reindex(
        index=list(dict.fromkeys(rows.layer_a)), columns=list(dict.fromkeys(rows.layer_b)))
    higher, reading = MEASURE_SCALES.get(measure, (True, measure))
    fig, ax = plt.subplots(figsize=(3.2 + 0.7 * grid.shape[1], 1.8 + 0.5 * grid.shape[0]), layout="constrained")
    values = grid.to_numpy(dtype=float)
    im = ax.imshow(values, cmap="viridis" if higher else "viridis_r", aspect="auto")
    if values.size <= 144:  # up to 12 x 12: every cell's value written on it
        finite = values[np.isfinite(values)]
        lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
        for i in range(values.shape[0]):
            for j in range(values.shape[1]):
                v = values[i, j]
                t = 0.5 if v != v or hi == lo else (v - lo) / (hi - lo)
                dark = t < 0.5 if higher else t >= 0.5  # viridis is dark at its low end
                ax.text(j, i, "n/a" if v != v else f"{v:.2f}", ha="center", va="center", fontsize=9,
                        color="white" if dark else "black")
    ax.set_xticks(range(grid.shape[1]), grid.columns, rotation=45, ha="right", fontsize=9)
    ax.set_yticks(range(grid.shape[0]), grid.index, fontsize=9)
    ax.set_xlabel("layer of B")
    ax.set_ylabel("layer of A")
    ax.set_title(f"{measure} ({'higher' if higher else 'lower'} = more alike)", fontsize=10)
    fig.colorbar(im, ax=ax, label=measure)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110)
    plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode()


def controls_summary(table, h=lambda v: html.escape(str(v), quote=True)) -> tuple[str, str, dict[str, Any]]:
    """The controls' outcome for the report's summary box: (HTML, its state: ok | warn | bad, the
    counts for the JSON). The book's gating rule in words: a failed positive control (B into itself
    loses more than a point) makes a *low* stitched accuracy into that layer of B uninterpretable (the
    recipe may be too weak); a failed negative control (the untrained A stitches as well) makes a
    *high* one uninterpretable at that pair (the stitch does the task alone). Underpowered controls
    (right side on their point estimate, the interval across the bound) decide neither way."""
    controls = table[table.measure.isin(["tlm_self_penalty", "tlm_untrained_sender"])]
    if not len(controls):
        return "<p>No trained stitch asked for (tlm_accuracy): no controls.</p>", "ok", {}
    counts = {k: int((controls.control == k).sum()) for k in ("passed", "failed", "underpowered", "not informative")}
    lines = []
    for r in controls[controls.control != "passed"].itertuples():
        where = f"B's {h(r.layer_b)}" if r.measure == "tlm_self_penalty" else f"{h(r.layer_a)} → {h(r.layer_b)}"
        if r.control == "failed":
            what = ("a low tlm_accuracy into this layer may be the stitch recipe's fault, not a difference of the "
                    "networks" if r.measure == "tlm_self_penalty" else
                    "a high tlm_accuracy at this pair may be the stitch's own power, not A's representation")
        elif r.control == "underpowered":
            what = "too few images to tell either way: give more (--images, --fit-images)"
        else:
            what = "B is at chance: no accuracy row means anything"
        lines.append(f"<li><b>{h(r.control)}</b> · {h(r.measure)} at {where}: {what}</li>")
    state = "bad" if counts["failed"] or counts["not informative"] else "warn" if counts["underpowered"] else "ok"
    head = (f"<p><b>Controls:</b> {counts['passed']} passed, {counts['failed']} failed, {counts['underpowered']} "
            f"underpowered" + (f", {counts['not informative']} not informative" if counts["not informative"] else "")
            + f" of {len(controls)}.</p>")
    return head + (f"<ul>{''.join(lines)}</ul>" if lines else ""), state, counts


def write_report(table, settings: dict[str, Any], out: Path) -> tuple[Path, Path]:
    """``out/report.html`` (what was compared, the controls' outcome, a heat map per measure, every
    row with its interval) and ``out/results.json`` (the settings and every row)."""
    rows = json.loads(table.to_json(orient="records"))
    json_path, html_path = out / "results.json", out / "report.html"
    results_text = json.dumps({"settings": settings, "accuracy": table.attrs.get("accuracy") or {},
                               "controls": controls_summary(table)[2], "rows": rows}, indent=1) + "\n"
    h = lambda v: html.escape(str(v), quote=True)  # noqa: E731
    accuracy = table.attrs.get("accuracy") or {}
    acc_text = "; ".join(f"{h(k)} {100 * v:.1f}%" for k, v in accuracy.items() if v is not None)
    acc_line = (f"<p class=\"acc\"><b>Each model's own accuracy on these images:</b> {acc_text}. Every accuracy row "
                "below is relative to B's own.</p>") if acc_text else "<p>No labels: no accuracies.</p>"
    glance, state, _ = controls_summary(table, h)
    figures = "".join(
        f'<figure><img alt="{h(m)} for every layer pair (layer of A by layer of B)" '
        f'src="data:image/png;base64,{_heatmap(table, m)}"><figcaption>{h(m)}: '
        f"{h(table[table.measure == m].note.iloc[0])}</figcaption></figure>"
        for m in dict.fromkeys(table.measure) if table[table.measure == m].value.notna().any()
        and m in ("cka", "pwcca", "procrustes", "dm", "dm_accuracy", "tlm_accuracy"))
    body = "".join(f"<tr><td>{h(r.layer_a)}</td><td>{h(r.layer_b)}</td><td>{h(r.measure)}</td>"
                   f"<td>{'n/a' if r.value != r.value else f'{r.value:.4g}'}</td>"
                   f"<td>{'' if r.low != r.low else f'[{r.low:.4g}, {r.high:.4g}]'}</td>"
                   f"<td>{r.n_images}</td><td>{h(r.control)}</td><td>{h(r.note)}</td></tr>" for r in table.itertuples())
    scales = "".join(f"<li><b>{h(m)}</b>: {h(MEASURE_SCALES[m][1])}</li>" for m in dict.fromkeys(table.measure)
                     if m in MEASURE_SCALES)
    setting_rows = "".join(f"<tr><th>{h(k)}</th><td>{h(v)}</td></tr>" for k, v in settings.items())
    report_text = (f"""<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><title>stitchkit compare</title>
<style>body{{font-family:system-ui,sans-serif;max-width:70rem;margin:1rem auto;padding:0 1rem}}
table{{border-collapse:collapse;font-size:.85rem}}td,th{{border:1px solid #ccc;padding:.2rem .4rem;text-align:left}}
.glance{{border-left:4px solid;padding:.5rem 1rem}}.glance.ok{{background:#eef6ee;border-color:#2a7}}
.glance.warn{{background:#fff7e6;border-color:#d90}}.glance.bad{{background:#fdecec;border-color:#c33}}
figure{{display:inline-block;margin:.5rem}}
img{{max-width:100%}}.scroll{{overflow-x:auto}}</style></head><body>
<h1>{h(settings.get('model_a'))} vs {h(settings.get('model_b'))}</h1>
<div class="glance {state}">{acc_line}<p>{len(table)} rows: {h(', '.join(dict.fromkeys(table.measure)))} on
{settings.get('images')} images of {h(settings.get('data'))}; intervals are 95% bootstrap intervals where a row has
one.</p>{glance}</div>
<h2>Settings</h2><div class="scroll"><table>{setting_rows}</table></div>
<h2>Every layer pair</h2><ul>{scales}</ul>{figures}
<h2>Every number</h2><div class="scroll"><table><tr><th>layer of A</th><th>layer of B</th><th>measure</th>
<th>value</th><th>95% interval</th><th>images</th><th>control</th><th>note</th></tr>{body}</table></div>
<p>Written by <code>stitchkit compare</code>; <code>results.json</code> beside this file holds every number.</p>
</body></html>
""")
    # one set: a stop or a full disk while writing leaves the earlier report and its numbers together
    atomic_write_files(out, {json_path.name: results_text, html_path.name: report_text})
    return html_path, json_path


__all__ = ["MEASURE_SCALES", "compare_files", "controls_summary", "provenance", "write_report"]
