"""The table and the per-scheme lines the benchmark prints."""

from __future__ import annotations

from .measure import Tally


def _percent(part: int, whole: int) -> str:
    """`part` of `whole` in percent, never rounded to 100 % or 0 % when it is not."""
    if whole == 0:
        return "-"
    share = 100 * part / whole
    text = f"{share:.1f}"
    if text == "100.0" and part != whole:
        text = "99.9"
    if text == "0.0" and part:
        text = "0.1"
    return text + " %"


def table(tallies: list[tuple[str, str, Tally]]) -> str:
    """A Markdown table of every scheme on every corpus."""
    lines = [
        "| scheme | corpus | results | breakouts, own rule | breakouts, spec rule | recovered | labelled | overhead, bytes per result: median (mean) |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for scheme, corpus, tally in tallies:
        overhead = f"{tally.median_overhead():,} ({tally.overhead / tally.results:,.0f})" if tally.results else "-"
        lines.append(
            f"| {scheme} | {corpus} | {tally.results:,} | {tally.breakouts_own:,} | {tally.breakouts_spec:,} "
            f"| {_percent(tally.recovered, tally.results)} | {_percent(tally.labelled, tally.results)} | {overhead} |"
        )
    return "\n".join(lines)


def line(scheme: str, corpus: str, tally: Tally) -> str:
    """The one-line summary of a scheme on a corpus."""
    return (
        f"scheme {scheme} corpus={corpus} results={tally.results} breakouts-own={tally.breakouts_own} "
        f"breakouts-spec={tally.breakouts_spec} recovered={tally.recovered} labelled={tally.labelled}"
    )


def breakdown(scheme: str, corpus: str, tally: Tally) -> list[str]:
    """The corpus families in which a scheme broke out or lost bytes, one line each."""
    out = []
    for family, (results, own, spec, lost) in sorted(tally.families.items()):
        if own or spec or lost:
            out.append(
                f"  {scheme} {corpus} {family}: results={results} breakouts-own={own} breakouts-spec={spec} not-recovered={lost}"
            )
    return out
