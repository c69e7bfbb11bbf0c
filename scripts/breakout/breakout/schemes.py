"""The in-band marking schemes under test, each reimplemented from its public source.

A scheme turns a tool's result into the text a model reads. Each class here says where its rule
comes from, what it rewrites, how its blocks are read back (its own rule), and which of its
markers a reader recognises: by the scheme's own rule, and by our spec's rule (a `<`, an
optional `/`, then the tag's name in any ASCII casing, whatever follows).

The fence itself is not reimplemented for the measures: `fence_runners` runs the real `fence`
binary, and `Fence` here only reads its blocks (and keeps a plain Python copy of the marker rule,
which the tests hold against the binary, to say which bytes a lossless block carries).

Where a source writes fixed prose around a block (Hermes Agent's notice, OpenClaw's warning),
its words are not reproduced: a filler of the same length in bytes stands in for them, so that
the overhead is the source's. No measure reads that prose.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

# ---------------------------------------------------------------------------------------------
# What the corpora give and what a scheme makes of it.


@dataclass(frozen=True)
class Result:
    """One tool result as a corpus gives it.

    `parts` arrive as `delivery` says: `whole` (one string), `chunks` (one output streamed in
    pieces, which every scheme but a streaming one sees joined) or `blocks` (separate MCP text
    content blocks, which schemes that wrap each block wrap one by one). `attacked` says whether
    the output carries attacker text; `family` names the corpus family it belongs to.
    """

    tool: str
    parts: tuple[str, ...]
    delivery: str = "whole"
    attacked: bool = True
    family: str = ""

    @property
    def text(self) -> str:
        """The tool's whole output."""
        return "".join(self.parts)


@dataclass(frozen=True)
class Block:
    """One piece of what the model reads: a block the scheme wrote, or text it left unwrapped.

    `content` is the span of the tool's (possibly rewritten) output in `text`, and `own` the spans
    of the scheme's own markers. An unwrapped piece has `wrapped` false and its whole text as
    content. `content` is None when the text could not be read as a block at all.
    """

    text: str
    content: tuple[int, int] | None
    own: tuple[tuple[int, int], ...] = ()
    wrapped: bool = True


def _filler(length: int) -> str:
    """ASCII text of exactly `length` bytes standing in for a source's fixed prose."""
    words = f"[a notice of {length} bytes in the source; its words are not reproduced here]"
    return (words + "." * length)[:length]


def _spans(pattern: re.Pattern[str], text: str) -> list[tuple[int, int]]:
    """The spans of `pattern`'s non-overlapping matches in `text`."""
    return [match.span() for match in pattern.finditer(text)]


class Scheme:
    """A marking scheme: how it wraps a result, and how its markers and blocks are read."""

    name = ""
    source = ""

    def wrap(self, result: Result) -> tuple[Block, ...]:
        """The blocks the model reads for `result`, in order."""
        raise NotImplementedError

    def own_markers(self, text: str) -> list[tuple[int, int]]:
        """The markers in `text` by the scheme's own rule: what its own code treats as one."""
        raise NotImplementedError

    def spec_markers(self, text: str) -> list[tuple[int, int]]:
        """The markers in `text` by our spec's rule applied to the scheme's tag."""
        raise NotImplementedError

    def unwrap(self, block: Block) -> tuple[str | None, str] | None:
        """A block read back by the scheme's own rule, up to its final closer: its label (None
        when the scheme writes none) and its content; None when the text is no block of it."""
        raise NotImplementedError

    def lossless(self, output: str) -> str:
        """The content a block carries when nothing of `output` is lost: the output itself, or,
        for the fence, the output with the infix inserted (insertions only, every byte kept)."""
        return output

    def label(self, tool: str) -> str | None:
        """The label a block of `tool`'s result carries when it names the tool; None when the
        scheme has no label that could."""
        return None


# ---------------------------------------------------------------------------------------------
# The fence: the Untrusted Fence spec, as fence-runtime implements it (docs/spec-reading.md).

FENCE_INFIX = "!MURMUR-NEUTRALISED!"
FENCE_CLOSER = "</untrusted-content>"
_FENCE_MARKER = re.compile(r"</?untrusted-content", re.IGNORECASE | re.ASCII)
_FENCE_OPENER_PREFIX = re.compile(r"<untrusted-content source=", re.IGNORECASE | re.ASCII)


