#!/usr/bin/env python3
"""Runs the neutraliser and streaming benchmarks, then prints throughputs, ratios and floors.

    python3 scripts/bench-report.py              # one run of both benchmarks, then the report
    python3 scripts/bench-report.py --runs 3     # three runs: every ratio's spread across runs
    python3 scripts/bench-report.py --no-run     # report on the results criterion already holds

Each run is `cargo bench -p fence-runtime --bench neutralise --bench streaming`. Criterion
writes the median time per iteration of every benchmark under target/criterion; every ratio
below is a ratio of two medians from the same run. A floor is checked on the median, across
runs, of that run's ratio; the script exits 1 when one is missed.

"Never slower than regex or aho-corasick" is a ratio of at least 1.0, where within 3% counts
as a tie: on clean prose all three, like `memchr` itself, make one pass for `<` at the speed the
cache delivers bytes, so their ratio is 1.0 give or take the machine's noise.
"""
import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import time

REPO = pathlib.Path(__file__).resolve().parent.parent
IMPLS = ["neutralise", "fence", "regex", "aho-corasick", "reference", "memchr", "copy"]
INPUTS = [
    "prose-1MiB",
    "html-4MiB",
    "json-html-1MiB",
    "adversarial-1MiB",
    "back-to-back-1MiB",
    "near-miss-1MiB",
    "tool-result-4KiB",
    "message-400B",
]
STREAMING = ["one-shot from bytes", "buffer bytes/4096", "buffer bytes/65536"]

# (input, numerator, denominator, floor): the numerator's speed over the denominator's.
FLOORS = [(name, "neutralise", rival, 1.0) for name in INPUTS for rival in ("regex", "aho-corasick")]
TIE = 0.03  # for the floors of 1.0 ("never slower"): a ratio this close to 1.0 is a tie
FLOORS += [
    ("prose-1MiB", "neutralise", "memchr", 0.9),
    ("back-to-back-1MiB", "neutralise", "aho-corasick", 5.0),
    ("prose-1MiB", "fence", "copy", 0.8),
    ("html-4MiB", "fence", "copy", 0.8),
    ("html-4MiB", "neutralise", "regex", 3.5),
    ("html-4MiB", "neutralise", "copy", 0.5),
    ("adversarial-1MiB", "neutralise", "regex", 10.0),
    ("adversarial-1MiB", "neutralise", "aho-corasick", 5.0),
    ("prose-1MiB", "neutralise", "reference", 30.0),
    ("html-4MiB", "neutralise", "reference", 3.0),
]
MIN_GBPS = 2.0  # no input under this, for `neutralise`
MAX_STREAMING = 1.25  # streamed time over one-shot `str::from_utf8` + `fence` time


def run_benches(target):
    env = dict(os.environ, CARGO_TARGET_DIR=str(target))
    cmd = ["cargo", "bench", "-p", "fence-runtime", "--bench", "neutralise", "--bench", "streaming"]
    print("$ " + " ".join(cmd), file=sys.stderr, flush=True)
    subprocess.run(cmd, cwd=REPO, env=env, check=True, stdout=sys.stderr)


def load(target, since):
    """Median ns per iteration and bytes per iteration, by group then benchmark."""
    root = target / "criterion"
    results = {}
    stale = []
    for estimates in root.glob("**/new/estimates.json"):
        bench_dir = estimates.parent.parent
        rel = bench_dir.relative_to(root).parts
        group, bench = rel[0], "/".join(rel[1:])
        if since is not None and estimates.stat().st_mtime < since:
            stale.append(f"{group}/{bench}")
            continue
        meta = json.loads((estimates.parent / "benchmark.json").read_text())
        nanos = json.loads(estimates.read_text())["median"]["point_estimate"]
        nbytes = (meta.get("throughput") or {}).get("Bytes")
        results.setdefault(group, {})[bench] = (nanos, nbytes, estimates.stat().st_mtime)
    return results, stale


def group_named(results, prefix):
    """The group for an input: HTML's name ends in where its pages came from."""
    return next((g for g in sorted(results) if g == prefix or g.startswith(prefix + "-")), None)


def gbps(entry):
    nanos, nbytes, _ = entry
    return nbytes / nanos  # bytes per ns = GB/s


