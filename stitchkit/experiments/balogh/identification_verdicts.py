"""Balogh & Jelasity J-T1 (layer identification), the claims: identification percentages
bootstrapped over the images behind each measure and over the networks, the criteria fixed before
any run, the TLM criteria re-judged with longer-trained stitches, and each architecture's claims
(:func:`identification_claims`)."""

from __future__ import annotations

import zlib

import numpy as np
import pandas as pd

from ... import controls, noise
from ...claims import ClaimSpec
from ...grid import LONGER
from ...noise import Estimate
from ...results import at_least, at_most, more_than
from .common import (ARCH_NAMES, HIGHER_IS_SIMILAR, MEASURES, NAMES, accuracy_reps, n_test_images, tlm_controls,
                     with_longer)
from .identification import PAPER_T1, identification_table, identified

# Criteria, fixed before any run.
TLM_INTRA_MAX = 90.0  # "TLM fails the intra-network check": % of layers it identifies within a network
OTHERS_INTRA_MIN = 100.0  # the other measures identify every layer within its network
INTER_MARGIN = 10.0  # "performs very poorly between networks": LCKA and DM (struct.) ahead of TLM by this (points)
CCA_MARGIN = 30.0  # ResNet: LCKA ahead of both PWCCA and OPD between networks by this (points)
VIT_STRUGGLE_MAX = 50.0  # ViT: "all methods struggle": the best measure's inter-network % at most this


# --------------------------------------------------------------------------------------------
# Identification percentages on the bootstrap replicates


def _ident_reps(table: pd.DataFrame, layers: list[str], col: str) -> dict[tuple[str, str], np.ndarray]:
    """Per ordered pair (sender, receiver) of a grid table: (R+1, L) whether each target layer j
    is identified (no source layer's stitch into j more accurate than j's own; ties count), by
    the accuracies behind ``col`` ("correct": the trained stitch, TLM; "dm_correct": its DM
    start, DM func.), on the full test set and on each bootstrap resample. Within one receiver
    every stitch into j shares the receiver's accuracy, so relative and plain accuracies order
    the same."""
    acc = accuracy_reps(table, col)
    pos = {c: k for k, c in enumerate(layers)}
    n = len(layers)
    out = {}
    for pair, rows in table.groupby(["sender", "receiver"], sort=False).indices.items():
        m = np.full((acc.shape[0], n, n), -np.inf)
        i = table.cut_i.iloc[rows].map(pos).to_numpy()
        j = table.cut_j.iloc[rows].map(pos).to_numpy()
        m[:, i, j] = acc[:, rows]
        out[tuple(pair)] = m[:, np.arange(n), np.arange(n)] >= m.max(axis=1)
    return out


def _network_weights(pairs: list[tuple[str, str]], within: bool) -> tuple[np.ndarray, int]:
    """(R+1, len(pairs)): the weight of each ordered pair of networks (sender, receiver) in the
    full sample (row 0: 1 each) and in each bootstrap replicate, and the number of networks
    drawn from. In each replicate the networks of ``pairs`` are drawn with replacement, as
    :func:`stitchkit.noise.bootstrap_table` draws its ``groups``: ``within`` (pairs of a network
    with itself), a network drawn k times counts k times; between networks, they are drawn twice,
    independently, as senders and as receivers (the pigeonhole bootstrap of a crossed design), and
    pair (a, b) counts (times a is drawn as sender) x (times b is drawn as receiver). A draw that
    gives every pair of ``pairs`` weight 0 (possible between networks when not every pair was
    measured: TLM's) is redrawn, which is the same as dropping it. The draws depend only on the
    networks, the set of pairs and the number of resamples, so every percentage over the same
    pairs is resampled with the same draws (a difference of two is paired over networks too)."""
    nets = sorted({n for p in pairs for n in p})
    k, r = len(nets), noise.RESAMPLES
    key = "|".join(nets) + ":" + "|".join(f"{a}>{b}" for a, b in sorted(pairs))
    rng = np.random.default_rng(zlib.crc32(f"networks:{key}:{r}".encode()))
    pos = {n: i for i, n in enumerate(nets)}
    a = np.array([pos[p[0]] for p in pairs], dtype=int)
    b = np.array([pos[p[1]] for p in pairs], dtype=int)
    parts, have = [], 0
    while have < r:
        senders = rng.multinomial(k, [1 / k] * k, size=r)
        receivers = rng.multinomial(k, [1 / k] * k, size=r)
        w = senders[:, a] if within else senders[:, a] * receivers[:, b]
        w = w[w.sum(1) > 0][:r - have]
        parts.append(w)
        have += len(w)
    return np.concatenate([np.ones((1, len(pairs))), *parts]).astype(np.float64), k


