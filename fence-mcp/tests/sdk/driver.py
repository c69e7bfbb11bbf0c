"""Drives MCP servers with the official Python SDK's client, and prints what it handed back.

    python driver.py PLAN.json

Run with the Python of the SDK tests' virtual environment (scripts/sdk-setup.sh makes it). The
plan names the sessions to run, each a server command (a server itself, or `fence mcp -- …` in
front of it) spoken to on stdio with `stdio_client`, or a Streamable HTTP server's URL (a server
itself, or `fence mcp --listen …` in front of it) spoken to with `streamable_http_client`, and the
operations to make once the session is initialized:

    {"timeout": 5, "concurrency": 4, "sessions": [
        {"label": "…", "command": ["fence", "mcp", "--", "python3", "hostile_server.py", "control"],
         "ops": [{"op": "call", "tool": "fetch", "arguments": {}}]},
        {"label": "…", "url": "http://127.0.0.1:PORT/mcp", "ops": [...]}]}

The report on stdout is one JSON object, `{"sdk": …, "sessions": [...]}`, and each session (its
`stderr` is the server's, empty for a URL):

    {"label": …, "connect_error": text or null, "logged": [texts], "stderr": text,
     "ops": [{"op": "call", "tool": …, "outcome": "result" | "error" | "timeout",
              "texts": [...], "strings": [...], "is_error": bool, "error": {"message": …, "strings": [...]}}]}

`texts` are the content blocks' `text` and the embedded resources' `text`, as the SDK's result
holds them; `strings` are every other string of the result (keys too): `structuredContent`,
unknown members, a 2024 `toolResult`. `error` is a raised error: its message, and every string
of its data. `logged` holds the text of every error the SDK delivered to the session's message
handler or logged at WARNING or above while the session ran. A lone UTF-16 surrogate, which no
UTF-8 text can carry, is written as U+FFFD (and counted in `lone_surrogates`).
"""

import contextvars
import json
import logging
import re
import sys
import tempfile
import traceback

import anyio
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp_types import REQUEST_TIMEOUT

SDK = "python mcp 2.3.0"
SURROGATE = re.compile("[\ud800-\udfff]")
CURRENT = contextvars.ContextVar("current_session", default=None)


class Session:
    def __init__(self, label):
        self.label = label
        self.logged = []
        self.lone_surrogates = 0

    def clean(self, text):
        """The text as UTF-8 can carry it: a lone surrogate becomes U+FFFD."""
        text = str(text)
        found = len(SURROGATE.findall(text))
        if found:
            self.lone_surrogates += found
            text = SURROGATE.sub("\ufffd", text)
        return text

    def strings(self, value, into):
        """Every string in a JSON-like value, object keys included."""
        if isinstance(value, str):
            into.append(self.clean(value))
        elif isinstance(value, dict):
            for key, item in value.items():
                into.append(self.clean(key))
                self.strings(item, into)
        elif isinstance(value, (list, tuple)):
            for item in value:
                self.strings(item, into)
        return into


class Collect(logging.Handler):
    """Logs of WARNING and above, credited to the session whose task logged them."""

    def emit(self, record):
        session = CURRENT.get()
        if session is None:
            return
        text = record.getMessage()
        if record.exc_info:
            text += "\n" + "".join(traceback.format_exception(*record.exc_info))
        session.logged.append(session.clean(text))


def error_report(session, exc):
    if isinstance(exc, MCPError):
        strings = session.strings(exc.error.data, []) if exc.error.data is not None else []
        return {"code": exc.error.code, "message": session.clean(exc.error.message), "strings": strings}
    return {"code": None, "message": session.clean("%s: %s" % (type(exc).__name__, exc)), "strings": []}


