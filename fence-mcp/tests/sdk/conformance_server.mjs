// An MCP server with everything the official conformance suite's server scenarios ask for
// (`@modelcontextprotocol/conformance` 0.1.16, `conformance server --url URL`), written on the
// official TypeScript SDK's low-level `Server`, for fence-mcp's conformance test.
//
//     node conformance_server.mjs --http [127.0.0.1:0]   # Streamable HTTP at /mcp
//     node conformance_server.mjs --stdio                 # one session on stdin and stdout
//
// The SDK is loaded from the folder scripts/sdk-setup.sh installs it in, as the drivers beside
// this file load it. With `--http` the server prints one line on stdout once it is listening,
// `listening http://HOST:PORT/mcp`, and serves until its stdin ends when that is a pipe (so a
// test that drops it ends it), else until it is stopped. Each `initialize` without `Mcp-Session-Id` starts a session of its own (the SDK's
// `StreamableHTTPServerTransport`, with an event store, so every event of a stream has an id and
// a client resumes a broken stream with `Last-Event-ID`, and a `retry` of RETRY_MS); a request
// naming no known session gets 404, one naming none (but `initialize`) 400; a `Host` or an
// `Origin` that is not a loopback name gets 403 (the suite's `dns-rebinding-protection`).
// With `--stdio` it serves the same tools, resources and prompts to one client (what
// `fence mcp --listen ADDR -- SERVER` runs, one process per session).
//
// What each scenario needs, as the suite's scenario descriptions say: the tools named in
// TOOLS (texts, an image, an audio clip, embedded resources, a tool error, three log messages,
// three progress notifications, a sampling request, elicitation requests with defaults and with
// each kind of enum, a JSON Schema 2020-12 input schema, and `test_reconnection`, which closes
// its request's event stream before it answers), the resources of RESOURCES and a template,
// subscriptions, the prompts of PROMPTS, `logging/setLevel` (which filters the log messages)
// and `completion/complete`.

import { fstatSync } from 'node:fs';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomUUID } from 'node:crypto';
import { deflateSync } from 'node:zlib';

const here = dirname(fileURLToPath(import.meta.url));
const sdkDir = join(process.env.FENCE_SDK_DIR || join(here, '..', '..', '..', 'target', 'sdk-clients'), 'node');
const require = createRequire(join(sdkDir, 'package.json'));
const { Server } = require('@modelcontextprotocol/sdk/server/index.js');
const types = require('@modelcontextprotocol/sdk/types.js');
// Each transport is loaded by the mode that needs it: the stdio mode starts once per session
// behind `fence mcp --listen -- SERVER`, and starts faster without the HTTP one.

/// The `retry` (milliseconds) each event stream of the HTTP mode names in its first event.
const RETRY_MS = 500;
/// How long a tool that reports along the way (log messages, progress) waits between reports.
const STEP_MS = 50;
/// The most sessions the HTTP mode keeps at once; past them the oldest is closed.
const MAX_SESSIONS = 256;
/// The most events the HTTP mode's event store keeps for replay, across its sessions.
const MAX_EVENTS = 10_000;

// ---------------------------------------------------------------------------------------------
// Media: a real PNG and a real WAV, made here.

/// CRC-32 (IEEE), as PNG chunks need it.
function crc32(bytes) {
    let crc = ~0;
    for (const byte of bytes) {
        crc ^= byte;
        for (let bit = 0; bit < 8; bit++) {
            crc = (crc >>> 1) ^ (0xedb88320 & -(crc & 1));
        }
    }
    return ~crc >>> 0;
}

/// A 2×2 PNG, one colour per pixel, base64.
function png() {
    const chunk = (type, data) => {
        const head = Buffer.alloc(4);
        head.writeUInt32BE(data.length);
        const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
        const crc = Buffer.alloc(4);
        crc.writeUInt32BE(crc32(body));
        return Buffer.concat([head, body, crc]);
    };
    const header = Buffer.alloc(13);
    header.writeUInt32BE(2, 0); // width
    header.writeUInt32BE(2, 4); // height
    header.set([8, 2, 0, 0, 0], 8); // 8 bits, RGB, deflate, no filter, no interlace
    // Each row: filter byte 0, then two RGB pixels.
    const rows = Buffer.from([0, 200, 30, 30, 30, 200, 30, 0, 30, 30, 200, 240, 240, 240]);
    return Buffer.concat([
        Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
        chunk('IHDR', header),
        chunk('IDAT', deflateSync(rows)),
        chunk('IEND', Buffer.alloc(0)),
    ]).toString('base64');
}

