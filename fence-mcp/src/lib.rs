//! An MCP proxy that fences every tool result of any MCP server, in any language.
//!
//! Most MCP servers are not written with this toolkit: a fetch server from npm, a filesystem
//! server, a browser driver. Their tool results reach the model unmarked. The proxy runs such
//! a server as its child over stdio, serves MCP on its own stdin and stdout, forwards the whole
//! protocol in both directions, and fences what the server hands the model:
//!
//! ```text
//! fence mcp -- npx -y @modelcontextprotocol/server-filesystem /tmp
//! ```
//!
//! A client is pointed at the proxy by changing one line of its configuration: the command
//! becomes `fence` and the server's command moves after `mcp --`. This crate is the proxy as a
//! library; the `fence` command (crate `fence-cli`) is its command line.
//!
//! ```no_run
//! use std::process::ExitCode;
//!
//! fn main() -> ExitCode {
//!     let server = fence_mcp::ChildServer::new("npx")
//!         .with_args(["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]);
//!     fence_mcp::run(&fence_mcp::Options::new(server))
//! }
//! ```
//!
//! # What is fenced
//!
#![doc = include_str!("../docs/fencing-table.md")]
//!
//! In the library, `--name` is [`Options::with_name`], `--max-message-bytes`
//! [`Options::with_max_message_bytes`], `--structured-content remove`
//! [`StructuredContent::Remove`], and `--pin` [`Options::with_pin`] with
//! [`PinMode::Enforce`].
//!
//! Resources are fenced under `resource:` rather than `tool:` because they are not a tool's
//! result: a verifier that ties each tool result to its tool's source never mistakes one for
//! the other, and the model reads which resource the text came from. Prompts and tool
//! descriptions are the server author's own words to the model, as a skill's guidance is, and
//! are not fenced.
//!
//! # Streamable HTTP
//!
//! With the `http` feature (on by default), either side may be HTTP: a [`RemoteServer`] is
//! the server at a URL (with [`RemoteServer::with_header`] for a static token), and an
//! [`HttpFront`] serves the MCP endpoint at `http://ADDR/mcp` instead of stdio, in
//! front of a remote server or of a stdio server it runs, one process per session. The same
//! table applies to every JSON body and to every `message` event of an event stream, which is
//! rewritten event by event with everything else in it kept byte for byte; headers pass
//! through except the hop-by-hop ones. The front binds loopback addresses only unless
//! [`HttpFront::with_network_clients`] allows others, and refuses a `Host` or an `Origin` that
//! is not its own, against DNS rebinding. `docs/mcp-proxy.md` in the repository has the rules.
//!
//! # Pinning the upstream's definitions
//!
//! With [`Options::with_pin`], the upstream's tools (name, title, description, input and output
//! schemas, annotations), prompts (name, title, description, arguments) and `initialize`
//! instructions are recorded in a file the first time they are seen (trust on first use), and
//! every list page and `initialize` answer after that is compared with it by meaning: key
//! order, whitespace and the spelling of a number (`1`, `1.0`, `1e0`) do not count; a changed
//! word does. In [`PinMode::Enforce`] a tool or prompt that is new or changed is left out of
//! the page (only that page is written again, everything else in it kept), a `tools/call` or
//! `prompts/get` naming it is answered by the proxy with an error and never forwarded, and
//! changed instructions are withheld; [`PinMode::Report`] forwards them; both report each drift
//! on stderr once. [`Options::with_pin_update`] records what the upstream says now. The file
//! is written atomically, under a lock, merged with what another proxy wrote; a file that
//! cannot be read stops [`run`] at start.
//!
//! # Faithful: what is typed and what is not
//!
//! The proxy never models MCP's messages in types, so a field or a method no library knows yet
//! (a tool's `execution.taskSupport`, a new capability) reaches the other side unchanged. A
//! line is read as the members of its JSON objects in order, each value kept as the exact JSON
//! text `serde_json` validated (`serde_json::value::RawValue`); only the values the proxy
//! rewrites are decoded, and everything else is copied byte for byte: numbers of any precision,
//! key order, duplicate keys, escapes. A message nothing in it changes is forwarded as the very
//! line that came in. The only typed parts are the few members the proxy reads: `id`, `method`,
//! a request's `params.name`, `params.taskId` and `params.uri`, a cancellation's
//! `params.requestId`, a result's task handle, and a content block's `type`.
//!
//! # Requests, answers and the two id spaces
//!
//! The proxy remembers each client request by id until it is answered: what it asked (the
//! method, the tool, the task, the URI) decides how its answer is fenced, never what the
//! server's message says. The server's own requests to the client (sampling, elicitation,
//! roots) have ids of the server's, remembered apart; an answer is always looked up in the id
//! space of the side that asked. A task started by a `tools/call` is remembered with its tool.
//!
//! A message from the server answers a request only when it has an `id`, no `method`, exactly
//! one `result` or `error` member (an object), and an id that reads as the id of exactly one
//! waiting request *as the clients read ids*: the Python SDK turns a string id into a number
//! with `int()` (`"2"`, `" 2"`, `"+2"` are 2), the TypeScript SDK keys requests by `Number(id)`
//! (`"1"`, `"0x1"`, `1.0` are 1). Such an answer is fenced and forwarded with the request's own
//! id. Anything else — `"error": null` beside a `result`, an answer for no waiting request, an
//! `id` alone — is dropped and reported and answers nothing. A client request whose id reads
//! as a waiting one's is refused with an error. Every word the server chose (its name, a tool's
//! name, an id) is neutralised and stripped of control characters before the proxy repeats it
//! in an error or on stderr.
//!
//! # Robustness
//!
//! - **The upstream ends** (exits, crashes, closes its output): every request still waiting
//!   gets a JSON-RPC error (code -32000) saying so, any later one is refused the same way, and
//!   the proxy exits with the upstream's status, or 1 when that status is 0 but requests were
//!   left unanswered.
//! - **Garbage** from the upstream (a line that is not JSON, not UTF-8, or not a JSON-RPC
//!   message, and every message that is not exactly a request, a notification or an answer,
//!   above) is reported on stderr with its first 200 characters and dropped; the session goes
//!   on. A client line that is not JSON-RPC is answered by the proxy with the error a server
//!   would send, and not passed on.
//! - **Oversized** messages (over [`Options::with_max_message_bytes`], 64 MiB by default) are
//!   never held in memory: the line is streamed once through `serde_json` to learn its id and
//!   method, and every request waiting on it gets a JSON-RPC error naming the limit (a server's
//!   request gets its error from the proxy); stderr says it too.
//! - **The client goes away** (closes the proxy's stdin, or stops reading its stdout): the
//!   upstream's stdin is closed; if it has not exited within the grace period
//!   ([`Options::with_grace`], 2 s), its process group gets SIGTERM, then SIGKILL after another
//!   grace period. Once it has exited, anything it left in its process group is killed.
//!   SIGTERM, SIGINT and SIGHUP to the proxy do the same, skipping the first wait, and exit
//!   with 128 + the signal's number.
//! - **What the upstream started outside its process group** (a process that called `setsid`,
//!   a daemon's double fork) is ended too on Linux with [`ChildServer::with_subreaper`], which
//!   `fence mcp` turns on: the proxy's process is then a child subreaper, so such a process is
//!   re-parented to it when its parent exits; the proxy reaps those that exit during the
//!   session, and once the upstream has ended kills (SIGKILL) and reaps every child its process
//!   has, and the children those leave it, until none is left. With it, no process the
//!   upstream started outlives the proxy, short of the proxy itself being killed by SIGKILL,
//!   or a process that is not the upstream's descendant at all (one a service manager or a
//!   container engine's daemon starts at its request). It is off by default because it takes
//!   every child of the calling process for the upstream's. Without it, or on other systems,
//!   only the process group is ended, and a process that left it can outlive the proxy.
//! - **The upstream's stderr** is the proxy's own stderr, untouched; the proxy's reports are
//!   lines starting `fence mcp (<name>): `.
//!
//! # Speed
//!
//! Each direction is one thread with blocking I/O, so a message crosses the proxy with no
//! hand-off between threads. A message that needs no fencing is parsed once and written as it
//! came. `docs/mcp-proxy.md` in the repository has the benchmark: 1,000 small calls and 20
//! calls with a 10 MB result, direct against proxied.