def fence_neutralise(text: str) -> str:
    """The spec's rewrite, in plain Python: the infix after the `<` of every marker (a `<`, an
    optional `/`, then `untrusted-content` in any ASCII casing). A pure insertion."""
    return _FENCE_MARKER.sub(lambda match: "<" + FENCE_INFIX + match.group(0)[1:], text)


def fence_source(tool: str) -> str:
    """`tool:NAME` with the name sanitised as the spec sanitises it."""
    name = fence_neutralise(tool).replace(">", "_").replace("\r", " ").replace("\n", " ")
    return "tool:" + name


def fence_block(tool: str, output: str) -> str:
    """The block the spec writes for `output` under `tool:NAME`, in plain Python."""
    return f"<untrusted-content source={fence_source(tool)}>\n{fence_neutralise(output)}\n{FENCE_CLOSER}"


class Fence(Scheme):
    """The fence, as the `fence` binary writes it (`fence wrap`, `fence mcp`).

    Its own rule is the spec's: a marker is a `<`, an optional `/`, then `untrusted-content` in
    any ASCII casing, whatever follows; every marker in content is neutralised; a block runs from
    the opener to the final closer. `wrap` is not used: `fence_runners` runs the binary and this
    class reads what it wrote (`parse`).
    """

    name = "fence"
    source = "this repository: docs/spec-reading.md, the `fence` binary"

    def own_markers(self, text: str) -> list[tuple[int, int]]:
        return _spans(_FENCE_MARKER, text)

    spec_markers = own_markers

    def parse(self, text: str) -> Block:
        """A block the binary wrote, read by the spec's grammar; content None when it is none."""
        opener = _FENCE_OPENER_PREFIX.match(text)
        closers = [span for span in _spans(_FENCE_MARKER, text) if text[span[0] + 1] == "/"]
        if opener is None or not closers:
            return Block(text, None)
        source_end = text.find(">", opener.end())
        newline = text.find("\n", opener.end())
        closer = closers[-1]
        if (
            source_end < 0
            or (0 <= newline < source_end)
            or text[source_end + 1 : source_end + 2] != "\n"
            or text[closer[0] :] != FENCE_CLOSER
            or closer[0] < source_end + 2
            or text[closer[0] - 1] != "\n"
        ):
            return Block(text, None)
        content = (source_end + 2, closer[0] - 1)
        return Block(text, content, ((0, source_end + 1), closer))

    def unwrap(self, block: Block) -> tuple[str | None, str] | None:
        read = self.parse(block.text)
        if read.content is None:
            return None
        opener_end = read.own[0][1]
        label = block.text[len("<untrusted-content source=") : opener_end - 1]
        return label, block.text[read.content[0] : read.content[1]]

    def lossless(self, output: str) -> str:
        return fence_neutralise(output)

    def label(self, tool: str) -> str | None:
        return fence_source(tool)


# ---------------------------------------------------------------------------------------------
# Gemini CLI: packages/core/src/utils/textUtils.ts, `wrapUntrusted`, called on MCP text blocks
# and embedded resources (tools/mcp-tool.ts), shell output (tools/shell.ts) and web fetches
# (tools/web-fetch.ts). Its only rewrite is a case-sensitive replace of the exact closer.


class GeminiCli(Scheme):
    """Gemini CLI's `<untrusted_context>` wrapping.

    Rule (read in google-gemini/gemini-cli, packages/core/src/utils/textUtils.ts): every exact
    `</untrusted_context>` in the text becomes `&lt;/untrusted_context&gt;`; the text goes
    between `<untrusted_context>\\n` and `\\n</untrusted_context>`. Each MCP text block is wrapped
    on its own. No label names the tool. Its own markers are the two tags exactly as it writes
    them.
    """

    name = "gemini-cli"
    source = "google-gemini/gemini-cli packages/core/src/utils/textUtils.ts (wrapUntrusted)"
    OPENER = "<untrusted_context>"
    CLOSER = "</untrusted_context>"
    _OWN = re.compile(r"</?untrusted_context>")
    _SPEC = re.compile(r"</?untrusted_context", re.IGNORECASE | re.ASCII)

    def wrap_text(self, text: str) -> Block:
        """One text wrapped, as `wrapUntrusted` wraps it."""
        escaped = text.replace(self.CLOSER, "&lt;/untrusted_context&gt;")
        head = self.OPENER + "\n"
        whole = head + escaped + "\n" + self.CLOSER
        closer_at = len(whole) - len(self.CLOSER)
        return Block(
            whole,
            (len(head), len(head) + len(escaped)),
            ((0, len(self.OPENER)), (closer_at, len(whole))),
        )

    def wrap(self, result: Result) -> tuple[Block, ...]:
        if result.delivery == "blocks":
            return tuple(self.wrap_text(part) for part in result.parts)
        return (self.wrap_text(result.text),)

    def own_markers(self, text: str) -> list[tuple[int, int]]:
        return _spans(self._OWN, text)

    def spec_markers(self, text: str) -> list[tuple[int, int]]:
        return _spans(self._SPEC, text)

    def unwrap(self, block: Block) -> tuple[str | None, str] | None:
        head, tail = self.OPENER + "\n", "\n" + self.CLOSER
        text = block.text
        if not text.startswith(head) or not text.endswith(tail) or len(text) < len(head) + len(tail):
            return None
        return None, text[len(head) : len(text) - len(tail)]


