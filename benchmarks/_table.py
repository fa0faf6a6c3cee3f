"""Printing benchmark rows (shared by every benchmark's command line)."""


def print_rows(rows: list[dict]) -> None:
    for r in rows:
        print(f"{r['benchmark']} | {r['setting']}\n    baseline {r['baseline']}: {r['baseline_value']:.3g} {r['unit']}"
              f"\n    ours     {r['ours']}: {r['ours_value']:.3g} {r['unit']}\n    ratio {r['ratio']:.2f}x"
              + (f" (target {r['target']:g}x)" if r.get("target") else "") + (f"; {r['notes']}" if r.get("notes") else ""))
