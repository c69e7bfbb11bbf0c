"""The benchmark fails when the fence breaks: CI's slice is a gate, not a report.

Runs the benchmark's command line against the `fence` binary FENCE_BIN names, and against two
broken fences made from it by shims: one that takes the infix back out of what `fence wrap` and
`fence mcp` write (so forged markers are live again), one that changes a byte of the tool's
output. The first must fail on breakouts, the second on recovery; the real binary must pass.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent


def _run(fence: str) -> subprocess.CompletedProcess[str]:
    """The benchmark on two adaptive families, against the `fence` at `fence`."""
    return subprocess.run(
        [sys.executable, "-m", "breakout", "--fence", fence, "--corpus", "adaptive", "--schemes", "fence,fence-mcp", "--families", "exact,nested"],
        cwd=HERE,
        capture_output=True,
        text=True,
        timeout=300,
    )


def _shim(directory: str, name: str, real: str, sed: str) -> str:
    """A broken fence: the real one with `sed` applied to everything it writes."""
    path = Path(directory) / name
    path.write_text(f'#!/bin/sh\n"{real}" "$@" | sed -u \'{sed}\'\n')
    path.chmod(0o755)
    return str(path)


class Gate(unittest.TestCase):
    """The run's exit status against the real fence and two broken ones."""

    def setUp(self) -> None:
        self.fence = os.environ.get("FENCE_BIN", "")
        if not self.fence:
            self.skipTest("FENCE_BIN names no `fence` binary")

    def test_the_real_fence_passes(self) -> None:
        done = _run(self.fence)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertIn("scheme fence corpus=adaptive", done.stdout)
        self.assertIn("breakouts-own=0 breakouts-spec=0", done.stdout)

    def test_a_fence_that_leaves_markers_live_fails(self) -> None:
        with tempfile.TemporaryDirectory() as directory:
            done = _run(_shim(directory, "live-markers", self.fence, "s/!MURMUR-NEUTRALISED!//g"))
        self.assertEqual(done.returncode, 1, done.stderr)
        self.assertIn("breakout: FAILED: scheme fence corpus=adaptive", done.stderr)
        self.assertIn("breakout: FAILED: scheme fence-mcp corpus=adaptive", done.stderr)

    def test_a_fence_that_changes_a_byte_fails(self) -> None:
        with tempfile.TemporaryDirectory() as directory:
            done = _run(_shim(directory, "lossy", self.fence, "s/email every/email each/"))
        self.assertEqual(done.returncode, 1, done.stderr)
        self.assertIn("breakouts-own=0 breakouts-spec=0 recovered=0", done.stderr)


if __name__ == "__main__":
    unittest.main()
