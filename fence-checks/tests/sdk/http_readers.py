"""Makes each request of a plan with the official Python SDK's Streamable HTTP transport, and
prints what the transport handed on, for `tests/checks/http_readers.rs`.

    python http_readers.py PLAN.json

Run with the Python of the SDK tests' virtual environment (scripts/sdk-setup.sh makes it). PLAN
is `{"cases": [{"name": ..., "url": ..., "request": {"kind": "post", "body": "..."} |
{"kind": "get"} | {"kind": "resume", "last_event_id": "...", "body": "..." | null}}]}`. Every case
runs at once, each with a transport of its own, driven where the SDK drives it:
`_handle_post_request` for a POST (a session id set, but for `initialize`), `handle_get_stream`
for the GET stream (and for a resumed one: the SDK resumes only its own), `_handle_reconnection`
for a request's resumed stream. A reconnection is recorded, not made. One JSON object is printed:
`{"cases": {NAME: {"items": [...], "reconnects": ID | null | absent}}}`, where each item is
`{"message": ...}` (a message the transport handed its session, dumped as the session reads it)
or `{"reported": TEXT}` (an exception it handed its session).
"""

import json
import sys

import anyio
import httpx2
import mcp.client.streamable_http as transport_module
from mcp.client.streamable_http import RequestContext, StreamableHTTPTransport
from mcp.shared._context_streams import create_context_streams
from mcp.shared.message import SessionMessage
from mcp_types import JSONRPCRequest, jsonrpc_message_adapter

CASE_TIMEOUT = 10
EXHAUSTED = "SSE stream ended and reconnection attempts were exhausted"

# Reconnect at once, and record the reconnection rather than make it.
transport_module.DEFAULT_RECONNECTION_DELAY_MS = 0
_real_sse_within_origin = transport_module.sse_within_origin
# The URL of every case whose first request has been made, and the reconnections recorded.
_opened: set[str] = set()
_reconnects: dict[str, str | None] = {}


class Reconnecting(Exception):
    """Raised where the transport would open its stream again."""


def _sse_within_origin(client, url, *, headers=None, max_event_size=1024 * 1024):
    if url in _opened:
        _reconnects.setdefault(url, (headers or {}).get("last-event-id"))
        raise Reconnecting(url)
    _opened.add(url)
    return _real_sse_within_origin(client, url, headers=headers, max_event_size=max_event_size)


transport_module.sse_within_origin = _sse_within_origin


def item(received):
    if isinstance(received, Exception):
        return {"reported": str(received)}
    return {"message": received.message.model_dump(mode="json", by_alias=True, exclude_unset=True)}


async def run_case(client, case):
    url = case["url"]
    request = case["request"]
    transport = StreamableHTTPTransport(url)
    writer, reader = create_context_streams[SessionMessage | Exception](1000)
    message = None
    if request.get("body") is not None:
        try:
            message = jsonrpc_message_adapter.validate_json(request["body"], by_name=False)
        except Exception:  # noqa: BLE001 - a body the SDK cannot send: nothing to read
            return {"items": []}
    is_request = isinstance(message, JSONRPCRequest)
    if not (is_request and message.method == "initialize"):
        transport.session_id = "session"
    outcome = {"items": []}
    async with reader:
        if request["kind"] == "post":
            _opened.add(url)
            ctx = RequestContext(client, transport.session_id, SessionMessage(message), None, writer)
            await transport._handle_post_request(ctx)
        elif request["kind"] == "get" or message is None:
            await transport.handle_get_stream(client, writer)
        elif is_request:
            ctx = RequestContext(client, transport.session_id, SessionMessage(message), None, writer)
            await transport._handle_reconnection(ctx, request["last_event_id"], None, 0)
        await writer.aclose()
        async for received in reader:
            outcome["items"].append(item(received))
    if url in _reconnects:
        outcome["reconnects"] = _reconnects[url]
        outcome["items"] = [
            each
            for each in outcome["items"]
            if each.get("message", {}).get("error", {}).get("message") != EXHAUSTED
        ]
    return outcome


async def main():
    with open(sys.argv[1], encoding="utf-8") as plan_file:
        plan = json.load(plan_file)
    results = {}

    async def one(client, case):
        try:
            with anyio.fail_after(CASE_TIMEOUT):
                results[case["name"]] = await run_case(client, case)
        except Exception as err:  # noqa: BLE001 - reported, for the test to show
            results[case["name"]] = {"items": [{"driver_failed": f"{type(err).__name__}: {err}"}]}

    async with httpx2.AsyncClient(timeout=CASE_TIMEOUT) as client:
        async with anyio.create_task_group() as tg:
            for case in plan["cases"]:
                tg.start_soon(one, client, case)
    json.dump({"cases": results}, sys.stdout, ensure_ascii=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    anyio.run(main)