def _pct(ident: dict[tuple[str, str], np.ndarray], within: bool) -> np.ndarray | None:
    """(R+1,) % of the (pair, layer) cases identified, within networks or between them, on the
    full sample (element 0) and on each bootstrap replicate: ``ident`` (pair -> (R+1, L), each
    replicate's identification on its resample of the images) weighted by the replicate's draw
    of the networks (:func:`_network_weights`). None when no pair is of the kind asked for."""
    parts = {p: np.asarray(v) for p, v in ident.items() if (p[0] == p[1]) == within}
    if not parts:
        return None
    w, _ = _network_weights(list(parts), within)
    hits = np.stack([v.sum(1) for v in parts.values()], axis=1).astype(np.float64)  # (R+1, pairs)
    if hits.shape[0] != w.shape[0]:
        raise ValueError(f"identification on {hits.shape[0] - 1} resamples, this run uses {noise.RESAMPLES}")
    size = np.array([v.shape[1] for v in parts.values()], dtype=np.float64)
    return 100 * (w * hits).sum(1) / (w @ size)


def _networks(ident: dict[tuple[str, str], np.ndarray], within: bool) -> int:
    """The number of networks :func:`_pct` resamples for ``ident``'s pairs of that kind."""
    return len({n for p in ident if (p[0] == p[1]) == within for n in p})


FIXED_IMAGES = {
    "pwcca": "PWCCA on the fixed measure images (their image noise not included)",
    "opd": "OPD on the fixed measure images (their image noise not included)",
    "dm_struct": "DM (struct.) from the fit on its fixed K training images (not resampled)",
}


def _measure_ident(result: dict, measure: str, pairs=None) -> dict[tuple[str, str], np.ndarray]:
    """Per ordered pair of networks (those in ``pairs``, default all): (R+1, L) whether each
    target layer is identified by ``measure``, on the full sample and each bootstrap resample of
    the images behind it: the stitched accuracies' test images (TLM, DM func.: :func:`_ident_reps`),
    the measure images (linear CKA, from ``result["lcka_reps"]``, when the result has them); PWCCA,
    OPD and DM (struct.) (and CKA without replicates) repeat the full sample's identification in
    every replicate (:data:`FIXED_IMAGES`)."""
    layers = result["layers"]
    keep = (lambda p: True) if pairs is None else (lambda p: p in pairs)
    if measure in ("tlm", "dm_func"):
        t = result["tlm"] if measure == "tlm" else result["dm"]
        rows = t[[keep((a, b)) for a, b in zip(t.sender, t.receiver)]]
        return _ident_reps(rows, layers, "correct" if measure == "tlm" else "dm_correct")
    r1 = noise.RESAMPLES + 1
    if measure == "lcka" and result.get("lcka_reps"):
        out = {}
        for p, reps in result["lcka_reps"].items():
            if keep(p):
                if len(reps) != r1:
                    raise ValueError(f"CKA replicates of {len(reps) - 1} resamples, this run uses {noise.RESAMPLES}")
                n = reps.shape[1]
                out[p] = reps[:, np.arange(n), np.arange(n)] >= reps.max(axis=1)
        return out
    return {p: np.broadcast_to(identified(m[measure], HIGHER_IS_SIMILAR[measure]), (r1, len(layers)))
            for p, m in result["matrices"].items() if measure in m and keep(p)}


def _pct_method(result: dict, measures, networks: int, between: bool = True) -> str:
    """The method text of a % (or a statistic of several) over ``measures``: what is resampled,
    and what is not."""
    resampled, fixed = [], []
    if {"tlm", "dm_func"} & set(measures):
        resampled.append("the stitched accuracies' test images")
    if "lcka" in measures:
        if result.get("lcka_reps"):
            resampled.append("linear CKA's measure images (independently)")
        else:
            fixed.append("linear CKA on the fixed measure images (their image noise not included)")
    if networks > 1:
        resampled.append(f"the {networks} networks (drawn with replacement" + ("; between networks as senders and "
                         "as receivers independently, a draw with no measured pair redrawn)" if between else ")"))
    fixed += [FIXED_IMAGES[m] for m in measures if m in FIXED_IMAGES]
    text = ("bootstrap over " + ", ".join(resampled)) if resampled else "not resampled"
    return text + ("; " + "; ".join(fixed) if fixed else "")


