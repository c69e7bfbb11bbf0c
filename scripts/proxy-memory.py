#!/usr/bin/env python3
"""The proxy's peak memory on one large tool result, by hand.

    cargo build --release -p fence-cli && cargo build --release -p fence-mcp --example mcp_test_server
    python3 scripts/proxy-memory.py [--bytes 10000000]

For each shape — `fence mcp -- SERVER` (stdio), `fence mcp --url URL` (a stdio client, the
server over Streamable HTTP) and `fence mcp --listen ADDR --url URL` (HTTP on both sides) — it
starts the test server and the proxy, initializes a session, calls the tool `big` once for a
result of BYTES bytes of text, and reads the proxy's peak resident set (`VmHWM` in
/proc/PID/status, the figure `/usr/bin/time -v` calls "Maximum resident set size", read from the
proxy's own process so that the test server, its child in the stdio shape, does not count) after
a small call and after the large one. The floor: at most 1.5 times the message plus 16 MiB.
"""

import argparse
import http.client
import json
import os
import subprocess
import sys
import time
from urllib.parse import urlparse

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROFILE = os.environ.get("FENCE_PROFILE", "release")
FENCE = os.path.join(REPO, "target", PROFILE, "fence")
SERVER = os.path.join(REPO, "target", PROFILE, "examples", "mcp_test_server")

INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "proxy-memory", "version": "1"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def call(id_, tool, arguments):
    return {"jsonrpc": "2.0", "id": id_, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}


def peak_kib(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    raise RuntimeError("no VmHWM")


def listening(process, stream, prefix):
    """The URL a process names on its first line starting with `prefix`."""
    deadline = time.time() + 30
    while time.time() < deadline:
        line = stream.readline().decode()
        if not line:
            break
        if prefix in line:
            return line.split(prefix, 1)[1].strip()
    process.kill()
    sys.exit(f"no line with {prefix!r}")


class Stdio:
    """A stdio client of a proxy process, one JSON-RPC line at a time."""

    def __init__(self, args):
        self.process = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def ask(self, message):
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        self.process.stdin.flush()
        if "id" not in message:
            return None
        return json.loads(self.process.stdout.readline())

    def close(self):
        self.process.stdin.close()
        self.process.wait(10)


class Http:
    """A Streamable HTTP client of a listening proxy (JSON answers asked for)."""

    def __init__(self, url):
        parsed = urlparse(url)
        self.connection = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=60)
        self.path = parsed.path
        self.session = None

    def ask(self, message):
        headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        if self.session:
            headers["Mcp-Session-Id"] = self.session
        self.connection.request("POST", self.path, json.dumps(message), headers)
        response = self.connection.getresponse()
        self.session = response.getheader("Mcp-Session-Id") or self.session
        body = response.read()
        if "id" not in message:
            return None
        if response.getheader("Content-Type", "").startswith("text/event-stream"):
            for event in body.split(b"\n\n"):
                data = b"\n".join(line[5:].lstrip(b" ") for line in event.splitlines() if line.startswith(b"data:"))
                if data.strip():
                    return json.loads(data)
        return json.loads(body)


def measure(shape, size):
    server = None
    if shape == "stdio":
        client = Stdio([FENCE, "mcp", "--", SERVER])
        proxy = client.process
    else:
        server = subprocess.Popen([SERVER, "--http", "127.0.0.1:0"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        url = listening(server, server.stdout, "listening ")
        if shape == "url":
            client = Stdio([FENCE, "mcp", "--url", url])
            proxy = client.process
        else:
            proxy = subprocess.Popen(
                [FENCE, "mcp", "--listen", "127.0.0.1:0", "--url", url], stdin=subprocess.DEVNULL, stderr=subprocess.PIPE
            )
            client = Http(listening(proxy, proxy.stderr, "listening on "))
    try:
        client.ask(INIT)
        client.ask(INITIALIZED)
        client.ask(call(2, "echo", {"text": "hello"}))
        small = peak_kib(proxy.pid)
        answer = client.ask(call(3, "big", {"bytes": size}))
        text = answer["result"]["content"][0]["text"]
        assert text.startswith("<untrusted-content source=tool:big>"), text[:80]
        big = peak_kib(proxy.pid)
    finally:
        if isinstance(client, Stdio):
            client.close()
        else:
            proxy.terminate()
            proxy.wait(10)
        if server:
            server.stdin.close()
            server.kill()
            server.wait(10)
    return small, big


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bytes", type=int, default=10_000_000)
    args = parser.parse_args()
    floor_kib = (1.5 * args.bytes + 16 * 2**20) / 1024
    print(f"| shape | peak after a small call | peak after a {args.bytes / 1e6:g} MB result | floor |")
    print("|---|---:|---:|---:|")
    ok = True
    for shape in ["stdio", "url", "listen"]:
        small, big = measure(shape, args.bytes)
        ok &= big <= floor_kib
        print(f"| {shape} | {small / 1024:.1f} MiB | {big / 1024:.1f} MiB | {floor_kib / 1024:.1f} MiB |")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