/// A tenth of a second of a 440 Hz tone, 8 kHz mono 8-bit PCM, as a WAV file, base64.
function wav() {
    const rate = 8000;
    const samples = Buffer.alloc(rate / 10);
    for (let index = 0; index < samples.length; index++) {
        samples[index] = 128 + Math.round(60 * Math.sin((2 * Math.PI * 440 * index) / rate));
    }
    const head = Buffer.alloc(44);
    head.write('RIFF', 0, 'latin1');
    head.writeUInt32LE(36 + samples.length, 4);
    head.write('WAVEfmt ', 8, 'latin1');
    head.writeUInt32LE(16, 16); // the fmt chunk's size
    head.writeUInt16LE(1, 20); // PCM
    head.writeUInt16LE(1, 22); // mono
    head.writeUInt32LE(rate, 24);
    head.writeUInt32LE(rate, 28); // bytes per second
    head.writeUInt16LE(1, 32); // block align
    head.writeUInt16LE(8, 34); // bits per sample
    head.write('data', 36, 'latin1');
    head.writeUInt32LE(samples.length, 40);
    return Buffer.concat([head, samples]).toString('base64');
}

const PNG = png();
const WAV = wav();

// ---------------------------------------------------------------------------------------------
// What the server offers.

const NO_ARGUMENTS = { type: 'object', properties: {} };

/// The tools, as `tools/list` names them.
const TOOLS = [
    ['test_simple_text', 'Answers with one text block.', NO_ARGUMENTS],
    ['test_image_content', 'Answers with a PNG image.', NO_ARGUMENTS],
    ['test_audio_content', 'Answers with a WAV audio clip.', NO_ARGUMENTS],
    ['test_embedded_resource', 'Answers with an embedded text resource.', NO_ARGUMENTS],
    ['test_multiple_content_types', 'Answers with a text, an image and an embedded resource.', NO_ARGUMENTS],
    ['test_tool_with_logging', 'Sends three log messages while it runs.', NO_ARGUMENTS],
    ['test_error_handling', 'Always fails, with a tool error.', NO_ARGUMENTS],
    ['test_tool_with_progress', 'Reports progress three times while it runs.', NO_ARGUMENTS],
    [
        'test_sampling',
        'Asks the client to sample a message for the prompt given.',
        { type: 'object', properties: { prompt: { type: 'string', description: 'What to ask the model' } }, required: ['prompt'] },
    ],
    [
        'test_elicitation',
        'Asks the user for a name and an email address.',
        { type: 'object', properties: { message: { type: 'string', description: 'What to tell the user' } }, required: ['message'] },
    ],
    ['test_elicitation_sep1034_defaults', 'Asks the user for values of each primitive type, each with a default.', NO_ARGUMENTS],
    ['test_elicitation_sep1330_enums', 'Asks the user to choose, with each kind of enum schema.', NO_ARGUMENTS],
    [
        'json_schema_2020_12_tool',
        'Takes an input described with JSON Schema 2020-12 keywords.',
        {
            $schema: 'https://json-schema.org/draft/2020-12/schema',
            type: 'object',
            $defs: {
                address: {
                    type: 'object',
                    properties: { street: { type: 'string' }, city: { type: 'string' } },
                },
            },
            properties: { name: { type: 'string' }, address: { $ref: '#/$defs/address' } },
            additionalProperties: false,
        },
    ],
    ['test_reconnection', 'Closes its event stream before it answers, so the client resumes it.', NO_ARGUMENTS],
].map(([name, description, inputSchema]) => ({ name, description, inputSchema }));

/// The resources, as `resources/list` names them, with their contents.
const RESOURCES = [
    { uri: 'test://static-text', name: 'static-text', description: 'A text that never changes.', mimeType: 'text/plain', text: 'The static text resource of the fence conformance server.' },
    { uri: 'test://static-binary', name: 'static-binary', description: 'A PNG image.', mimeType: 'image/png', blob: PNG },
    { uri: 'test://watched-resource', name: 'watched-resource', description: 'A resource to subscribe to.', mimeType: 'text/plain', text: 'Watched, and never changed.' },
];

/// The one resource template: `test://template/{id}/data`.
const TEMPLATE = {
    uriTemplate: 'test://template/{id}/data',
    name: 'template-data',
    description: 'JSON data for the id in its URI.',
    mimeType: 'application/json',
};