// docs.rs builds with `--cfg docsrs` on nightly: `doc(cfg)` marks what needs a feature.
#![cfg_attr(docsrs, feature(doc_cfg))]

mod client;
mod engine;
mod fencing;
mod front;
mod gate;
mod ids;
mod json;
mod lines;
mod listed;
mod options;
mod pin;
mod requests;
#[cfg(feature = "rmcp")]
#[cfg_attr(docsrs, doc(cfg(feature = "rmcp")))]
pub mod rmcp;
mod said;
mod session;
mod shape;
mod signals;
#[cfg(test)]
mod table_copies;
mod upstream;
#[cfg(feature = "http")]
mod wire;

use std::process::ExitCode;

pub use crate::client::{Unfenceable, fence_tool_result};
pub use crate::options::{
    ChildServer, DEFAULT_GRACE, DEFAULT_MAX_MESSAGE_BYTES, Front, Options, PinMode,
    StructuredContent, Upstream,
};
#[cfg(feature = "http")]
pub use crate::options::{HttpFront, RemoteServer};

/// Runs the proxy: starts the upstream server (or reaches the one at a URL), serves MCP on
/// this process's stdin and stdout (or at an HTTP front's address) until either side ends (an
/// HTTP front: until a signal ends it), and returns the exit status the process should end
/// with (see the crate docs, "Robustness").
///
/// It blocks, running each direction on a thread of its own, and watches SIGTERM, SIGINT and
/// SIGHUP while it runs (on Unix). Call it from `main`; from inside an async runtime, call it
/// through the runtime's blocking pool (`tokio::task::spawn_blocking`). With
/// [`ChildServer::with_subreaper`] (Linux), the calling process is a child subreaper until
/// `run` returns, and every child it has is taken for the upstream's: reaped when it exits,
/// killed when the proxy ends.
///
/// ```no_run
/// use std::process::ExitCode;
///
/// fn main() -> ExitCode {
///     let mut args = std::env::args_os().skip(1);
///     let Some(command) = args.next() else {
///         eprintln!("usage: proxy COMMAND [ARGS…]");
///         return ExitCode::from(2);
///     };
///     let server = fence_mcp::ChildServer::new(command).with_args(args);
///     fence_mcp::run(&fence_mcp::Options::new(server))
/// }
/// ```
pub fn run(options: &Options) -> ExitCode {
    shape::run(options)
}

