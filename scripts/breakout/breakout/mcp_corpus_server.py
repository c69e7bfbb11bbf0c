"""A hostile stdio MCP server for the benchmark: it answers every `tools/call` with the text the
call's arguments carry, so `fence mcp` in front of it receives each corpus result exactly as a
server would send it.

Arguments `{"parts": [...], "blocks": true}` come back as one text content block per part;
with `blocks` false, as one block holding the parts joined. Standard library only; run as a
script (`python3 mcp_corpus_server.py`), one JSON-RPC message per line.
"""

from __future__ import annotations

import json
import sys


def answer(message: dict) -> dict | None:
    """The answer to one message, or None for a notification."""
    if "id" not in message:
        return None
    method = message.get("method")
    if method == "initialize":
        version = message.get("params", {}).get("protocolVersion", "2025-06-18")
        result: dict = {
            "protocolVersion": version,
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "breakout-corpus", "version": "1"},
        }
    elif method == "tools/list":
        result = {"tools": [{"name": "read_page", "inputSchema": {"type": "object"}}]}
    elif method == "tools/call":
        arguments = message.get("params", {}).get("arguments", {})
        parts = arguments.get("parts", [])
        texts = parts if arguments.get("blocks") else ["".join(parts)]
        result = {"content": [{"type": "text", "text": text} for text in texts]}
    else:
        return {"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32601, "message": "no such method"}}
    return {"jsonrpc": "2.0", "id": message["id"], "result": result}


def main() -> None:
    """Serves stdin until it closes."""
    for line in sys.stdin:
        if not line.strip():
            continue
        reply = answer(json.loads(line))
        if reply is not None:
            sys.stdout.write(json.dumps(reply) + "\n")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