/// The prompts, as `prompts/list` names them.
const PROMPTS = [
    { name: 'test_simple_prompt', description: 'A prompt with no arguments.' },
    {
        name: 'test_prompt_with_arguments',
        description: 'A prompt that quotes its two arguments.',
        arguments: [
            { name: 'arg1', description: 'The first argument', required: true },
            { name: 'arg2', description: 'The second argument', required: true },
        ],
    },
    {
        name: 'test_prompt_with_embedded_resource',
        description: 'A prompt that embeds the resource it is given.',
        arguments: [{ name: 'resourceUri', description: 'The URI to embed', required: true }],
    },
    { name: 'test_prompt_with_image', description: 'A prompt with an image.' },
];

/// The log levels, least severe first.
const LEVELS = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'];

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

const text = (words) => ({ type: 'text', text: words });

/// The elicitation schema of `test_elicitation_sep1034_defaults`: each primitive type, each with
/// a default.
const DEFAULTS_SCHEMA = {
    type: 'object',
    properties: {
        name: { type: 'string', description: 'Your name', default: 'John Doe' },
        age: { type: 'integer', description: 'Your age', default: 30 },
        score: { type: 'number', description: 'Your score', default: 95.5 },
        status: { type: 'string', description: 'Your status', enum: ['active', 'inactive', 'pending'], default: 'active' },
        verified: { type: 'boolean', description: 'Whether you are verified', default: true },
    },
};

/// The elicitation schema of `test_elicitation_sep1330_enums`: each kind of enum schema.
const ENUMS_SCHEMA = {
    type: 'object',
    properties: {
        untitledSingle: { type: 'string', description: 'Pick one', enum: ['option1', 'option2', 'option3'] },
        titledSingle: {
            type: 'string',
            description: 'Pick one, by title',
            oneOf: [
                { const: 'value1', title: 'Value one' },
                { const: 'value2', title: 'Value two' },
                { const: 'value3', title: 'Value three' },
            ],
        },
        legacyEnum: {
            type: 'string',
            description: 'Pick one (enumNames, deprecated)',
            enum: ['opt1', 'opt2', 'opt3'],
            enumNames: ['Opt one', 'Opt two', 'Opt three'],
        },
        untitledMulti: {
            type: 'array',
            description: 'Pick any',
            items: { type: 'string', enum: ['option1', 'option2', 'option3'] },
        },
        titledMulti: {
            type: 'array',
            description: 'Pick any, by title',
            items: {
                anyOf: [
                    { const: 'value1', title: 'Choice one' },
                    { const: 'value2', title: 'Choice two' },
                    { const: 'value3', title: 'Choice three' },
                ],
            },
        },
    },
};