# ---------------------------------------------------------------------------------------------
# AgentDojo: agentdojo/agent_pipeline/agent_pipeline.py, the `spotlighting_with_delimiting`
# defence: the formatted tool output between `<<` and `>>`, nothing rewritten.


class AgentDojoDelimiting(Scheme):
    """AgentDojo's delimiting defence (spotlighting with delimiting).

    Rule (read in the agentdojo package, agent_pipeline/agent_pipeline.py, pinned in
    scripts/breakout/requirements.txt): the formatted tool output is put between `<<` and `>>`;
    nothing in it is rewritten, and the system message tells the model never to obey
    instructions between the two symbols. Its markers have no letters, so our spec's rule reads
    them as its own rule does. A tool's result is one string: blocks are joined.
    """

    name = "agentdojo-delimiting"
    source = "agentdojo 0.1.35 agent_pipeline/agent_pipeline.py (spotlighting_with_delimiting)"
    _MARKERS = re.compile(r"<<|>>")

    def wrap(self, result: Result) -> tuple[Block, ...]:
        text = result.text
        whole = "<<" + text + ">>"
        return (Block(whole, (2, 2 + len(text)), ((0, 2), (len(whole) - 2, len(whole)))),)

    def own_markers(self, text: str) -> list[tuple[int, int]]:
        return _spans(self._MARKERS, text)

    spec_markers = own_markers

    def unwrap(self, block: Block) -> tuple[str | None, str] | None:
        text = block.text
        if not text.startswith("<<") or not text.endswith(">>") or len(text) < 4:
            return None
        return None, text[2:-2]


# ---------------------------------------------------------------------------------------------
# Hermes Agent: agent/tool_dispatch_helpers.py, `_maybe_wrap_untrusted` and
# `_neutralize_delimiters`.

HERMES_NOTICE_BYTES = 265
HERMES_MIN_CHARS = 32


class HermesAgent(Scheme):
    """Hermes Agent's `<untrusted_tool_result source="…">` wrapping.

    Rule (read in NousResearch/hermes-agent, agent/tool_dispatch_helpers.py): results of web,
    browser and MCP tools (`mcp_…`) are wrapped; a string shorter than 32 characters is left as
    it is; otherwise every `untrusted_tool_result` in it, in any case (Python's `re.IGNORECASE`,
    Unicode folding included), becomes `untrusted-tool-result`, and the text goes after an
    opener naming the tool and a fixed notice, before the closer. Each text part of a content
    list is wrapped on its own, by the same rule. We run every tool as an MCP tool
    (`mcp_bench_<tool>`), which Hermes always wraps.
    """

    name = "hermes-agent"
    source = "NousResearch/hermes-agent agent/tool_dispatch_helpers.py (_maybe_wrap_untrusted)"
    CLOSER = "</untrusted_tool_result>"
    _TOKEN = re.compile(r"untrusted_tool_result", re.IGNORECASE)
    _OWN = re.compile(r"</?untrusted_tool_result", re.IGNORECASE)
    _SPEC = re.compile(r"</?untrusted_tool_result", re.IGNORECASE | re.ASCII)
    _OPENER = re.compile(r'<untrusted_tool_result source="([^"]*)">\n')
    NOTICE = _filler(HERMES_NOTICE_BYTES)

    def label(self, tool: str) -> str | None:
        return "mcp_bench_" + tool

    def wrap_text(self, name: str, text: str) -> Block:
        """One string wrapped, as `_maybe_wrap_untrusted` wraps it for an MCP tool."""
        if len(text) < HERMES_MIN_CHARS:
            return Block(text, (0, len(text)), (), wrapped=False)
        safe = self._TOKEN.sub("untrusted-tool-result", text)
        opener = f'<untrusted_tool_result source="{name}">'
        head = opener + "\n" + self.NOTICE + "\n\n"
        whole = head + safe + "\n" + self.CLOSER
        return Block(
            whole,
            (len(head), len(head) + len(safe)),
            ((0, len(opener)), (len(whole) - len(self.CLOSER), len(whole))),
        )

    def wrap(self, result: Result) -> tuple[Block, ...]:
        name = self.label(result.tool) or ""
        if result.delivery == "blocks":
            return tuple(self.wrap_text(name, part) for part in result.parts)
        return (self.wrap_text(name, result.text),)

    def own_markers(self, text: str) -> list[tuple[int, int]]:
        return _spans(self._OWN, text)

    def spec_markers(self, text: str) -> list[tuple[int, int]]:
        return _spans(self._SPEC, text)

    def unwrap(self, block: Block) -> tuple[str | None, str] | None:
        text = block.text
        opener = self._OPENER.match(text)
        if opener is None:
            return None, text  # left unwrapped: the whole text, with no label
        start = opener.end() + len(self.NOTICE) + 2
        tail = "\n" + self.CLOSER
        if not text.endswith(tail) or len(text) - len(tail) < start:
            return None
        return opener.group(1), text[start : len(text) - len(tail)]