def result_report(session, result):
    dumped = result.model_dump(mode="json", by_alias=True, exclude_none=True)
    texts, strings = [], []
    for block in dumped.pop("content", None) or []:
        rest = dict(block)
        if rest.get("type") == "text" and isinstance(rest.get("text"), str):
            texts.append(session.clean(rest.pop("text")))
        elif rest.get("type") == "resource" and isinstance(rest.get("resource"), dict):
            resource = dict(rest.pop("resource"))
            if isinstance(resource.get("text"), str):
                texts.append(session.clean(resource.pop("text")))
            session.strings(resource, strings)
        session.strings(rest, strings)
    is_error = bool(dumped.pop("isError", False))
    session.strings(dumped, strings)
    return {"outcome": "result", "texts": texts, "strings": strings, "is_error": is_error}


async def run_op(session, client, op, timeout):
    report = {"op": op["op"], "tool": op.get("tool")}
    if op["op"] != "call":
        report.update(outcome="unsupported", note="the Python SDK's client has no API for %s" % op["op"])
        return report
    try:
        with anyio.fail_after(timeout + 2):
            result = await client.call_tool(op["tool"], op.get("arguments") or {}, read_timeout_seconds=timeout)
    except MCPError as exc:
        if exc.error.code == REQUEST_TIMEOUT:
            report["outcome"] = "timeout"
        else:
            report.update(outcome="error", error=error_report(session, exc))
        return report
    except TimeoutError:
        report["outcome"] = "timeout"
        return report
    except Exception as exc:  # the SDK raised something else: what it says is what a caller sees
        report.update(outcome="error", error=error_report(session, exc))
        return report
    report.update(result_report(session, result))
    return report


async def run_session(spec, timeout):
    session = Session(spec["label"])
    CURRENT.set(session)
    report = {"label": spec["label"], "connect_error": None, "ops": []}

    async def on_message(message):
        if isinstance(message, Exception):
            session.logged.append(session.clean("%s: %s" % (type(message).__name__, message)))

    with tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace") as errlog:
        if "url" in spec:
            transport = streamable_http_client(spec["url"])
        else:
            command = spec["command"]
            params = StdioServerParameters(command=command[0], args=command[1:], env=spec.get("env"))
            transport = stdio_client(params, errlog=errlog)
        try:
            with anyio.fail_after(timeout * (len(spec["ops"]) + 3) + 10):
                async with transport as (read, write):
                    async with ClientSession(read, write, read_timeout_seconds=timeout, message_handler=on_message) as client:
                        try:
                            await client.initialize()
                            # Listed first, so the SDK knows each tool's output schema before a
                            # call and never asks for the list again mid-call.
                            await client.list_tools()
                        except Exception as exc:
                            report["connect_error"] = error_report(session, exc)["message"]
                        else:
                            for op in spec["ops"]:
                                report["ops"].append(await run_op(session, client, op, timeout))
        except Exception as exc:
            if report["connect_error"] is None and not report["ops"]:
                report["connect_error"] = error_report(session, exc)["message"]
            else:
                session.logged.append(error_report(session, exc)["message"])
        errlog.seek(0)
        report["stderr"] = errlog.read()
    report["logged"] = session.logged
    report["lone_surrogates"] = session.lone_surrogates
    return report


async def main(plan):
    timeout = float(plan.get("timeout", 5))
    limit = anyio.Semaphore(int(plan.get("concurrency", 4)))
    reports = [None] * len(plan["sessions"])

    async def one(index, spec):
        async with limit:
            reports[index] = await run_session(spec, timeout)

    async with anyio.create_task_group() as group:
        for index, spec in enumerate(plan["sessions"]):
            group.start_soon(one, index, spec)
    return {"sdk": SDK, "sessions": reports}


if __name__ == "__main__":
    logging.getLogger().addHandler(Collect(level=logging.WARNING))
    logging.getLogger().setLevel(logging.WARNING)
    with open(sys.argv[1], encoding="utf-8") as file:
        plan = json.load(file)
    report = anyio.run(main, plan)
    json.dump(report, sys.stdout)
    sys.stdout.write("\n")
