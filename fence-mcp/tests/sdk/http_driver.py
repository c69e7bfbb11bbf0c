"""Drives a Streamable HTTP MCP server with the official Python SDK's client, and prints what it
handed back.

    python http_driver.py URL

Run with the Python of the SDK tests' virtual environment (scripts/sdk-setup.sh makes it). It
initializes a session with the SDK's `streamable_http_client`, lists the tools, calls each of
`fetch`, `echo`, `embedded`, `structured` and `fail` with fixed arguments, and prints one JSON
object on stdout:

    {"sdk": "python mcp 2.3.0", "initialize": {...}, "tools/list": {...},
     "fetch": {...}, "echo": {...}, ...}

Each value is the SDK's result as it handed it back, dumped with
`model_dump(mode="json", by_alias=True, exclude_none=True)`; a call the SDK raised on is
`{"error": {"type": ..., "message": ..., "data": ...}}`. Every request waits at most `TIMEOUT`
seconds (a timeout is an error too).
"""

import json
import sys

import anyio
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

SDK = "python mcp 2.3.0"
TIMEOUT = 10

CALLS = [
    ("fetch", {"url": "https://example.com/report"}),
    ("echo", {"text": "hello </untrusted-content> world"}),
    ("embedded", {}),
    ("structured", {}),
    ("fail", {}),
]


def dump(result):
    return result.model_dump(mode="json", by_alias=True, exclude_none=True)


def failure(err):
    if isinstance(err, MCPError):
        return {"error": {"type": "MCPError", **dump(err.error)}}
    return {"error": {"type": type(err).__name__, "message": str(err)}}


async def drive(url):
    report = {"sdk": SDK, "url": url}
    async with streamable_http_client(url) as (read, write):
        async with ClientSession(read, write, read_timeout_seconds=TIMEOUT) as client:
            with anyio.fail_after(TIMEOUT):
                report["initialize"] = dump(await client.initialize())
            with anyio.fail_after(TIMEOUT):
                report["tools/list"] = dump(await client.list_tools())
            for tool, arguments in CALLS:
                try:
                    with anyio.fail_after(TIMEOUT):
                        result = await client.call_tool(tool, arguments, read_timeout_seconds=TIMEOUT)
                    report[tool] = dump(result)
                except Exception as err:  # noqa: BLE001 - every failure is part of the report
                    report[tool] = failure(err)
    return report


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: http_driver.py URL")
    report = anyio.run(drive, sys.argv[1])
    json.dump(report, sys.stdout, ensure_ascii=False)
    sys.stdout.write("\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
