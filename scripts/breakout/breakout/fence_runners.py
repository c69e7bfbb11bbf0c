"""The fence under test is the real `fence` binary: `fence wrap`, one process per result, and
`fence mcp` in front of a hostile MCP server that returns the corpus.

Nothing is fenced in Python for the measures. `schemes.Fence.parse` reads what the binary wrote.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Iterable, Iterator

from .schemes import Block, Fence, Result

CHUNK_PAUSE_SECONDS = 0.002
"""Pause between the chunks of a streamed result, so that `fence wrap` reads them apart."""

CALL_TIMEOUT_SECONDS = 60
"""How long one `fence wrap` or one `tools/call` through `fence mcp` may take before the run
stops with an error naming it."""


class FenceError(RuntimeError):
    """The `fence` binary failed in a way the benchmark cannot count as a result."""


def _wrap_one(binary: str, result: Result) -> tuple[Block, ...]:
    """`fence wrap --tool TOOL` of one result, its parts written one by one when streamed."""
    process = subprocess.Popen(
        [binary, "wrap", "--tool", result.tool],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdin is not None and process.stdout is not None and process.stderr is not None
    # `fence wrap` writes as it reads: its output is read on threads of their own while the
    # input is written, or a large result would fill both pipes and stop both processes.
    out: list[bytes] = []
    err: list[bytes] = []
    readers = [
        threading.Thread(target=lambda: out.append(process.stdout.read())),  # type: ignore[union-attr]
        threading.Thread(target=lambda: err.append(process.stderr.read())),  # type: ignore[union-attr]
    ]
    for reader in readers:
        reader.start()
    try:
        if result.delivery == "whole":
            process.stdin.write(result.text.encode())
        else:
            for part in result.parts:
                process.stdin.write(part.encode())
                process.stdin.flush()
                time.sleep(CHUNK_PAUSE_SECONDS)
        process.stdin.close()
        status = process.wait(CALL_TIMEOUT_SECONDS)
        for reader in readers:
            reader.join(CALL_TIMEOUT_SECONDS)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    if status != 0:
        raise FenceError(f"`fence wrap` exited with {status}: {b''.join(err).decode(errors='replace').strip()}")
    return (Fence().parse(b"".join(out).decode("utf-8")),)


def fence_wrap(binary: str, results: Iterable[Result], jobs: int = 2) -> Iterator[tuple[Result, tuple[Block, ...]]]:
    """Each result with the block `fence wrap` wrote for it, `jobs` processes at a time, in
    order."""
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        batch: list[Result] = []
        for result in results:
            batch.append(result)
            if len(batch) == 256:
                yield from zip(batch, pool.map(lambda r: _wrap_one(binary, r), batch))
                batch = []
        yield from zip(batch, pool.map(lambda r: _wrap_one(binary, r), batch))


class FenceMcp:
    """`fence mcp -- python3 mcp_corpus_server.py`, driven as an MCP client over stdio."""

    def __init__(self, binary: str) -> None:
        """Starts the proxy in front of the corpus server and opens the MCP session."""
        server = Path(__file__).with_name("mcp_corpus_server.py")
        self.process = subprocess.Popen(
            [binary, "mcp", "--", sys.executable, str(server)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.next_id = 0
        self.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "breakout", "version": "1"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, message: dict) -> None:
        """Writes one message to the proxy."""
        assert self.process.stdin is not None
        self.process.stdin.write((json.dumps(message) + "\n").encode())
        self.process.stdin.flush()

    def request(self, method: str, params: dict) -> dict:
        """Sends a request and returns its answer, skipping the proxy's other messages."""
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        assert self.process.stdout is not None
        while True:
            line = self.process.stdout.readline()
            if not line:
                raise FenceError(f"`fence mcp` closed its output during `{method}` (status {self.process.poll()})")
            message = json.loads(line)
            if message.get("id") == self.next_id:
                return message

    def call(self, result: Result) -> tuple[Block, ...]:
        """The blocks the proxy hands the client for one result: one per text content block."""
        answer = self.request(
            "tools/call",
            {"name": result.tool, "arguments": {"parts": list(result.parts), "blocks": result.delivery == "blocks"}},
        )
        if "result" not in answer:
            raise FenceError(f"`fence mcp` answered a call with {answer.get('error')}")
        fence = Fence()
        return tuple(fence.parse(item["text"]) for item in answer["result"]["content"])

    def close(self) -> None:
        """Ends the proxy (and with it the server)."""
        if self.process.stdin:
            self.process.stdin.close()
        try:
            self.process.wait(CALL_TIMEOUT_SECONDS)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def fence_mcp(binary: str, results: Iterable[Result]) -> Iterator[tuple[Result, tuple[Block, ...]]]:
    """Each result with the blocks `fence mcp` handed the client for it, in order."""
    proxy = FenceMcp(binary)
    try:
        for result in results:
            yield result, proxy.call(result)
    finally:
        proxy.close()
