// Resumes a tool call's stream with the official TypeScript SDK's client, and prints what it
// handed back.
//
//     node resume_driver.mjs URL
//
// The SDK is loaded as http_driver.mjs loads it. The driver connects with
// `StreamableHTTPClientTransport`, calls `fetch` once, keeping the event ids its stream named
// (the SDK's `onresumptiontoken`), then calls `fetch` again with `resumptionToken` set to the
// first of them: the SDK then sends no POST, but resumes the first call's stream (a GET with
// `Last-Event-ID`), and takes the first answer the server sends again on it as the second
// call's. It prints one JSON object on stdout: `tokens`, `first` and `resumed` (each the result,
// or `{"error": {"type": …, "message": …}}`), and `logged`, every error the SDK passed to
// `Client.onerror`. Every request waits at most TIMEOUT_MS.

import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const sdkDir = join(process.env.FENCE_SDK_DIR || join(here, '..', '..', '..', 'target', 'sdk-clients'), 'node');
const require = createRequire(join(sdkDir, 'package.json'));
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StreamableHTTPClientTransport } = require('@modelcontextprotocol/sdk/client/streamableHttp.js');

const TIMEOUT_MS = 5_000;

function failure(err) {
    return { error: { type: err?.constructor?.name ?? typeof err, message: String(err?.message ?? err) } };
}

async function main() {
    const url = process.argv[2];
    if (!url) {
        console.error('usage: resume_driver.mjs URL');
        process.exit(2);
    }
    const report = { tokens: [], logged: [] };
    const client = new Client({ name: 'fence-sdk-tests', version: '1.0.0' });
    client.onerror = (err) => report.logged.push(String(err));
    const transport = new StreamableHTTPClientTransport(new URL(url));
    await client.connect(transport, { timeout: TIMEOUT_MS });
    const call = { name: 'fetch', arguments: {} };
    try {
        report.first = await client.callTool(call, undefined, {
            timeout: TIMEOUT_MS,
            onresumptiontoken: (token) => report.tokens.push(token),
        });
    } catch (err) {
        report.first = failure(err);
    }
    try {
        report.resumed = await client.callTool(call, undefined, {
            timeout: TIMEOUT_MS,
            resumptionToken: report.tokens[0],
        });
    } catch (err) {
        report.resumed = failure(err);
    }
    await client.close();
    process.stdout.write(JSON.stringify(report) + '\n');
}

main().catch((err) => {
    console.error(err?.stack ?? String(err));
    process.exit(1);
});
