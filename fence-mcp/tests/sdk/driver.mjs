// Drives MCP servers with the official TypeScript SDK's client, and prints what it handed back.
//
//     node driver.mjs PLAN.json
//
// The SDK is loaded from the folder scripts/sdk-setup.sh installs it in: `$FENCE_SDK_DIR/node`,
// by default `target/sdk-clients/node` in the repository. The plan and the report have the
// shape driver.py describes (a session with a `command` is spoken to with `StdioClientTransport`,
// one with a `url` with `StreamableHTTPClientTransport`); this driver also runs the task
// operations:
//
//     {"op": "call_task", "tool": T}   a task-augmented tools/call, through the SDK's
//                                      `experimental.tasks.callToolStream` (creates, polls,
//                                      fetches the result); every task handle it yields counts
//     {"op": "get_task", "task_id": ID}, {"op": "list_tasks"}, {"op": "cancel_task", "task_id": ID}
//
// `logged` holds every error the SDK passed to `Client.onerror` while the session ran (a parse
// failure, a response for an unknown id, …), as `String(error)`. A lone UTF-16 surrogate, which
// no UTF-8 text can carry, is written as U+FFFD (and counted in `lone_surrogates`).

import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const sdkDir = join(process.env.FENCE_SDK_DIR || join(here, '..', '..', '..', 'target', 'sdk-clients'), 'node');
const require = createRequire(join(sdkDir, 'package.json'));
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StdioClientTransport } = require('@modelcontextprotocol/sdk/client/stdio.js');
const { StreamableHTTPClientTransport } = require('@modelcontextprotocol/sdk/client/streamableHttp.js');
const { McpError, ErrorCode } = require('@modelcontextprotocol/sdk/types.js');

const SDK_VERSION = JSON.parse(readFileSync(join(sdkDir, 'node_modules', '@modelcontextprotocol', 'sdk', 'package.json'), 'utf8')).version;
const SDK = `typescript @modelcontextprotocol/sdk ${SDK_VERSION}`;

class Session {
    constructor(label) {
        this.label = label;
        this.logged = [];
        this.loneSurrogates = 0;
    }

    clean(text) {
        text = String(text);
        const wellFormed = text.toWellFormed();
        if (wellFormed !== text) {
            for (let i = 0; i < text.length; i++) {
                if (text[i] !== wellFormed[i]) this.loneSurrogates++;
            }
        }
        return wellFormed;
    }

    strings(value, into) {
        if (typeof value === 'string') {
            into.push(this.clean(value));
        } else if (Array.isArray(value)) {
            for (const item of value) this.strings(item, into);
        } else if (value !== null && typeof value === 'object') {
            for (const [key, item] of Object.entries(value)) {
                into.push(this.clean(key));
                this.strings(item, into);
            }
        }
        return into;
    }
}

function isTimeout(error) {
    return error instanceof McpError && error.code === ErrorCode.RequestTimeout;
}

function errorReport(session, error) {
    if (error instanceof McpError) {
        // McpError's message is "MCP error CODE: MESSAGE": what a caller that shows the error sees.
        return {
            code: error.code,
            message: session.clean(error.message),
            strings: error.data === undefined ? [] : session.strings(error.data, [])
        };
    }
    return { code: null, message: session.clean(String(error)), strings: [] };
}

function resultReport(session, result) {
    const texts = [];
    const strings = [];
    const rest = { ...result };
    for (const block of rest.content ?? []) {
        const other = { ...block };
        if (other.type === 'text' && typeof other.text === 'string') {
            texts.push(session.clean(other.text));
            delete other.text;
        } else if (other.type === 'resource' && other.resource && typeof other.resource === 'object') {
            const resource = { ...other.resource };
            if (typeof resource.text === 'string') {
                texts.push(session.clean(resource.text));
                delete resource.text;
            }
            session.strings(resource, strings);
            delete other.resource;
        }
        session.strings(other, strings);
    }
    delete rest.content;
    const isError = rest.isError === true;
    delete rest.isError;
    session.strings(rest, strings);
    return { outcome: 'result', texts, strings, is_error: isError };
}

async function attempt(session, report, body) {
    try {
        Object.assign(report, await body());
    } catch (error) {
        if (isTimeout(error)) {
            report.outcome = 'timeout';
        } else {
            report.outcome = 'error';
            report.error = errorReport(session, error);
        }
    }
    return report;
}

