// An MCP client for the official conformance suite's client scenarios
// (`@modelcontextprotocol/conformance` 0.1.16, `conformance client --command …`), written on the
// official TypeScript SDK's `Client`, for fence-mcp's conformance test: directly, or through
// `fence mcp`.
//
//     node conformance_client.mjs [--fence FENCE --shape stdio|listen] URL
//
// The suite runs the command with the scenario's server URL last and the scenario's name in
// `MCP_CONFORMANCE_SCENARIO`. Without `--fence` the client speaks Streamable HTTP to URL itself
// (the SDK's `StreamableHTTPClientTransport`). With `--shape stdio` it speaks stdio to
// `FENCE mcp --url URL`, run as its child (the SDK's `StdioClientTransport`); with
// `--shape listen` it starts `FENCE mcp --listen 127.0.0.1:0 --url URL`, reads the address the
// proxy names on stderr, speaks Streamable HTTP to it, and ends the proxy when it is done. The
// proxy's stderr is passed on to the client's, which the suite keeps in `stderr.txt`.
//
// Each scenario it knows, by name (the suite's scenario descriptions say what each checks):
//
// - `initialize`: connects (the handshake is the scenario) and lists the tools;
// - `tools_call`: lists the tools and calls `add_numbers`;
// - `elicitation-sep1034-client-defaults`: declares form elicitation with defaults applied (the
//   SDK's `applyDefaults`), accepts every elicitation with no content, so the SDK fills in
//   each default, and calls `test_client_elicitation_defaults` once its GET stream is open:
//   the scenario's server sends its elicitation there, and drops it when no GET stream is open
//   (the SDK's transport opens it as the handshake ends, but does not wait for it; through
//   `fence mcp --url`, the proxy opens it before it passes the client's next message on);
// - `sse-retry`: calls `test_reconnection`, whose stream the server closes after a `retry`
//   field: the transport must wait that long and resume the stream with `Last-Event-ID`.
//
// Any other scenario (the OAuth ones: this client runs no OAuth flow) gets what `initialize`
// does, so the suite sees a client without OAuth. The client exits 0 when every request it made
// was answered, else 1 with the error on stderr. Every request waits at most TIMEOUT_MS.

import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const sdkDir = join(process.env.FENCE_SDK_DIR || join(here, '..', '..', '..', 'target', 'sdk-clients'), 'node');
const require = createRequire(join(sdkDir, 'package.json'));
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StreamableHTTPClientTransport } = require('@modelcontextprotocol/sdk/client/streamableHttp.js');
const { StdioClientTransport } = require('@modelcontextprotocol/sdk/client/stdio.js');
const { ElicitRequestSchema } = require('@modelcontextprotocol/sdk/types.js');

/// How long a request may wait for its answer: long, for a loaded machine, but short of the 30 s
/// after which the suite ends a client.
const TIMEOUT_MS = 20_000;
/// How long a scenario that needs the GET stream waits for it to open.
const GET_STREAM_PATIENCE_MS = 5_000;
/// How long the client waits for `fence mcp --listen` to name its address.
const LISTEN_PATIENCE_MS = 20_000;

function usage() {
    console.error('usage: conformance_client.mjs [--fence FENCE --shape stdio|listen] URL');
    process.exit(2);
}

function parseArgs(argv) {
    const options = { fence: undefined, shape: undefined, url: argv.at(-1) };
    for (let index = 0; index < argv.length - 1; index++) {
        if (argv[index] === '--fence') {
            options.fence = argv[++index];
        } else if (argv[index] === '--shape') {
            options.shape = argv[++index];
        } else {
            usage();
        }
    }
    if (!options.url || (options.fence === undefined) !== (options.shape === undefined) || ![undefined, 'stdio', 'listen'].includes(options.shape)) {
        usage();
    }
    return options;
}

