#!/usr/bin/env python3
"""Throughputs and ratios from the last `cargo bench -p fence-runtime --bench neutralise` run.

Reads criterion's estimates (median time per iteration) under target/criterion, prints a
Markdown table of GB/s per input and implementation, the ratios the performance issue sets
floors on, and whether each floor holds. Exits 1 when a floor fails.

    python3 scripts/bench-report.py [target-dir]
"""
import json
import pathlib
import sys

root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "target") / "criterion"
IMPLS = ["neutralise", "fence", "regex", "aho-corasick", "reference", "memchr-scan", "copy"]


def load():
    results = {}
    for group in sorted(p for p in root.iterdir() if p.is_dir() and p.name != "report"):
        for impl in IMPLS:
            base = group / impl / "new"
            try:
                estimates = json.loads((base / "estimates.json").read_text())
                bench = json.loads((base / "benchmark.json").read_text())
            except FileNotFoundError:
                continue
            nanos = estimates["median"]["point_estimate"]
            nbytes = bench["throughput"]["Bytes"]
            results.setdefault(group.name, {})[impl] = (nanos, nbytes)
    return results


def gbps(entry):
    nanos, nbytes = entry
    return nbytes / nanos  # bytes per ns = GB/s


def main():
    results = load()
    if not results:
        sys.exit(f"no criterion results under {root}; run the benchmark first")
    print("| input | " + " | ".join(IMPLS) + " |")
    print("|---|" + "---:|" * len(IMPLS))
    for group, entries in results.items():
        cells = [f"{gbps(entries[i]):.2f}" if i in entries else "–" for i in IMPLS]
        print(f"| {group} | " + " | ".join(cells) + " |")
    print("\nGB/s (median). Ratios of medians in the same run:\n")

    def ratio(group_prefix, a, b):
        group = next((g for g in results if g.startswith(group_prefix)), None)
        if group is None or a not in results[group] or b not in results[group]:
            return None
        return gbps(results[group][a]) / gbps(results[group][b])

    floors = [
        ("prose", "neutralise", "memchr-scan", 0.9),
        ("html", "neutralise", "regex", 3.5),
        ("html", "neutralise", "copy", 0.5),
        ("html", "fence", "copy", 0.4),
        ("adversarial", "neutralise", "regex", 10.0),
        ("adversarial", "neutralise", "aho-corasick", 5.0),
        ("prose", "neutralise", "reference", 30.0),
        ("html", "neutralise", "reference", 3.0),
    ]
    failed = False
    print("| input | ratio | measured | floor | |")
    print("|---|---|---:|---:|---|")
    for prefix, a, b, floor in floors:
        value = ratio(prefix, a, b)
        ok = value is not None and value >= floor
        failed |= not ok
        shown = "–" if value is None else f"{value:.2f}×"
        print(f"| {prefix} | {a} / {b} | {shown} | {floor}× | {'ok' if ok else 'BELOW'} |")
    slowest = min(
        ((gbps(e["neutralise"]), g) for g, e in results.items() if "neutralise" in e),
        default=None,
    )
    if slowest:
        ok = slowest[0] >= 1.0
        failed |= not ok
        print(f"| {slowest[1]} | slowest `neutralise` | {slowest[0]:.2f} GB/s | 1 GB/s | {'ok' if ok else 'BELOW'} |")
    sys.exit(1 if failed else 0)


main()