async function runOp(session, client, op, timeout) {
    const report = { op: op.op, tool: op.tool ?? null };
    const options = { timeout };
    switch (op.op) {
        case 'call':
            return attempt(session, report, async () =>
                resultReport(session, await client.callTool({ name: op.tool, arguments: op.arguments ?? {} }, undefined, options))
            );
        case 'call_task':
            return attempt(session, report, async () => {
                const strings = [];
                let last = { outcome: 'error', error: { code: null, message: 'the stream ended with no result', strings: [] } };
                const stream = client.experimental.tasks.callToolStream(
                    { name: op.tool, arguments: op.arguments ?? {} },
                    undefined,
                    { ...options, task: { ttl: 60000 } }
                );
                for await (const message of stream) {
                    if (message.type === 'taskCreated' || message.type === 'taskStatus') {
                        session.strings(message.task, strings);
                    } else if (message.type === 'result') {
                        last = resultReport(session, message.result);
                    } else if (message.type === 'error') {
                        if (isTimeout(message.error)) {
                            last = { outcome: 'timeout' };
                        } else {
                            last = { outcome: 'error', error: errorReport(session, message.error) };
                        }
                    }
                }
                last.strings = [...strings, ...(last.strings ?? [])];
                return last;
            });
        case 'get_task':
            return attempt(session, report, async () => ({
                outcome: 'result',
                texts: [],
                strings: session.strings(await client.experimental.tasks.getTask(op.task_id, options), [])
            }));
        case 'list_tasks':
            return attempt(session, report, async () => ({
                outcome: 'result',
                texts: [],
                strings: session.strings(await client.experimental.tasks.listTasks(undefined, options), [])
            }));
        case 'cancel_task':
            return attempt(session, report, async () => ({
                outcome: 'result',
                texts: [],
                strings: session.strings(await client.experimental.tasks.cancelTask(op.task_id, options), [])
            }));
        default:
            return { ...report, outcome: 'unsupported', note: `no such operation: ${op.op}` };
    }
}

async function runSession(spec, timeout) {
    const session = new Session(spec.label);
    const report = { label: spec.label, connect_error: null, ops: [] };
    let transport;
    let stderr = '';
    if (spec.url !== undefined) {
        transport = new StreamableHTTPClientTransport(new URL(spec.url));
    } else {
        const [command, ...args] = spec.command;
        transport = new StdioClientTransport({ command, args, env: spec.env, stderr: 'pipe' });
        transport.stderr?.on('data', chunk => {
            stderr += chunk.toString('utf8');
        });
    }
    const client = new Client({ name: 'fence-sdk-tests', version: '1.0.0' }, { capabilities: {} });
    client.onerror = error => session.logged.push(session.clean(String(error)));
    try {
        await client.connect(transport, { timeout });
        // Listed first, so the SDK knows each tool's output schema before a call.
        await client.listTools(undefined, { timeout });
    } catch (error) {
        report.connect_error = errorReport(session, error).message;
    }
    if (report.connect_error === null) {
        for (const op of spec.ops) report.ops.push(await runOp(session, client, op, timeout));
    }
    if (spec.url !== undefined && transport.sessionId !== undefined) {
        await transport.terminateSession().catch(error => session.logged.push(session.clean(String(error))));
    }
    try {
        await client.close();
    } catch (error) {
        session.logged.push(session.clean(String(error)));
    }
    report.stderr = stderr;
    report.logged = session.logged;
    report.lone_surrogates = session.loneSurrogates;
    return report;
}

async function main() {
    const plan = JSON.parse(readFileSync(process.argv[2], 'utf8'));
    const timeout = Math.round((plan.timeout ?? 5) * 1000);
    const limit = plan.concurrency ?? 4;
    const reports = new Array(plan.sessions.length);
    let next = 0;
    async function worker() {
        while (next < plan.sessions.length) {
            const index = next++;
            reports[index] = await runSession(plan.sessions[index], timeout);
        }
    }
    await Promise.all(Array.from({ length: limit }, worker));
    // A server that ignores its closed stdin must not keep this process alive; but the report
    // is written first: to a pipe, Node writes asynchronously, and exiting at once would cut
    // it off at the pipe's 64 KiB.
    process.stdout.write(JSON.stringify({ sdk: SDK, sessions: reports }) + '\n', () => process.exit(0));
}

main().catch(error => {
    process.stderr.write(`driver failed: ${error?.stack ?? error}\n`);
    process.exit(1);
});
