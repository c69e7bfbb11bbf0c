"""The benchmark's command line: `python3 -m breakout` (scripts/breakout/run calls it).

Prints the table, then one line per scheme and corpus; exits 1 when the fence (either way it is
run) has a single breakout or does not give back a tool's bytes, 2 on an error.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from . import adaptive, report
from .fence_runners import FenceError, fence_mcp, fence_wrap
from .measure import Tally, measure
from .schemes import Fence, Result, Scheme, python_schemes

FENCE_SCHEMES = ("fence", "fence-mcp")
ALL_SCHEMES = (*FENCE_SCHEMES, "gemini-cli", "agentdojo-delimiting", "hermes-agent", "openclaw")
PER_BLOCK = {"fence-mcp", "gemini-cli", "hermes-agent"}
"""The schemes that wrap each MCP content block on its own."""


def _arguments(argv: list[str]) -> argparse.Namespace:
    """The command line, read."""
    parser = argparse.ArgumentParser(prog="scripts/breakout/run", description=__doc__)
    parser.add_argument("--fence", required=True, help="the `fence` binary to measure")
    parser.add_argument("--corpus", default="agentdojo,adaptive", help="agentdojo, adaptive, or both (comma-separated)")
    parser.add_argument("--slice", default="full", choices=("full", "small"), help="how much of AgentDojo")
    parser.add_argument("--schemes", default=",".join(ALL_SCHEMES), help="comma-separated, from: " + ", ".join(ALL_SCHEMES))
    parser.add_argument("--cache", default="target/breakout/cache", help="where the AgentDojo corpus is cached")
    parser.add_argument("--jobs", type=int, default=2, help="`fence wrap` processes at a time")
    parser.add_argument("--seed", type=int, default=0, help="the adaptive corpus's and OpenClaw's ids' seed")
    parser.add_argument("--families", help="only these adaptive families (comma-separated), e.g. exact,casing")
    parser.add_argument("--json", help="also write every tally, with the failing families, to this file")
    parser.add_argument("--breakdown", action="store_true", help="after the lines, the families that broke out")
    return parser.parse_args(argv)


def _planted(name: str, slice_name: str, cache: Path) -> list[Result]:
    """The adaptive corpus's `agentdojo` family: the scheme's forged markers planted in
    AgentDojo's environments (empty, with a note, when agentdojo is not installed)."""
    try:
        from . import agentdojo_corpus
    except ImportError:
        print("breakout: agentdojo is not installed: the adaptive corpus goes without its agentdojo family", file=sys.stderr)
        return []
    target = adaptive.TARGETS[name]
    # AgentDojo keeps its environments as YAML text with the injections formatted in, where a
    # double quote ends the scalar a vector sits in: the opener is planted without its quotes.
    return agentdojo_corpus.planted(name, target.closer, target.opener.replace('"', ""), slice_name, cache)


def _blocks(name: str, scheme: Scheme | None, binary: str, results: list[Result], jobs: int):
    """Each result with the blocks the scheme wrote for it."""
    if name == "fence":
        return fence_wrap(binary, results, jobs)
    if name == "fence-mcp":
        return fence_mcp(binary, results)
    assert scheme is not None
    return ((result, scheme.wrap(result)) for result in results)


def main(argv: list[str]) -> int:
    """Runs the benchmark; the exit status the module's docstring gives."""
    args = _arguments(argv)
    wanted = [name.strip() for name in args.schemes.split(",") if name.strip()]
    unknown = [name for name in wanted if name not in ALL_SCHEMES]
    corpora = [name.strip() for name in args.corpus.split(",") if name.strip()]
    if unknown or not set(corpora) <= {"agentdojo", "adaptive"}:
        print(f"breakout: unknown scheme or corpus: {unknown or corpora}; see --help", file=sys.stderr)
        return 2
    if not Path(args.fence).is_file():
        print(f"breakout: no `fence` binary at {args.fence}: build it (cargo build -p fence-cli) or pass --fence", file=sys.stderr)
        return 2
    by_name: dict[str, Scheme] = {scheme.name: scheme for scheme in python_schemes(args.seed)}
    by_name["fence"] = by_name["fence-mcp"] = Fence()

    tallies: list[tuple[str, str, Tally]] = []
    agentdojo_results: list[Result] | None = None
    for corpus in corpora:
        for name in wanted:
            scheme = by_name[name]
            if corpus == "agentdojo":
                if agentdojo_results is None:
                    from . import agentdojo_corpus

                    agentdojo_results = agentdojo_corpus.load(args.slice, Path(args.cache))
                results = agentdojo_results
            else:
                keep = set(args.families.split(",")) if args.families else None
                results = adaptive.corpus(name, args.seed)
                if keep is None or "agentdojo" in keep:
                    results = results + _planted(name, args.slice, Path(args.cache))
                if keep is not None:
                    results = [result for result in results if result.family in keep]
            started = time.monotonic()
            tally = Tally()
            try:
                for result, blocks in _blocks(name, None if name in FENCE_SCHEMES else scheme, args.fence, results, args.jobs):
                    per_block = name in PER_BLOCK and result.delivery == "blocks"
                    tally.add(result, measure(scheme, result, blocks, per_block))
            except FenceError as error:
                print(f"breakout: {name} on {corpus}: {error}", file=sys.stderr)
                return 2
            print(f"breakout: {name} on {corpus}: {tally.results} results in {time.monotonic() - started:.1f} s", file=sys.stderr)
            tallies.append((name, corpus, tally))

    print(report.table(tallies))
    print()
    for name, corpus, tally in tallies:
        print(report.line(name, corpus, tally))
    if args.breakdown:
        print()
        for name, corpus, tally in tallies:
            for text in report.breakdown(name, corpus, tally):
                print(text)
    if args.json:
        Path(args.json).write_text(
            json.dumps(
                [
                    {
                        "scheme": name,
                        "corpus": corpus,
                        "results": tally.results,
                        "breakouts_own": tally.breakouts_own,
                        "breakouts_spec": tally.breakouts_spec,
                        "recovered": tally.recovered,
                        "labelled": tally.labelled,
                        "overhead_bytes": tally.overhead,
                        "families": tally.families,
                        "examples": tally.examples,
                    }
                    for name, corpus, tally in tallies
                ],
                indent=1,
            )
        )

    failed = [
        (name, corpus, tally)
        for name, corpus, tally in tallies
        if name in FENCE_SCHEMES and (tally.breakouts_own or tally.breakouts_spec or tally.recovered != tally.results)
    ]
    for name, corpus, tally in failed:
        print(f"breakout: FAILED: {report.line(name, corpus, tally)}", file=sys.stderr)
        for text in report.breakdown(name, corpus, tally):
            print(f"breakout: {text.strip()}", file=sys.stderr)
        for family, text in tally.examples:
            print(f"breakout: e.g. ({family}) {text!r}", file=sys.stderr)
    return 1 if failed else 0



if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