/// One session's server: its own log level and subscriptions.
function makeServer() {
    const server = new Server(
        { name: 'fence-conformance-server', version: '1.0.0' },
        {
            capabilities: {
                tools: {},
                resources: { subscribe: true },
                prompts: {},
                logging: {},
                completions: {},
            },
        },
    );
    let level = 'info';
    const subscriptions = new Set();

    /// Sends a log message on the request's stream, unless `logging/setLevel` filters it out.
    const log = async (extra, severity, data) => {
        if (LEVELS.indexOf(severity) >= LEVELS.indexOf(level)) {
            await extra.sendNotification({ method: 'notifications/message', params: { level: severity, logger: 'conformance', data } });
        }
    };

    const elicit = (extra, message, requestedSchema) =>
        extra.sendRequest({ method: 'elicitation/create', params: { message, requestedSchema } }, types.ElicitResultSchema);

    const tools = {
        test_simple_text: async () => ({ content: [text('A plain text answer from the fence conformance server.')] }),
        test_image_content: async () => ({ content: [{ type: 'image', data: PNG, mimeType: 'image/png' }] }),
        test_audio_content: async () => ({ content: [{ type: 'audio', data: WAV, mimeType: 'audio/wav' }] }),
        test_embedded_resource: async () => ({
            content: [{ type: 'resource', resource: { uri: 'test://embedded-resource', mimeType: 'text/plain', text: 'The text of an embedded resource.' } }],
        }),
        test_multiple_content_types: async () => ({
            content: [
                text('Three kinds of content follow this text.'),
                { type: 'image', data: PNG, mimeType: 'image/png' },
                { type: 'resource', resource: { uri: 'test://mixed-content-resource', mimeType: 'application/json', text: '{"kind":"mixed","count":3}' } },
            ],
        }),
        test_tool_with_logging: async (_args, extra) => {
            await log(extra, 'info', 'started');
            await sleep(STEP_MS);
            await log(extra, 'info', 'halfway');
            await sleep(STEP_MS);
            await log(extra, 'info', 'done');
            return { content: [text('Logged three messages.')] };
        },
        test_error_handling: async () => ({ isError: true, content: [text('This tool fails on purpose.')] }),
        test_tool_with_progress: async (_args, extra, request) => {
            const token = request.params._meta?.progressToken;
            for (const progress of [0, 50, 100]) {
                if (progress > 0) {
                    await sleep(STEP_MS);
                }
                if (token !== undefined) {
                    await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress, total: 100 } });
                }
            }
            return { content: [text('Reported progress three times.')] };
        },
        test_sampling: async (args, extra) => {
            const answer = await extra.sendRequest(
                {
                    method: 'sampling/createMessage',
                    params: { messages: [{ role: 'user', content: text(String(args.prompt ?? '')) }], maxTokens: 100 },
                },
                types.CreateMessageResultSchema,
            );
            const said = answer.content?.type === 'text' ? answer.content.text : JSON.stringify(answer.content);
            return { content: [text(`The model said: ${said}`)] };
        },
        test_elicitation: async (args, extra) => {
            const answer = await elicit(extra, String(args.message ?? ''), {
                type: 'object',
                properties: {
                    username: { type: 'string', description: 'Your user name' },
                    email: { type: 'string', description: 'Your email address' },
                },
                required: ['username', 'email'],
            });
            return { content: [text(`The user answered ${answer.action}: ${JSON.stringify(answer.content ?? {})}`)] };
        },
        test_elicitation_sep1034_defaults: async (_args, extra) => {
            const answer = await elicit(extra, 'Some values, each with a default', DEFAULTS_SCHEMA);
            return { content: [text(`The user answered ${answer.action}: ${JSON.stringify(answer.content ?? {})}`)] };
        },
        test_elicitation_sep1330_enums: async (_args, extra) => {
            const answer = await elicit(extra, 'Some choices, each of another kind', ENUMS_SCHEMA);
            return { content: [text(`The user answered ${answer.action}: ${JSON.stringify(answer.content ?? {})}`)] };
        },
        json_schema_2020_12_tool: async (args) => ({ content: [text(`Received ${JSON.stringify(args)}`)] }),
        test_reconnection: async (_args, extra) => {
            // Over HTTP with an event store, the SDK gives the handler a way to end the
            // request's stream: the client resumes it (GET with Last-Event-ID) and gets the
            // answer there. Over stdio there is no stream to end.
            await sleep(STEP_MS);
            extra.closeSSEStream?.();
            await sleep(4 * STEP_MS);
            return { content: [text('Answered after the stream was closed.')] };
        },
    };

    server.setRequestHandler(types.ListToolsRequestSchema, async () => ({ tools: TOOLS }));
    server.setRequestHandler(types.CallToolRequestSchema, async (request, extra) => {
        const tool = tools[request.params.name];
        if (!tool) {
            throw new types.McpError(types.ErrorCode.InvalidParams, `no tool named ${request.params.name}`);
        }
        return tool(request.params.arguments ?? {}, extra, request);
    });

    server.setRequestHandler(types.ListResourcesRequestSchema, async () => ({
        resources: RESOURCES.map(({ uri, name, description, mimeType }) => ({ uri, name, description, mimeType })),
    }));
    server.setRequestHandler(types.ListResourceTemplatesRequestSchema, async () => ({ resourceTemplates: [TEMPLATE] }));
    server.setRequestHandler(types.ReadResourceRequestSchema, async (request) => {
        const uri = request.params.uri;
        const listed = RESOURCES.find((resource) => resource.uri === uri);
        if (listed) {
            const { name: _name, description: _description, ...contents } = listed;
            return { contents: [contents] };
        }
        const templated = /^test:\/\/template\/([^/]+)\/data$/.exec(uri);
        if (templated) {
            const id = decodeURIComponent(templated[1]);
            return { contents: [{ uri, mimeType: 'application/json', text: JSON.stringify({ id, fromTemplate: true }) }] };
        }
        throw new types.McpError(-32002, `no resource at ${uri}`);
    });
    server.setRequestHandler(types.SubscribeRequestSchema, async (request) => {
        subscriptions.add(request.params.uri);
        return {};
    });
    server.setRequestHandler(types.UnsubscribeRequestSchema, async (request) => {
        subscriptions.delete(request.params.uri);
        return {};
    });

    server.setRequestHandler(types.ListPromptsRequestSchema, async () => ({ prompts: PROMPTS }));
    server.setRequestHandler(types.GetPromptRequestSchema, async (request) => {
        const args = request.params.arguments ?? {};
        switch (request.params.name) {
            case 'test_simple_prompt':
                return { messages: [{ role: 'user', content: text('A prompt with nothing to fill in.') }] };
            case 'test_prompt_with_arguments':
                return { messages: [{ role: 'user', content: text(`First: ${args.arg1}; second: ${args.arg2}.`) }] };
            case 'test_prompt_with_embedded_resource':
                return {
                    messages: [
                        { role: 'user', content: { type: 'resource', resource: { uri: String(args.resourceUri), mimeType: 'text/plain', text: 'The embedded text.' } } },
                        { role: 'user', content: text('Read the resource above.') },
                    ],
                };
            case 'test_prompt_with_image':
                return {
                    messages: [
                        { role: 'user', content: { type: 'image', data: PNG, mimeType: 'image/png' } },
                        { role: 'user', content: text('Describe the image above.') },
                    ],
                };
            default:
                throw new types.McpError(types.ErrorCode.InvalidParams, `no prompt named ${request.params.name}`);
        }
    });

    server.setRequestHandler(types.SetLevelRequestSchema, async (request) => {
        level = request.params.level;
        return {};
    });
    server.setRequestHandler(types.CompleteRequestSchema, async (request) => {
        const typed = String(request.params.argument?.value ?? '');
        const values = ['paris', 'park', 'party', 'test', 'testing'].filter((value) => value.startsWith(typed));
        return { completion: { values, total: values.length, hasMore: false } };
    });
    return server;
}