def _pct_estimate(reps: np.ndarray, result: dict, measures, networks: int, n_test: int | None,
                  between: bool = True) -> Estimate:
    """An Estimate (percentile interval) of a % statistic from :func:`_pct` replicates (``between``:
    over pairs of different networks, else of a network with itself)."""
    return noise.from_replicates(reps, n_test=n_test, n_seeds=networks,
                                 method=_pct_method(result, measures, networks, between))


# --------------------------------------------------------------------------------------------
# The claims


def _tlm_criteria(result: dict, tlm: pd.DataFrame) -> dict:
    """The criteria of J-T1's TLM claims computed from the TLM grid ``tlm`` (the grid's, or with
    cells retrained longer): TLM's identification percentages and the inter-network leads over
    it on TLM's pairs, each a percentile interval from one bootstrap (:func:`_pct`) that resamples
    the test images behind every accuracy (TLM's stitches and DM's starts on the same images, one
    resample for both), linear CKA's measure images (independently), and the networks (a lead's
    two percentages on the same draws). DM (struct.) enters with each pair's identification fixed:
    its fit on K training images is not resampled (:data:`FIXED_IMAGES`)."""
    layers = result["layers"]
    t = _ident_reps(tlm, layers, "correct")
    intra, inter = _pct(t, True), _pct(t, False)
    if intra is None or inter is None:
        raise ValueError("J-T1's TLM claims need TLM within a network and between two (tlm_inter_pairs >= 1)")
    between = {p for p in t if p[0] != p[1]}
    dm_inter = _pct(_measure_ident(result, "dm_func", between), False)
    lead = np.minimum(_pct(_measure_ident(result, "lcka", between), False),
                      _pct(_measure_ident(result, "dm_struct", between), False)) - inter
    n, k_in, k_out = n_test_images(tlm), _networks(t, True), _networks(t, False)
    est = {"intra": _pct_estimate(intra, result, ["tlm"], k_in, n, between=False),
           "inter": _pct_estimate(inter, result, ["tlm"], k_out, n),
           "dm_func_inter": _pct_estimate(dm_inter, result, ["dm_func"], k_out, n),
           "lead": _pct_estimate(lead, result, ["tlm", "lcka", "dm_struct"], k_out, n),
           "func_lead": _pct_estimate(dm_inter - inter, result, ["tlm", "dm_func"], k_out, n)}
    return {"est": est,
            "tlm_intra": at_most(est["intra"], TLM_INTRA_MAX, "% of layers TLM identifies within a network", unit="%"),
            "tlm_inter": at_least(est["lead"], INTER_MARGIN, "min(LCKA, DM struct.) − TLM, inter-network % on TLM's "
                                  "pairs", unit="points"),
            "dm_func_inter": more_than(est["func_lead"], 0.0, "DM (func.) − TLM, inter-network % on TLM's pairs "
                                       "(one resample for both)", unit="points")}


def _longer_cells(rivals: pd.DataFrame) -> pd.DataFrame:
    """:func:`identification_longer`'s table as :func:`tlm_retrained` rows (own and rival cells)."""
    own = pd.DataFrame({"sender": rivals.sender, "receiver": rivals.receiver, "cut_i": rivals.j, "cut_j": rivals.j,
                        "accuracy": rivals.own_accuracy, "correct": rivals.own_correct})
    rival = pd.DataFrame({"sender": rivals.sender, "receiver": rivals.receiver, "cut_i": rivals["rival i"],
                          "cut_j": rivals.j, "accuracy": rivals.rival_accuracy, "correct": rivals.rival_correct})
    return pd.concat([own, rival], ignore_index=True).drop_duplicates(["sender", "receiver", "cut_i", "cut_j"])


OTHERS = ("pwcca", "opd", "lcka", "dm_struct", "dm_func")  # the measures of the others_intra claim


