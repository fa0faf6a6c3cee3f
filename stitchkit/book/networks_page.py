"""The Networks page (``book/networks.md``, issue 65, item 3): every network the book's verdicts
rest on, one row each, read from the committed pages' records of the networks their runs used
(``provenance.networks``, :func:`stitchkit.base.ledger.networks_used`): its architecture and width, its
training data and labels, how it was trained and how far through its schedule it stopped, its
test accuracy beside what its paper states of its own networks, its training time and the device
that trained it, and the pages that use it. Its headline is the median test accuracy of the
CIFAR-10 networks trained on all 50,000 clean images to the end of their schedule, the number
the landing page and the scorecard quote.
"""

from __future__ import annotations

from statistics import median
from typing import Any

from ..registry.papers import paper_of
from .catalogue import Page, minutes, sort_key
from .pages import escape, link, table


def network_rows(pages: list[Page]) -> dict[str, dict[str, Any]]:
    """Every network the pages record, by key: its record (the latest run's) and the pages using it."""
    out: dict[str, dict[str, Any]] = {}
    for page in sorted(pages, key=lambda p: sort_key(p.id)):
        for n in page.results.get("provenance", {}).get("networks") or ():
            entry = out.setdefault(n["key"], {"record": n, "pages": []})
            entry["record"] = {**entry["record"], **n}
            if page.id not in [p.id for p in entry["pages"]]:
                entry["pages"].append(page)
    return out


def full_clean(record: dict[str, Any]) -> bool | None:
    """Whether a network was trained on all 50,000 clean CIFAR-10 images to the end of its
    schedule; None where its record predates the fields that say (labels, stop)."""
    if record.get("data") != "cifar10" or not record.get("trained") or record.get("train_size") is not None:
        return False
    if "labels" not in record:
        return None
    return record.get("labels") == "none" and record.get("method", "supervised") == "supervised" \
        and float(record.get("stop") or 1.0) >= 1.0


def headline(pages: list[Page]) -> str:
    """The median accuracy line: over the networks known to be trained on all 50k clean CIFAR-10
    images to the end of their schedule, and how many records cannot say yet."""
    rows = network_rows(pages).values()
    known = [100 * r["record"]["accuracy"] for r in rows
             if full_clean(r["record"]) and r["record"].get("accuracy") is not None]
    unknown = sum(full_clean(r["record"]) is None for r in rows)
    if known:
        text = (f"The CIFAR-10 networks trained on all 50,000 clean images to the end of their schedule reach a median "
                f"**{median(known):.1f}%** test accuracy ({min(known):.1f}-{max(known):.1f}%, {len(known)} networks).")
    else:
        text = "No record yet says which networks were trained on all 50,000 clean CIFAR-10 images to the end."
    if unknown:
        text += (f" {'Besides, ' if known else ''}{unknown} CIFAR-10 network{'s' if unknown != 1 else ''} on all "
                 f"50,000 images {'are' if unknown != 1 else 'is'} recorded by runs made before the records gave the "
                 "labels and the schedule's end, so they are left out of that median (the random-label and snapshot "
                 "networks are among such records) until their pages run again.")
    return text


def _recipe(r: dict[str, Any]) -> str:
    if not r.get("trained"):
        return "untrained (a control)"
    length = f"{r['steps']} steps" if r.get("steps") else f"{r.get('epochs'):g} epochs"
    if r.get("stop") is not None and float(r["stop"]) < 1:
        length += f", stopped at {100 * float(r['stop']):.0f}% of its schedule"
    how = ", ".join(str(x) for x in (r.get("optimizer"), f"lr {r['lr']:g}" if r.get("lr") else None, r.get("schedule"))
                    if x)
    method = "SimCLR pre-training, linear probe; " if r.get("method") == "simclr" else ""
    return f"{method}{length}, batch {r.get('batch_size')}" + (f" ({how})" if how else "")


def _data(r: dict[str, Any]) -> str:
    size = f"{r['train_size']:,} images" if r.get("train_size") else "all images"
    labels = r.get("labels")
    if labels == "random":
        labels = f"{100 * float(r.get('label_noise') or 0):.0f}% random labels"
    elif labels == "objects_vs_animals":
        labels = "objects vs animals"
    elif labels == "none":
        labels = "its labels"
    else:
        labels = "labels not recorded"
    return f"{r.get('data')}, {size}, {labels}"


def networks_markdown(pages: list[Page]) -> str:
    """The Networks page."""
    body = []
    for key, entry in sorted(network_rows(pages).items(),
                             key=lambda kv: (kv[1]["record"].get("data") or "", kv[1]["record"].get("model") or "",
                                             kv[1]["record"].get("width") or 0, kv[0])):
        r = entry["record"]
        options = ", ".join(f"{k} {v}" for k, v in (r.get("options") or {}).items())
        name = f"{r.get('model')} w{r.get('width')}" + (f" ({options})" if options else "") + f", seed {r.get('seed')}"
        papers = {paper_of(p.id) for p in entry["pages"]}
        stated = "; ".join(sorted({p.network_accuracy for p in papers if p and p.network_accuracy})) or "-"
        acc = "-" if r.get("accuracy") is None else f"{100 * r['accuracy']:.1f}%"
        trained = "-" if not r.get("trained") else (
            f"{minutes(r.get('train_seconds'))} on {r.get('device') or '?'} ({r.get('precision') or '?'})")
        used = ", ".join(link(p.doc, p.id, "") if p.doc else p.id for p in entry["pages"])
        body.append([f"`{key}`", escape(name), escape(_data(r)), escape(_recipe(r)), acc, escape(stated), trained, used])
    return f"""% Generated by stitchkit.book.bookpages.write_pages() from the results files: edit the generator, not this file.

# Networks

Every network the book's verdicts rest on, read from the record each page's run keeps of the
networks it used: what it is, what it was trained on and how, its test accuracy (on the data
set's whole test split, in fp32) beside what its paper states of its own networks, the time it
took to train and where, and the pages that use it. A network several pages use was trained
once and read from the cache by the others.

{headline(pages)}

:::{{container}} sk-networks-table
{table(["key", "network", "training data", "recipe", "test accuracy", "the paper's networks", "trained in",
        "pages"], body)}
:::
"""


__all__ = ["full_clean", "headline", "network_rows", "networks_markdown"]
