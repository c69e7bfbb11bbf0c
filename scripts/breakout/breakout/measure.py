"""The structural measures: what a reader makes of the blocks a scheme wrote for one result.

Nothing here asks whether a model obeys anything. For one result and the blocks a scheme wrote
for it:

- **breakout, by the scheme's own rule**: a marker the scheme's own code recognises starts inside
  the tool's output (other than where the scheme wrote its own opener and closer), or attacker
  text was left outside any block. A forged closer ends the block early for a reader that takes
  the first closer; a forged opener starts a block the attacker placed, under a source of the
  attacker's choosing where the scheme names sources.
- **breakout, by our spec's rule**: the same, with markers recognised as our spec recognises
  them (a `<`, an optional `/`, the tag's name in any ASCII casing, whatever follows): the block
  runs from the scheme's opener to its final closer, and any other live marker in it is a
  boundary the attacker forged.
- **recovered**: reading each block back by the scheme's own rule (up to its final closer) gives
  the tool's output with nothing deleted or changed: the output itself, or for the fence the
  output with only the infix inserted.
- **labelled**: every block names the tool that produced it.
- **overhead**: bytes the model reads beyond the tool's output.
"""

from __future__ import annotations

from dataclasses import dataclass

from .schemes import Block, Result, Scheme


@dataclass(frozen=True)
class Outcome:
    """The measures for one result under one scheme."""

    breakout_own: bool
    breakout_spec: bool
    recovered: bool
    labelled: bool
    overhead: int


def _forged(markers: list[tuple[int, int]], block: Block) -> bool:
    """Whether a marker starts inside the block's content without being one of its own."""
    assert block.content is not None
    start, end = block.content
    for marker in markers:
        if any(marker[0] < own[1] and own[0] < marker[1] for own in block.own):
            continue
        if start <= marker[0] < end:
            return True
    return False


def _breakout(scheme: Scheme, blocks: tuple[Block, ...], attacked: bool, rule: str) -> bool:
    """Whether the blocks break out by `rule` (`own` or `spec`): a block that is none, attacker
    text left unwrapped, or a forged marker in a block's content."""
    find = scheme.own_markers if rule == "own" else scheme.spec_markers
    for block in blocks:
        if block.content is None:
            return True
        if not block.wrapped:
            if attacked:
                return True
            continue
        if _forged(find(block.text), block):
            return True
    return False


def measure(scheme: Scheme, result: Result, blocks: tuple[Block, ...], per_block: bool) -> Outcome:
    """The measures for `result`, which `scheme` wrote as `blocks`.

    `per_block` says whether the scheme wrapped each of the result's parts on its own (MCP
    content blocks), so that what a lossless reading gives is judged part by part.
    """
    read = [scheme.unwrap(block) if block.content is not None else None for block in blocks]
    if per_block:
        expected = "".join(scheme.lossless(part) for part in result.parts)
    else:
        expected = scheme.lossless(result.text)
    recovered = all(item is not None for item in read) and "".join(item[1] for item in read if item) == expected
    want = scheme.label(result.tool)
    labelled = want is not None and all(item is not None and item[0] == want for item in read)
    overhead = sum(len(block.text.encode("utf-8", "surrogatepass")) for block in blocks) - len(
        result.text.encode("utf-8", "surrogatepass")
    )
    return Outcome(
        _breakout(scheme, blocks, result.attacked, "own"),
        _breakout(scheme, blocks, result.attacked, "spec"),
        recovered,
        labelled,
        overhead,
    )


@dataclass
class Tally:
    """The measures added up over a corpus, with the families that broke out, for the report."""

    results: int = 0
    breakouts_own: int = 0
    breakouts_spec: int = 0
    recovered: int = 0
    labelled: int = 0
    overhead: int = 0

    def __post_init__(self) -> None:
        """The per-family counts, the first examples that broke out, every overhead."""
        self.families: dict[str, list[int]] = {}
        self.examples: list[tuple[str, str]] = []
        self.overheads: list[int] = []

    def median_overhead(self) -> int:
        """The median of the results' overheads, in bytes (0 for no result)."""
        ordered = sorted(self.overheads)
        return ordered[len(ordered) // 2] if ordered else 0

    def add(self, result: Result, outcome: Outcome) -> None:
        """Counts one result."""
        self.results += 1
        self.breakouts_own += outcome.breakout_own
        self.breakouts_spec += outcome.breakout_spec
        self.recovered += outcome.recovered
        self.labelled += outcome.labelled
        self.overhead += outcome.overhead
        self.overheads.append(outcome.overhead)
        family = self.families.setdefault(result.family or "-", [0, 0, 0, 0])
        family[0] += 1
        family[1] += outcome.breakout_own
        family[2] += outcome.breakout_spec
        family[3] += not outcome.recovered
        if (outcome.breakout_own or outcome.breakout_spec) and len(self.examples) < 3:
            self.examples.append((result.family, result.text[:160]))