def _others_intra(result: dict) -> tuple[Estimate, dict]:
    """The lowest intra-network identification % of PWCCA, OPD, LCKA and both DM indices, by the
    same rule as TLM's: each measure's % bootstrapped by :func:`_pct` (the DM stitches'
    test images, linear CKA's measure images, and the networks resampled; PWCCA, OPD and
    DM struct. fixed per network, :data:`FIXED_IMAGES`), the lowest of the five taken in each
    replicate, and the percentile interval of that minimum. Returns the estimate and, for the
    page, descriptive counts of DM (func.)'s rivals: how many rival stitches i → j are above the
    self-map j → j on the full test set (``rivals_point``) and by more than noise (the 95%
    interval of their difference above 0, ``rivals_beat``), over ``cases`` target layers."""
    dm = result["dm"]
    own_net = dm[dm.sender == dm.receiver]
    layers = result["layers"]
    within = {p for p in result["matrices"] if p[0] == p[1]}
    reps = np.stack([_pct(_measure_ident(result, k, within), True) for k in OTHERS], axis=1)
    networks = len(within)
    est = _pct_estimate(reps.min(1), result, OTHERS, networks, n_test_images(own_net, "dm_correct"), between=False)
    acc = accuracy_reps(own_net, "dm_correct")
    a = (1 - noise.LEVEL) / 2
    cases = rivals_beat = rivals_point = 0
    for _, rows in own_net.groupby("receiver", sort=False).indices.items():
        cell = {(own_net.cut_i.iloc[r], own_net.cut_j.iloc[r]): r for r in rows}
        for j in layers:
            diff = np.stack([acc[:, cell[(i, j)]] - acc[:, cell[(j, j)]] for i in layers if i != j], axis=1)
            low = np.quantile(diff[1:], a, axis=0)
            cases += 1
            rivals_beat += int((low > 0).sum())
            rivals_point += int((diff[0] > 0).sum())
    return est, {"cases": cases, "rivals_beat": rivals_beat, "rivals_point": rivals_point}


