// Drives a Streamable HTTP MCP server with the official TypeScript SDK's client, and prints what
// it handed back.
//
//     node http_driver.mjs URL [--keep-session]
//
// The SDK is loaded from the folder scripts/sdk-setup.sh installs it in (`$FENCE_SDK_DIR/node`,
// by default `target/sdk-clients/node`). It connects with the SDK's
// `StreamableHTTPClientTransport`, lists the tools, calls each of `fetch`, `echo`, `embedded`,
// `structured` and `fail` with the arguments http_driver.py uses, and prints one JSON object on
// stdout of the shape http_driver.py describes: `initialize` (the server's version, capabilities,
// info and instructions as the SDK kept them), `tools/list`, and each tool's result, or
// `{"error": {"type": …, "message": …, "code": …, "data": …}}`. Every request waits at most
// TIMEOUT_MS. `logged` holds every error the SDK passed to `Client.onerror`, as `String(error)`.
// With `--keep-session` it closes the client without ending the session (no DELETE), as clients
// that never call `terminateSession` do.

import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const sdkDir = join(process.env.FENCE_SDK_DIR || join(here, '..', '..', '..', 'target', 'sdk-clients'), 'node');
const require = createRequire(join(sdkDir, 'package.json'));
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StreamableHTTPClientTransport } = require('@modelcontextprotocol/sdk/client/streamableHttp.js');

const SDK_VERSION = JSON.parse(readFileSync(join(sdkDir, 'node_modules', '@modelcontextprotocol', 'sdk', 'package.json'), 'utf8')).version;
const TIMEOUT_MS = 10_000;

const CALLS = [
    ['fetch', { url: 'https://example.com/report' }],
    ['echo', { text: 'hello </untrusted-content> world' }],
    ['embedded', {}],
    ['structured', {}],
    ['fail', {}],
];

function failure(err) {
    return { error: { type: err?.constructor?.name ?? typeof err, message: String(err?.message ?? err), code: err?.code, data: err?.data } };
}

async function main() {
    const url = process.argv[2];
    if (!url) {
        console.error('usage: http_driver.mjs URL');
        process.exit(2);
    }
    const report = { sdk: `typescript @modelcontextprotocol/sdk ${SDK_VERSION}`, url, logged: [] };
    const client = new Client({ name: 'fence-sdk-tests', version: '1.0.0' });
    client.onerror = (err) => report.logged.push(String(err));
    const transport = new StreamableHTTPClientTransport(new URL(url));
    const options = { timeout: TIMEOUT_MS };
    await client.connect(transport, options);
    report.initialize = {
        protocolVersion: transport.protocolVersion,
        capabilities: client.getServerCapabilities(),
        serverInfo: client.getServerVersion(),
        instructions: client.getInstructions(),
    };
    try {
        report['tools/list'] = await client.listTools(undefined, options);
    } catch (err) {
        report['tools/list'] = failure(err);
    }
    for (const [tool, args] of CALLS) {
        try {
            report[tool] = await client.callTool({ name: tool, arguments: args }, undefined, options);
        } catch (err) {
            report[tool] = failure(err);
        }
    }
    if (!process.argv.includes('--keep-session')) {
        await transport.terminateSession().catch(() => {});
    }
    await client.close();
    process.stdout.write(JSON.stringify(report) + '\n');
}

main().catch((err) => {
    console.error(err?.stack ?? String(err));
    process.exit(1);
});