/// Starts `fence mcp --listen 127.0.0.1:0 --url URL`: the process, and the URL it names.
function startListening(fence, url) {
    const proxy = spawn(fence, ['mcp', '--listen', '127.0.0.1:0', '--url', url], { stdio: ['pipe', 'inherit', 'pipe'] });
    return new Promise((resolve, reject) => {
        let seen = '';
        let named = false;
        const timer = setTimeout(() => reject(new Error(`fence mcp --listen named no address within ${LISTEN_PATIENCE_MS} ms`)), LISTEN_PATIENCE_MS);
        proxy.stderr.on('data', (chunk) => {
            process.stderr.write(chunk);
            if (named) {
                return;
            }
            seen += chunk.toString('utf8');
            const found = /: listening on (\S+)/.exec(seen);
            if (found) {
                named = true;
                clearTimeout(timer);
                resolve({ proxy, at: found[1] });
            }
        });
        proxy.on('error', (err) => {
            clearTimeout(timer);
            reject(err);
        });
        proxy.on('exit', (code, signal) => {
            if (!named) {
                clearTimeout(timer);
                reject(new Error(`fence mcp --listen ended (${code ?? signal}) before naming an address`));
            }
        });
    });
}

/// Ends a process this client started, and waits for it.
function end(child) {
    if (child.exitCode !== null || child.signalCode !== null) {
        return Promise.resolve();
    }
    return new Promise((resolve) => {
        child.on('exit', resolve);
        child.kill('SIGTERM');
    });
}

/// A Streamable HTTP transport to `url`, and a promise kept once its first GET (the stream the
/// server sends its own messages on) has its answer's head, or failed.
function httpTransport(url) {
    let opened;
    const getStream = new Promise((resolve) => {
        opened = resolve;
    });
    const watching = async (target, init) => {
        const get = (init?.method ?? 'GET') === 'GET';
        try {
            return await fetch(target, init);
        } finally {
            if (get) {
                opened();
            }
        }
    };
    return { transport: new StreamableHTTPClientTransport(new URL(url), { fetch: watching }), getStream };
}

/// The transport to the scenario's server, as the options say; when its GET stream is open;
/// and what to end afterwards.
async function connectTo(options) {
    if (options.shape === 'stdio') {
        const transport = new StdioClientTransport({ command: options.fence, args: ['mcp', '--url', options.url], stderr: 'inherit' });
        return { transport, getStream: Promise.resolve(), started: undefined };
    }
    if (options.shape === 'listen') {
        const { proxy, at } = await startListening(options.fence, options.url);
        return { ...httpTransport(at), started: proxy };
    }
    return { ...httpTransport(options.url), started: undefined };
}

/// What the client declares, for `scenario`.
function capabilities(scenario) {
    if (scenario === 'elicitation-sep1034-client-defaults') {
        return { elicitation: { form: { applyDefaults: true } } };
    }
    return {};
}

/// The requests `scenario` makes once the client is connected (`getStream`: see
/// [`connectTo`]).
async function run(scenario, client, getStream) {
    const options = { timeout: TIMEOUT_MS };
    switch (scenario) {
        case 'tools_call':
            await client.listTools(undefined, options);
            await client.callTool({ name: 'add_numbers', arguments: { a: 20, b: 22 } }, undefined, options);
            return;
        case 'elicitation-sep1034-client-defaults':
            client.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'accept', content: {} }));
            await client.listTools(undefined, options);
            await Promise.race([getStream, new Promise((resolve) => setTimeout(resolve, GET_STREAM_PATIENCE_MS))]);
            await client.callTool({ name: 'test_client_elicitation_defaults', arguments: {} }, undefined, options);
            return;
        case 'sse-retry':
            await client.listTools(undefined, options);
            await client.callTool({ name: 'test_reconnection', arguments: {} }, undefined, options);
            return;
        default:
            await client.listTools(undefined, options);
    }
}

async function main() {
    const options = parseArgs(process.argv.slice(2));
    const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? '';
    const client = new Client({ name: 'fence-conformance-client', version: '1.0.0' }, { capabilities: capabilities(scenario) });
    client.onerror = (err) => console.error(`the SDK reported: ${err}`);
    const { transport, getStream, started } = await connectTo(options);
    let failed;
    try {
        await client.connect(transport, { timeout: TIMEOUT_MS });
        await run(scenario, client, getStream);
    } catch (err) {
        failed = err;
    }
    await client.close().catch(() => {});
    if (started) {
        await end(started);
    }
    if (failed) {
        console.error(`${scenario}: ${failed?.stack ?? failed}`);
        process.exit(1);
    }
}

main().catch((err) => {
    console.error(err?.stack ?? String(err));
    process.exit(1);
});