// ---------------------------------------------------------------------------------------------
// Stdio.

async function serveStdio() {
    const { StdioServerTransport } = require('@modelcontextprotocol/sdk/server/stdio.js');
    await makeServer().connect(new StdioServerTransport());
}

// ---------------------------------------------------------------------------------------------
// Streamable HTTP.

/// An event store shared by every session: each event's id names its stream, so a resumed
/// stream replays the events after the one named, of that stream only.
function makeEventStore() {
    const events = new Map(); // id → { stream, message }
    let counter = 0;
    return {
        async storeEvent(stream, message) {
            const id = `${stream}_${++counter}`;
            events.set(id, { stream, message });
            if (events.size > MAX_EVENTS) {
                events.delete(events.keys().next().value);
            }
            return id;
        },
        async getStreamIdForEventId(id) {
            return events.get(id)?.stream;
        },
        async replayEventsAfter(lastId, { send }) {
            const last = events.get(lastId);
            if (!last) {
                return '';
            }
            let after = false;
            for (const [id, { stream, message }] of events) {
                if (id === lastId) {
                    after = true;
                } else if (after && stream === last.stream) {
                    await send(id, message);
                }
            }
            return last.stream;
        },
    };
}

/// Whether `host` (a `Host` header, or an origin's host) names this machine's loopback.
function loopback(host) {
    if (typeof host !== 'string') {
        return false;
    }
    const name = host.startsWith('[') ? host.slice(0, host.indexOf(']') + 1) : host.split(':')[0];
    return ['localhost', '127.0.0.1', '[::1]'].includes(name.toLowerCase());
}

function refuse(res, status, message) {
    res.writeHead(status, { 'Content-Type': 'application/json' }).end(
        JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }),
    );
}

/// Sets `req`'s header `name` (lower case) to `value`, as the SDK's transport reads it (from
/// `rawHeaders`) and as node does (`headers`).
function setHeader(req, name, value) {
    for (let index = 0; index < req.rawHeaders.length; index += 2) {
        if (req.rawHeaders[index].toLowerCase() === name) {
            req.rawHeaders[index + 1] = value;
        }
    }
    req.headers[name] = value;
}