# ---------------------------------------------------------------------------------------------
# OpenClaw: src/security/external-content.ts, `wrapExternalContent` / `wrapWebContent`, as the
# npm package openclaw@2026.9.6 ships it (dist/external-content-*.mjs).

OPENCLAW_WARNING_BYTES = 632

# Characters OpenClaw folds before looking for its markers: bracket look-alikes to `<` and `>`,
# fullwidth letters to ASCII (below), and zero-width characters and the soft hyphen dropped.
_OPENCLAW_FOLDS: dict[str, str] = {
    **{chr(code): "<" for code in (0xFF1C, 0x2329, 0x3008, 0x2039, 0x27E8, 0xFE64, 0xAB, 0x300A)},
    **{chr(code): "<" for code in (0x27EA, 0x27EC, 0x27EE, 0x276C, 0x276E, 0x2C2)},
    **{chr(code): ">" for code in (0xFF1E, 0x232A, 0x3009, 0x203A, 0x27E9, 0xFE65, 0xBB, 0x300B)},
    **{chr(code): ">" for code in (0x27EB, 0x27ED, 0x27EF, 0x276D, 0x276F, 0x2C3)},
    **{chr(code): "" for code in (0x200B, 0x200C, 0x200D, 0x2060, 0xFEFF, 0xAD)},
    **{chr(0xFF21 + i): chr(0x41 + i) for i in range(26)},
    **{chr(0xFF41 + i): chr(0x61 + i) for i in range(26)},
}
# Written with JavaScript's `\s` in mind; Python's `\s` differs only on characters the fold
# drops first (U+FEFF) or that no corpus here writes.
_OPENCLAW_MARKERS = re.compile(
    r'<<<\s*(END[\s_]+)?EXTERNAL[\s_]+UNTRUSTED[\s_]+CONTENT(?:\s+id=\\*"[^"]*")?\s*>>>',
    re.IGNORECASE | re.ASCII,
)
_OPENCLAW_HINT = re.compile(r"external[\s_]+untrusted[\s_]+content", re.IGNORECASE | re.ASCII)
_OPENCLAW_SPEC = re.compile(r"<<<(?:END_)?EXTERNAL_UNTRUSTED_CONTENT", re.IGNORECASE | re.ASCII)
# Chat-template control tokens of the public model families, which OpenClaw replaces too.
_OPENCLAW_TOKENS = re.compile(
    "|".join(
        re.escape(token)
        for token in (
            "<|im_start|>", "<|im_end|>", "<|endoftext|>", "<|begin_of_text|>", "<|end_of_text|>",
            "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>", "<|python_tag|>",
            "<|eom_id|>", "[INST]", "[/INST]", "<<SYS>>", "<</SYS>>", "<s>", "</s>",
            "<|channel|>", "<|message|>", "<|return|>", "<|call|>", "<start_of_turn>",
            "<end_of_turn>",
        )
    )
    + r"|<\|reserved_special_token_\d+\|>"
)


