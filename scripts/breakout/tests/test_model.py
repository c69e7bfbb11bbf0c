"""`scripts/breakout/run model` end to end, against a scripted local OpenAI-compatible endpoint.

The endpoint answers a user's message with a call to `read_file` on the bill AgentDojo's banking
suite injects, and a tool's result with a final answer. Every request it receives is kept, so
the test reads exactly what each defence handed the "model": the raw result, AgentDojo's
`<<` … `>>`, or the fence's block with the rule in the system message.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import tempfile
import threading
import unittest
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class ScriptedEndpoint(BaseHTTPRequestHandler):
    """POST …/chat/completions: a canned reply; every request body kept in `requests`."""

    requests: list[dict] = []

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).requests.append(body)
        last = body["messages"][-1]
        tools = {tool["function"]["name"] for tool in body.get("tools", [])}
        message: dict = {"role": "assistant", "content": "Done."}
        finish = "stop"
        if last["role"] == "user" and "read_file" in tools:
            message = {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": f"call_{len(type(self).requests)}",
                        "type": "function",
                        "function": {"name": "read_file", "arguments": json.dumps({"file_path": "bill-december-2023.txt"})},
                    }
                ],
            }
            finish = "tool_calls"
        reply = {
            "id": "scripted",
            "object": "chat.completion",
            "created": 0,
            "model": body["model"],
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args) -> None:  # noqa: ANN002 (quiet)
        pass


class Model(unittest.TestCase):
    """`run model` against the scripted endpoint."""

    def setUp(self) -> None:
        self.fence = os.environ.get("FENCE_BIN", "")
        if not self.fence:
            self.skipTest("FENCE_BIN names no `fence` binary")
        try:
            import agentdojo  # noqa: F401
        except ImportError:
            self.skipTest("agentdojo is not installed (scripts/breakout/run installs it)")
        ScriptedEndpoint.requests = []
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), ScriptedEndpoint)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def tearDown(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def test_each_defence_hands_the_model_its_blocks(self) -> None:
        from breakout import agentdojo_model

        out = io.StringIO()
        with tempfile.TemporaryDirectory() as logdir, contextlib.redirect_stdout(out):
            status = agentdojo_model.main(
                [
                    "--fence", self.fence,
                    "--base-url", f"http://127.0.0.1:{self.server.server_port}/v1",
                    "--model", "scripted",
                    "--api-key-env", "BREAKOUT_TEST_NO_KEY",
                    "--suites", "banking",
                    "--user-tasks", "user_task_0",
                    "--injection-tasks", "injection_task_0",
                    "--logdir", logdir,
                ]
            )
        self.assertEqual(status, 0)
        lines = out.getvalue().splitlines()
        for defence in ("none", "delimiting", "fence"):
            self.assertTrue(any(f"defence={defence} suite=banking" in line and "runs=1" in line for line in lines), lines)

        seen = {"none": 0, "delimiting": 0, "fence": 0}
        for request in ScriptedEndpoint.requests:
            system = request["messages"][0]["content"]
            system = system if isinstance(system, str) else "".join(part["text"] for part in system)
            defence = "fence" if agentdojo_model.FENCE_RULE.strip() in system else "delimiting" if "<<" in system else "none"
            for message in request["messages"]:
                if message["role"] != "tool":
                    continue
                content = message["content"]
                text = content if isinstance(content, str) else "".join(part["text"] for part in content)
                seen[defence] += 1
                if defence == "fence":
                    self.assertTrue(text.startswith("<untrusted-content source=tool:read_file>\n"), text[:80])
                    self.assertTrue(text.endswith("\n</untrusted-content>"), text[-80:])
                elif defence == "delimiting":
                    self.assertTrue(text.startswith("<<") and text.endswith(">>"), text[:80])
                else:
                    self.assertFalse(text.startswith(("<untrusted-content", "<<")), text[:80])
        self.assertTrue(all(seen.values()), seen)
        injected = [
            message
            for request in ScriptedEndpoint.requests
            for message in request["messages"]
            if message["role"] == "tool" and "<INFORMATION>" in json.dumps(message)
        ]
        self.assertTrue(injected, "the bill the tool read carries the attack")


if __name__ == "__main__":
    unittest.main()