async function readJson(req) {
    const chunks = [];
    for await (const chunk of req) {
        chunks.push(chunk);
    }
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

async function serveHttp(address) {
    const { StreamableHTTPServerTransport } = require('@modelcontextprotocol/sdk/server/streamableHttp.js');
    const [host, port] = address.startsWith('[') ? [address.slice(1, address.indexOf(']')), address.slice(address.indexOf(']') + 2)] : address.split(':');
    const eventStore = makeEventStore();
    const sessions = new Map(); // session id → transport
    const versions = new Map(); // session id → the protocol version `initialize` negotiated

    const http = createServer(async (req, res) => {
        try {
            const path = new URL(req.url, 'http://localhost').pathname;
            if (path !== '/mcp') {
                return refuse(res, 404, `nothing at ${path}: the MCP endpoint is /mcp`);
            }
            const origin = req.headers.origin;
            let originHost;
            try {
                originHost = origin === undefined ? undefined : new URL(origin).host;
            } catch {
                originHost = null;
            }
            if (!loopback(req.headers.host) || (origin !== undefined && !loopback(originHost))) {
                return refuse(res, 403, 'Host and Origin must name this machine (localhost, 127.0.0.1 or [::1])');
            }
            const named = req.headers['mcp-session-id'];
            // A session speaks the version its `initialize` negotiated, whatever a request's
            // `MCP-Protocol-Version` says when it names an older one: the suite's
            // `server-sse-polling` and `server-sse-multiple-streams` POST by hand with
            // `2025-03-26` in a session of `2025-11-25`, and for `2025-03-26` the SDK's
            // transport neither primes a stream with an event id nor lets a tool close it.
            const negotiated = named === undefined ? undefined : versions.get(named);
            const header = req.headers['mcp-protocol-version'];
            if (negotiated !== undefined && typeof header === 'string' && header < negotiated && types.SUPPORTED_PROTOCOL_VERSIONS.includes(header)) {
                setHeader(req, 'mcp-protocol-version', negotiated);
            }
            if (req.method === 'POST') {
                let body;
                try {
                    body = await readJson(req);
                } catch (err) {
                    return res.writeHead(400, { 'Content-Type': 'application/json' }).end(
                        JSON.stringify({ jsonrpc: '2.0', error: { code: -32700, message: `not JSON: ${err.message}` }, id: null }),
                    );
                }
                if (named === undefined) {
                    if (body?.method !== 'initialize') {
                        return refuse(res, 400, 'no Mcp-Session-Id: initialize first');
                    }
                    const transport = new StreamableHTTPServerTransport({
                        sessionIdGenerator: () => randomUUID(),
                        eventStore,
                        retryInterval: RETRY_MS,
                        onsessioninitialized: (id) => {
                            sessions.set(id, transport);
                            const asked = body.params?.protocolVersion;
                            versions.set(id, types.SUPPORTED_PROTOCOL_VERSIONS.includes(asked) ? asked : types.LATEST_PROTOCOL_VERSION);
                            if (sessions.size > MAX_SESSIONS) {
                                const [oldest] = sessions.values();
                                oldest.close().catch(() => {});
                            }
                        },
                    });
                    transport.onclose = () => {
                        if (transport.sessionId) {
                            sessions.delete(transport.sessionId);
                            versions.delete(transport.sessionId);
                        }
                    };
                    await makeServer().connect(transport);
                    return await transport.handleRequest(req, res, body);
                }
                const transport = sessions.get(named);
                if (!transport) {
                    return refuse(res, 404, 'no such session: initialize again');
                }
                return await transport.handleRequest(req, res, body);
            }
            if (req.method === 'GET' || req.method === 'DELETE') {
                const transport = named === undefined ? undefined : sessions.get(named);
                if (!transport) {
                    return refuse(res, named === undefined ? 400 : 404, 'no such session');
                }
                return await transport.handleRequest(req, res);
            }
            res.writeHead(405, { Allow: 'GET, POST, DELETE' }).end();
        } catch (err) {
            if (!res.headersSent) {
                refuse(res, 500, `the server failed: ${err.message}`);
            } else {
                res.end();
            }
        }
    });
    await new Promise((resolve) => http.listen(Number(port), host, resolve));
    const bound = http.address();
    const shown = bound.family === 'IPv6' ? `[${bound.address}]` : bound.address;
    process.stdout.write(`listening http://${shown}:${bound.port}/mcp\n`);
    if (fstatSync(0).isFIFO()) {
        process.stdin.on('end', () => process.exit(0));
        process.stdin.resume();
    }
}

const mode = process.argv[2];
if (mode === '--stdio') {
    await serveStdio();
} else if (mode === '--http') {
    await serveHttp(process.argv[3] ?? '127.0.0.1:0');
} else {
    console.error('usage: conformance_server.mjs --http [HOST:PORT] | --stdio');
    process.exit(2);
}