def openclaw_marker_spans(text: str) -> list[tuple[int, int, bool]]:
    """OpenClaw's markers in `text` by its own rule, as spans of the original text and whether
    each is an end marker: the text folded, then its two patterns, case-insensitive."""
    index: list[int] = []
    folded_chars: list[str] = []
    for position, char in enumerate(text):
        folded = char if ord(char) < 128 else _OPENCLAW_FOLDS.get(char, char)
        if folded:
            folded_chars.append(folded)
            index.append(position)
    folded = "".join(folded_chars)
    if not _OPENCLAW_HINT.search(folded):
        return []
    spans = []
    for match in _OPENCLAW_MARKERS.finditer(folded):
        start, end = match.span()
        spans.append((index[start], index[end - 1] + 1, match.group(1) is not None))
    return spans


class OpenClaw(Scheme):
    """OpenClaw's `<<<EXTERNAL_UNTRUSTED_CONTENT id="…">>>` wrapping, as for a web fetch.

    Rule (read in the npm package openclaw@2026.9.6, dist/external-content-*.mjs, built from
    src/security/external-content.ts): the text is folded (fullwidth letters, a dozen bracket
    look-alikes, zero-width characters dropped), every start or end marker it then spells (any
    case, `_` or spaces between the words, an optional `id="…"`) is replaced by a sanitised
    word, and so is each chat-template control token (`<s>`, `<|im_start|>`, …). The text goes
    after a warning, an opener carrying a random 16-hex-digit id, a `Source:` line naming the
    kind of source (here `Web Fetch`) and `---`, before the end marker with the same id. The
    label names a kind of source, never the tool. A result is one string: blocks are joined.
    """

    name = "openclaw"
    source = "openclaw@2026.9.6 (npm) dist/external-content-*.mjs (wrapWebContent, web_fetch)"
    WARNING = _filler(OPENCLAW_WARNING_BYTES)
    _OPENER = re.compile(r'<<<EXTERNAL_UNTRUSTED_CONTENT id="([0-9a-f]{16})">>>\nSource: ([^\n]*)\n---\n')

    def __init__(self, seed: int = 0) -> None:
        """The ids come from a generator seeded with `seed`, so a run can be repeated."""
        self._random = random.Random(seed)

    def sanitise(self, text: str) -> str:
        """The text as OpenClaw writes it into the block: markers, then control tokens, replaced."""
        out, cursor = [], 0
        for start, end, is_end in openclaw_marker_spans(text):
            if start < cursor:
                continue
            out.append(text[cursor:start])
            out.append("[[END_MARKER_SANITIZED]]" if is_end else "[[MARKER_SANITIZED]]")
            cursor = end
        out.append(text[cursor:])
        return _OPENCLAW_TOKENS.sub("[REMOVED_SPECIAL_TOKEN]", "".join(out))

    def wrap(self, result: Result) -> tuple[Block, ...]:
        marker_id = f"{self._random.getrandbits(64):016x}"
        sanitised = self.sanitise(result.text)
        opener = f'<<<EXTERNAL_UNTRUSTED_CONTENT id="{marker_id}">>>'
        closer = f'<<<END_EXTERNAL_UNTRUSTED_CONTENT id="{marker_id}">>>'
        prefix = self.WARNING + "\n\n\n"
        head = prefix + opener + "\nSource: Web Fetch\n---\n"
        whole = head + sanitised + "\n" + closer
        return (
            Block(
                whole,
                (len(head), len(head) + len(sanitised)),
                ((len(prefix), len(prefix) + len(opener)), (len(whole) - len(closer), len(whole))),
            ),
        )

    def own_markers(self, text: str) -> list[tuple[int, int]]:
        return [(start, end) for start, end, _ in openclaw_marker_spans(text)]

    def spec_markers(self, text: str) -> list[tuple[int, int]]:
        return _spans(_OPENCLAW_SPEC, text)

    def unwrap(self, block: Block) -> tuple[str | None, str] | None:
        text = block.text
        opener = self._OPENER.search(text)
        if opener is None:
            return None
        tail = f'\n<<<END_EXTERNAL_UNTRUSTED_CONTENT id="{opener.group(1)}">>>'
        if not text.endswith(tail) or len(text) - len(tail) < opener.end():
            return None
        return opener.group(2), text[opener.end() : len(text) - len(tail)]


def python_schemes(seed: int = 0) -> list[Scheme]:
    """The peers' schemes, in the order the table gives them."""
    return [GeminiCli(), AgentDojoDelimiting(), HermesAgent(), OpenClaw(seed)]
