//! An MCP proxy that fences every tool result of any MCP server, in any language.
//!
//! Most MCP servers are not written with this toolkit: a fetch server from npm, a filesystem
//! server, a browser driver. Their tool results reach the model unmarked. The proxy forwards
//! the whole protocol in both directions and wraps what the server hands the model in
//! `<untrusted-content source=tool:NAME>` markers. This crate is the proxy as a library; the
//! `fence mcp` command (crate `fence-cli`) is its command line.
//!
//! ```no_run
//! use std::process::ExitCode;
//!
//! use fence_mcp::{ChildServer, Options};
//!
//! fn main() -> ExitCode {
//!     let server = ChildServer::new("npx")
//!         .with_args(["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]);
//!     fence_mcp::run(&Options::new(server))
//! }
//! ```
//!
//! # Shapes
//!
//! The proxy is a front, where its client reaches it, joined to an upstream, the server it
//! fences. The upstream is a [`ChildServer`], a process the proxy runs and speaks to on stdio,
//! or a [`RemoteServer`], a server at a URL. [`Options::new`] serves the upstream on this
//! process's stdin and stdout; [`Options::with_front`] and an [`HttpFront`] serve it at
//! `http://ADDR/mcp` instead. The HTTP halves need the `http` feature, on by default.
//!
//! | front | upstream | options | command line |
//! |---|---|---|---|
//! | stdio | a process | `Options::new(ChildServer::new(COMMAND))` | `fence mcp -- COMMAND` |
//! | stdio | a URL | `Options::new(RemoteServer::new(URL))` | `fence mcp --url URL` |
//! | HTTP | a URL | `Options::new(RemoteServer::new(URL)).with_front(HttpFront::new(ADDR))` | `fence mcp --listen ADDR --url URL` |
//! | HTTP | a process per session | `Options::new(ChildServer::new(COMMAND)).with_front(HttpFront::new(ADDR))` | `fence mcp --listen ADDR -- COMMAND` |
//!
//! An HTTP front binds loopback addresses only unless told otherwise, and refuses a `Host` or
//! an `Origin` that is not its own.
//!
//! # What is fenced
//!
#![doc = include_str!("../docs/fencing-table.md")]
//!
//! In the library, `--name` is [`Options::with_name`], `--max-message-bytes`
//! [`Options::with_max_message_bytes`], `--structured-content remove`
//! [`StructuredContent::Remove`], `--pin` [`Options::with_pin`] with
//! [`PinMode::Enforce`], and `--max-sessions` and `--session-idle` (sessions, each a server
//! process, behind an HTTP front) [`HttpFront::with_max_sessions`] and
//! [`HttpFront::with_session_idle`].
//!
//! A program that calls MCP servers itself fences each result it receives with
//! [`fence_tool_result`], by the table's `tools/call` rows. With the `rmcp` feature,
//! [`rmcp::FencedClient`] is an rmcp client with the proxy's session inside its transport: every
//! message the server sends passes this whole table, by the proxy's own code, before rmcp reads
//! it.
//!
//! # More
//!
//! [`docs/mcp-proxy.md`] has the rest: the client configuration, HTTP on either side, pinning,
//! how ids are matched, what happens when either side ends or misbehaves, the limits, and the
//! benchmark.
//!
//! [`docs/mcp-proxy.md`]: https://github.com/untrusted-fence/untrusted-fence/blob/main/docs/mcp-proxy.md

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
pub use crate::options::{DEFAULT_MAX_SESSIONS, DEFAULT_SESSION_IDLE, HttpFront, RemoteServer};

/// Runs the proxy: starts the upstream server (or reaches the one at a URL), serves MCP on
/// this process's stdin and stdout (or at an HTTP front's address) until either side ends (an
/// HTTP front: until a signal ends it), and returns the exit status the process should end
/// with:
///
/// - 2 when the proxy cannot start: options that cannot be used (a pin file that cannot be
///   read, a URL that is not one; behind an HTTP front, a server's command that cannot be run,
///   an address it cannot listen on), before any server is started;
/// - 128 + N when signal N ended the proxy;
/// - on stdio with a child server, the server's own status, or 1 when that was 0 but requests
///   were left unanswered; 127 when its command is not found and 126 when it may not be run,
///   once the client's first request (its `initialize`) has been answered with why.
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

    #[cfg(feature = "http")]
    pub use crate::shape::http_url::checks::{
        Exchange, LIMIT as HTTP_LIMIT, Relayed, relay as relay_http,
    };

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