#[doc(hidden)]
pub mod __fuzz {
    //! The proxy's session without processes or threads, for the fuzz target and property
    //! tests in `fence-checks`. Not public API: it may change in any release.

    use std::io::BufReader;

    use crate::engine::collected;
    use crate::lines::next_outcome;
    use crate::session::{Session, Side};

    /// One proxied connection, fed bytes as they would arrive on each side's pipe.
    #[derive(Debug)]
    pub struct Relay {
        session: Session,
        limit: usize,
    }

    /// What the proxy wrote while reading some bytes: to each side, in order, and on stderr.
    #[derive(Debug, Default)]
    pub struct Delivered {
        /// The lines the client reads, without their newlines.
        pub to_client: Vec<Vec<u8>>,
        /// The lines the upstream reads.
        pub to_upstream: Vec<Vec<u8>>,
        /// The proxy's reports, without its `fence mcp (name): ` prefix.
        pub notes: Vec<String>,
    }

    impl Relay {
        /// A relay whose upstream is called `name` until its `initialize` answer says otherwise,
        /// taking messages of up to `limit` bytes.
        pub fn new(name: &str, limit: usize) -> Relay {
            Relay {
                session: Session::new(name.to_owned(), false),
                limit,
            }
        }

        /// The client wrote `bytes` (any number of lines).
        pub fn from_client(&self, bytes: &[u8]) -> Delivered {
            self.read(Side::Client, bytes)
        }

        /// The upstream wrote `bytes`.
        pub fn from_upstream(&self, bytes: &[u8]) -> Delivered {
            self.read(Side::Upstream, bytes)
        }

        /// The relay removes `structuredContent` and `outputSchema`
        /// ([`StructuredContent::Remove`](crate::StructuredContent::Remove)).
        #[must_use]
        pub fn removing_structured_content(self) -> Relay {
            Relay {
                session: self.session.removing_structured_content(),
                limit: self.limit,
            }
        }

        /// The upstream closed its output.
        pub fn upstream_gone(&self) -> Delivered {
            Delivered {
                to_client: self.session.upstream_gone(),
                ..Delivered::default()
            }
        }

        /// What the proxy calls the upstream.
        pub fn name(&self) -> String {
            self.session.name()
        }

        fn read(&self, from: Side, bytes: &[u8]) -> Delivered {
            let mut reader = BufReader::with_capacity(64, bytes);
            let mut line = Vec::new();
            let mut delivered = Delivered::default();
            while let Some(mut outcome) =
                next_outcome(&self.session, self.limit, from, &mut reader, &mut line)
            {
                delivered.notes.append(&mut outcome.notes);
                let (onward, back) = match from {
                    Side::Client => (&mut delivered.to_upstream, &mut delivered.to_client),
                    Side::Upstream => (&mut delivered.to_client, &mut delivered.to_upstream),
                };
                onward.extend(collected(&self.session, outcome, &line, |reply| {
                    back.push(reply);
                }));
            }
            delivered
        }
    }
}
