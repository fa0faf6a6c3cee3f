"""The committed GPU spot checks of H-T1 load and are judged with the page's criteria."""

import pandas as pd

from stitchkit.experiments.hernandez.spot import load_t1_spot, t1_spot_claims


def _tables():
    rows = []
    for s, r in (("A", "A"), ("A", "B"), ("B", "A"), ("B", "B")):
        for i in range(2):
            own = s == r
            rows.append({"sender": s, "receiver": r, "i": i, "j": i, "kind": "trained", "accuracy": 0.9 if own else 0.8,
                         "receiver_accuracy": 0.9, "penalty": 0.0 if own else 0.1, "train_loss": 0.3})
    table = pd.DataFrame(rows)
    per = table[["sender", "receiver", "i", "j"]].assign(EV=2.0, ES=1.0, SV=1.5)
    stats = pd.DataFrame({k: {"minimum": 0.0, "mean": 1.0, "maximum": 2.0, "standard deviation": 0.5}
                          for k in ("EV", "ES", "SV")})
    return table, per, {"stats": stats.to_dict()}


def test_t1_spot_claims_follow_the_page_criteria(tmp_path):
    table, per, meta = _tables()
    judged = t1_spot_claims(table, per, meta)
    assert list(judged.verdict) == ["reproduced", "reproduced"]  # ES below EV and SV everywhere, ratio 2
    failing = table.assign(accuracy=lambda d: d.accuracy.where(d.sender != d.receiver, 0.7))  # 20 points below
    assert set(t1_spot_claims(failing, per, meta).verdict) == {"inconclusive at this scale"}


def test_load_t1_spot_reads_what_paper_spot_writes(tmp_path):
    import json

    table, per, meta = _tables()
    assert load_t1_spot("x", tmp_path) is None
    table.to_csv(tmp_path / "x.csv", index=False)
    per.to_csv(tmp_path / "x-per.csv", index=False)
    (tmp_path / "x.json").write_text(json.dumps(meta))
    t, p, m = load_t1_spot("x", tmp_path)
    assert len(t) == len(table) and list(p.columns) == list(per.columns) and m["stats"] == meta["stats"]
