// Makes each request of a plan with the official TypeScript SDK's Streamable HTTP transport,
// and prints what the transport handed on, for `tests/checks/http_readers.rs`.
//
//     node http_readers.mjs PLAN.json
//
// PLAN is `{"cases": [{"name": …, "url": …, "request": {"kind": "post", "body": "…"} |
// {"kind": "get"} | {"kind": "resume", "last_event_id": "…", "body": "…" | null}}]}`. Each
// case runs with a transport of its own (`reconnectionOptions.maxRetries: 0`, so
// a reconnection is reported rather than made). One JSON object is printed:
// `{"cases": {NAME: {"items": [...], "reconnects": ID | null | undefined}}}` (16 cases at a
// time), where each item
// is `{"message": …}` (`onmessage`), `{"reported": TEXT}` (`onerror`) or `{"raised": TEXT}`
// (the request's promise rejected; `onerror` was told the same error just before).
//
// The SDK is loaded from `$FENCE_SDK_DIR/node`, where scripts/sdk-setup.sh installs it.

import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const sdkDir = join(process.env.FENCE_SDK_DIR || join(here, '..', '..', '..', 'target', 'sdk-clients'), 'node');
const require = createRequire(join(sdkDir, 'package.json'));
const { StreamableHTTPClientTransport } = require('@modelcontextprotocol/sdk/client/streamableHttp.js');
const { JSONRPCMessageSchema } = require('@modelcontextprotocol/sdk/types.js');

// How long after a body ends the transport has to read what is left of it.
const SETTLE_MS = 150;
// How many cases run at once.
const CONCURRENCY = 16;
// How long any one case may take.
const CASE_TIMEOUT_MS = 10_000;
const RECONNECTING = 'Maximum reconnection attempts (0) exceeded.';

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// A fetch that hands the transport the response as it is, but notes when the transport reads
// its body as a stream and when that stream ends (or is cancelled).
function watchedFetch(watch) {
    const bodyGetter = Object.getOwnPropertyDescriptor(Response.prototype, 'body').get;
    return async (url, init) => {
        watch.fetching += 1;
        let response;
        try {
            response = await fetch(url, init);
        } finally {
            watch.fetching -= 1;
        }
        let wrapped;
        Object.defineProperty(response, 'body', {
            get() {
                if (wrapped !== undefined) return wrapped;
                const inner = bodyGetter.call(response);
                if (inner === null) {
                    wrapped = null;
                    return wrapped;
                }
                watch.reading = true;
                const reader = inner.getReader();
                wrapped = new ReadableStream({
                    async pull(controller) {
                        const { value, done } = await reader.read();
                        if (done) {
                            controller.close();
                            watch.ended();
                        } else {
                            controller.enqueue(value);
                        }
                    },
                    cancel(reason) {
                        watch.ended();
                        return reader.cancel(reason);
                    },
                });
                return wrapped;
            },
        });
        return response;
    };
}

async function runCase(testCase) {
    const items = [];
    let lastToken;
    let reconnects;
    let ended;
    const watch = { fetching: 0, reading: false, ended: () => {} };
    const bodyEnded = new Promise((resolve) => {
        watch.ended = resolve;
    });
    const transport = new StreamableHTTPClientTransport(new URL(testCase.url), {
        fetch: watchedFetch(watch),
        reconnectionOptions: { initialReconnectionDelay: 0, maxReconnectionDelay: 0, reconnectionDelayGrowFactor: 1, maxRetries: 0 },
    });
    const errors = [];
    transport.onmessage = (message) => items.push({ message });
    transport.onerror = (error) => {
        const text = String(error?.message ?? error);
        if (text === RECONNECTING) {
            reconnects = lastToken ?? null;
            return;
        }
        errors.push(error);
        items.push({ reported: text, error });
    };
    const onresumptiontoken = (token) => {
        lastToken = token;
    };
    await transport.start();
    const request = testCase.request;
    let done;
    if (request.kind === 'post') {
        done = transport.send(JSON.parse(request.body), { onresumptiontoken });
    } else if (request.kind === 'get') {
        // As the transport starts its GET stream once the session is initialized.
        done = transport._startOrAuthSse({ resumptionToken: undefined, onresumptiontoken }).catch((error) => transport.onerror?.(error));
    } else if (request.body === null) {
        done = transport.resumeStream(request.last_event_id, { onresumptiontoken });
    } else {
        done = transport.send(JSON.parse(request.body), { resumptionToken: request.last_event_id, onresumptiontoken });
    }
    try {
        await done;
    } catch (error) {
        const at = items.findLastIndex((item) => item.error === error);
        const raised = { raised: String(error?.message ?? error) };
        if (at >= 0) items[at] = raised;
        else items.push(raised);
    }
    // A resumed request's stream is opened after `send` returns: wait for its response, and
    // for the transport to take its body.
    const started = Date.now();
    while (watch.fetching > 0 && Date.now() - started < CASE_TIMEOUT_MS) {
        await sleep(5);
    }
    await sleep(5);
    if (watch.reading) {
        await bodyEnded;
    }
    await sleep(SETTLE_MS);
    await transport.close();
    return {
        items: items.map((item) => {
            const { error, ...rest } = item;
            return rest;
        }),
        reconnects,
    };
}

async function main() {
    const plan = JSON.parse(readFileSync(process.argv[2], 'utf8'));
    // Warm the schemas and the decoder up, so that no case's reads wait on compiling them
    // (a wait that would let two chunks of a body arrive as one).
    JSONRPCMessageSchema.safeParse({ jsonrpc: '2.0', id: 1, result: {} });
    new TextDecoderStream();
    const results = [];
    const queue = [...plan.cases];
    const worker = async () => {
        for (let testCase = queue.shift(); testCase !== undefined; testCase = queue.shift()) {
            const outcome = await Promise.race([
                runCase(testCase).catch((error) => ({ items: [{ driver_failed: String(error?.stack ?? error) }] })),
                sleep(CASE_TIMEOUT_MS).then(() => ({ items: [{ driver_failed: 'timed out' }] })),
            ]);
            results.push([testCase.name, outcome]);
        }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    // Exit once the report is written out (a pipe takes it a piece at a time), whatever timers
    // the transports left.
    process.stdout.write(JSON.stringify({ cases: Object.fromEntries(results) }) + '\n', () => process.exit(0));
}

main().catch((error) => {
    console.error(error?.stack ?? String(error));
    process.exit(1);
});