def ratios(results):
    """Every checked quantity of one run: name -> (value, floor, higher is better)."""
    out = {}
    for name, a, b, floor in FLOORS:
        group = group_named(results, name)
        entries = results.get(group, {})
        value = gbps(entries[a]) / gbps(entries[b]) if a in entries and b in entries else None
        out[f"{name}: {a} / {b}"] = (value, floor, True)
    for name in INPUTS:
        entries = results.get(group_named(results, name), {})
        value = gbps(entries["neutralise"]) if "neutralise" in entries else None
        out[f"{name}: neutralise GB/s"] = (value, MIN_GBPS, True)
    for name in ["html", "prose"]:
        entries = results.get(f"fence-4MiB-{name}", {})
        base = entries.get(STREAMING[0])
        for variant in STREAMING[1:]:
            value = entries[variant][0] / base[0] if base and variant in entries else None
            out[f"streaming {name}: {variant} / one-shot from bytes (time)"] = (
                value,
                MAX_STREAMING,
                False,
            )
    return out


def median_results(runs):
    """Each benchmark's median time across runs (per-run medians), as one run's results."""
    merged = {}
    for results in runs:
        for group, entries in results.items():
            for bench, entry in entries.items():
                merged.setdefault(group, {}).setdefault(bench, []).append(entry)
    return {
        group: {
            bench: (statistics.median(e[0] for e in entries), entries[0][1], entries[0][2])
            for bench, entries in benches.items()
        }
        for group, benches in merged.items()
    }


def table(results):
    lines = ["| input | " + " | ".join(IMPLS) + " |", "|---|" + "---:|" * len(IMPLS)]
    for name in INPUTS:
        group = group_named(results, name)
        if group is None:
            continue
        entries = results[group]
        cells = [f"{gbps(entries[i]):.2f}" if i in entries else "–" for i in IMPLS]
        lines.append(f"| {group} | " + " | ".join(cells) + " |")
    lines.append("")
    lines.append("| 4 MiB streamed | " + " | ".join(STREAMING) + " |")
    lines.append("|---|" + "---:|" * len(STREAMING))
    for name in ["html", "prose"]:
        entries = results.get(f"fence-4MiB-{name}", {})
        cells = [f"{entries[v][0] / 1e3:.0f} µs" if v in entries else "–" for v in STREAMING]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=1, help="benchmark runs (default 1)")
    parser.add_argument("--no-run", action="store_true", help="report on existing results")
    parser.add_argument("--target", default=os.environ.get("CARGO_TARGET_DIR", REPO / "target"))
    args = parser.parse_args()
    target = pathlib.Path(args.target)

    runs = []
    for i in range(0 if args.no_run else args.runs):
        started = time.time()
        run_benches(target)
        results, _ = load(target, started)
        runs.append(results)
        print(f"\nrun {i + 1} of {args.runs}: GB/s, median of criterion's samples\n")
        print(table(results))
    if args.no_run:
        results, _ = load(target, None)
        if not results:
            sys.exit(f"no criterion results under {target}; run the benchmarks first")
        times = [e[2] for entries in results.values() for e in entries.values()]
        print(f"GB/s, median of criterion's samples; results span {max(times) - min(times):.0f} s\n")
        print(table(results))
        runs.append(results)

    if len(runs) > 1:
        print(f"\nmedian across the {len(runs)} runs of each benchmark's median: GB/s\n")
        print(table(median_results(runs)))

    per_run = [ratios(results) for results in runs]
    failed = False
    print(f"\nRatios of medians in one run; `median` is across {len(runs)} run(s):\n")
    print("| quantity | median | spread | floor | |")
    print("|---|---:|---:|---:|---|")
    for key, (_, floor, higher) in per_run[0].items():
        values = [r[key][0] for r in per_run if r[key][0] is not None]
        if not values:
            print(f"| {key} | – | | {floor} | MISSING |")
            failed = True
            continue
        mid = statistics.median(values)
        ok = mid >= floor if higher else mid <= floor
        verdict = "ok" if ok else "BELOW"
        if not ok and floor == 1.0 and higher and mid >= 1.0 - TIE:
            ok, verdict = True, "tie"
        failed |= not ok
        spread = f"{min(values):.2f}–{max(values):.2f}" if len(values) > 1 else ""
        bound = f"≥ {floor}" if higher else f"≤ {floor}"
        print(f"| {key} | {mid:.2f} | {spread} | {bound} | {verdict} |")
    sys.exit(1 if failed else 0)


main()