def identification_claims(result: dict, rivals: pd.DataFrame | None = None) -> tuple[dict, list[ClaimSpec]]:
    """Numbers and claims of J-T1 for one architecture, each judged on its interval;
    ``rivals`` (:func:`identification_longer`) adds the training-length control to the TLM
    claims: the claim re-judged with the deciding cells and their references retrained."""
    arch = result["arch"]
    tag = "rn" if arch == "resnet18" else "vit"
    name = ARCH_NAMES[arch]
    table = identification_table(result)
    same = identification_table(result, same_cases_as_tlm=True)
    pct = {k: (float(table.loc[NAMES[k], "intra (%)"]), float(table.loc[NAMES[k], "inter (%)"])) for k in MEASURES}
    inter_same = {k: float(same.loc[NAMES[k], "inter (%)"]) for k in MEASURES}
    crit = _tlm_criteria(result, result["tlm"])
    est = crit["est"]
    numbers = {f"{tag}_{k}_{w}": v for k, (i, e) in pct.items() for w, v in (("intra", i), ("inter", e))}
    numbers.update({f"{tag}_{k}_inter_tlm_cases": v for k, v in inter_same.items()})
    numbers[f"{tag}_inter_cases"] = int(table.loc[NAMES["lcka"], "inter cases"])
    numbers[f"{tag}_tlm_inter_cases"] = int(table.loc[NAMES["tlm"], "inter cases"])
    numbers[f"{tag}_intra_cases"] = int(table.loc[NAMES["lcka"], "intra cases"])
    for k in ("intra", "inter"):
        numbers[f"{tag}_tlm_{k}_low"], numbers[f"{tag}_tlm_{k}_high"] = est[k].low, est[k].high
    ctrl = tlm_controls(result)
    others, counts = _others_intra(result)
    numbers.update({f"{tag}_dm_func_intra_{k}": v for k, v in counts.items()})
    numbers[f"{tag}_others_intra_low"], numbers[f"{tag}_others_intra_high"] = others.low, others.high
    p = PAPER_T1[arch]
    longer = {}
    if rivals is not None and len(rivals):
        again = _tlm_criteria(result, with_longer(result["tlm"], _longer_cells(rivals)))
        n_cases = len(rivals)
        longer = {k: controls.training_length(
            crit[k], again[k], LONGER,
            what=f"the verdict survives {LONGER}× longer TLM, like for like: the strongest rival and the own-layer "
                 f"stitch of each of the {n_cases} cases retrained") for k in ("tlm_intra", "tlm_inter", "dm_func_inter")}
        numbers[f"{tag}_tlm_longer_cases"] = n_cases
        numbers[f"{tag}_tlm_intra_longer"] = again["est"]["intra"].value
        numbers[f"{tag}_tlm_inter_longer"] = again["est"]["inter"].value

    def with_length(key):
        return ctrl + ([longer[key]] if key in longer else [])

    claims = [
        ClaimSpec(
            key=f"tlm_intra_{tag}", text=f"{name}: task-loss matching fails intra-network layer identification "
                                         "(some layer is more similar to another layer than to itself)",
            criterion=crit["tlm_intra"], paper=f"{p['tlm'][0]:.2f}%",
            ours=f"{est['intra'].text(2, '%')} of {numbers[f'{tag}_intra_cases']}", controls=with_length("tlm_intra")),
        ClaimSpec(
            key=f"others_intra_{tag}", text=f"{name}: PWCCA, OPD, LCKA and both DM indices identify every layer "
                                            "within its network",
            criterion=at_least(others, OTHERS_INTRA_MIN, "lowest intra-network % of the five (the lowest taken in "
                               "each bootstrap replicate; the same percentile rule as TLM's %)", unit="%"),
            paper="100% each",
            ours=(f"lowest {others.text(2, '%')}; DM (func.): {counts['rivals_point']} rival stitches above the "
                  f"self-map on the full test set ({counts['rivals_beat']} by more than noise) over "
                  f"{counts['cases']} layers")),
        ClaimSpec(
            key=f"tlm_inter_{tag}", text=f"{name}: between networks, TLM identifies the corresponding layer far less "
                                         "often than LCKA and DM (struct.)",
            criterion=crit["tlm_inter"],
            paper=f"LCKA {p['lcka'][1]:.2f}%, DM struct. {p['dm_struct'][1]:.2f}%, TLM {p['tlm'][1]:.2f}%",
            ours=(f"LCKA {inter_same['lcka']:.2f}%, DM struct. {inter_same['dm_struct']:.2f}%, TLM "
                  f"{est['inter'].text(2, '%')} of {numbers[f'{tag}_tlm_inter_cases']}"),
            controls=with_length("tlm_inter")),
        ClaimSpec(
            key=f"dm_func_inter_{tag}", text=f"{name}: the functional version of DM outperforms TLM between networks",
            criterion=crit["dm_func_inter"], paper=f"{p['dm_func'][1]:.2f}% vs {p['tlm'][1]:.2f}%",
            ours=f"{inter_same['dm_func']:.2f}% vs {inter_same['tlm']:.2f}%; difference "
                 f"{est['func_lead'].text(2, 'points')}", controls=with_length("dm_func_inter")),
    ]
    between = {q for q in result["matrices"] if q[0] != q[1]}
    inter = {k: _pct(_measure_ident(result, k, between), False) for k in OTHERS}
    k_out = len({n for q in between for n in q})
    if arch == "resnet18":
        cca = _pct_estimate(inter["lcka"] - np.maximum(inter["pwcca"], inter["opd"]), result, ("lcka", "pwcca", "opd"),
                            k_out, result.get("measure_images"))
        numbers["rn_cca_lead"], numbers["rn_cca_lead_low"], numbers["rn_cca_lead_high"] = cca.value, cca.low, cca.high
        claims.append(ClaimSpec(
            key="cca_inter_rn", text="ResNet-18: PWCCA and OPD struggle to identify corresponding layers "
                                     "between networks, while LCKA performs very well",
            criterion=at_least(cca, CCA_MARGIN, "LCKA − max(PWCCA, OPD), inter-network %",
                               unit="points"),
            paper=f"LCKA {p['lcka'][1]:.2f}%, PWCCA {p['pwcca'][1]:.2f}%, OPD {p['opd'][1]:.2f}%",
            ours=f"LCKA {pct['lcka'][1]:.2f}%, PWCCA {pct['pwcca'][1]:.2f}%, OPD {pct['opd'][1]:.2f}%; "
                 f"difference {cca.text(2, 'points')}"))
    else:
        best = _pct_estimate(np.max(np.stack(list(inter.values()), axis=1), axis=1), result, OTHERS, k_out,
                             n_test_images(result["dm"], "dm_correct"))
        numbers["vit_best_inter"], numbers["vit_best_inter_low"], numbers["vit_best_inter_high"] = (
            best.value, best.low, best.high)
        claims.append(ClaimSpec(
            key="struggle_vit", text="ViT-Ti: all methods struggle to identify corresponding layers "
                                     "between networks",
            criterion=at_most(best, VIT_STRUGGLE_MAX, "the best measure's inter-network % (the best "
                              "chosen in each replicate)", unit="%"),
            paper=f"best LCKA {p['lcka'][1]:.2f}%", ours=f"best {best.text(2, '%')}"))
    return numbers, claims
