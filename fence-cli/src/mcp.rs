//! `fence mcp`: the MCP proxy (crate `fence-mcp`) on the command line.

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use fence_mcp::{
    ChildServer, DEFAULT_MAX_MESSAGE_BYTES, DEFAULT_MAX_SESSIONS, DEFAULT_SESSION_IDLE, HttpFront,
    Options, PinMode, RemoteServer, StructuredContent, Upstream,
};

/// Runs an MCP server on stdio as a child and serves MCP on this process's stdin and stdout,
/// forwarding the whole protocol unchanged, except that every tool result is fenced under
/// `tool:<the tool's name>` and every resource read under `resource:<its uri>`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Example, as an MCP client's configuration runs it:\n  \
    fence mcp -- npx -y @modelcontextprotocol/server-filesystem /tmp\n\n\
    A remote server, for a client that runs commands, and for one configured with a URL \
    (http://127.0.0.1:8931/mcp):\n  \
    fence mcp --url https://example.com/mcp --header 'Authorization: Bearer …'\n  \
    fence mcp --listen 127.0.0.1:8931 --url https://example.com/mcp\n\n\
    The `--` is optional: the first argument that is not one of the options above starts the \
    server's command, and everything after it is the server's.\n\n\
    Exit status (docs/mcp-proxy.md#exit-status):\n  \
    0         the client ended the session, and the server (-- COMMAND) exited with 0\n  \
    1         the server exited with 0 but left requests unanswered\n  \
    2         the proxy could not start: a bad argument, a pin FILE it cannot use, an address\n  \
    \x20         in use, a COMMAND behind --listen that cannot run\n  \
    126, 127  COMMAND may not be run, or cannot be found (its initialize is answered with why)\n  \
    128 + N   signal N ended the proxy, or the server\n  \
    other     the server's own status (-- COMMAND over stdio), which may be any of these")]
// The doc comments are `--help`'s text, which shows Markdown as it is: no backticks, no links.
#[allow(
    clippy::doc_markdown,
    rustdoc::bare_urls,
    rustdoc::broken_intra_doc_links
)]
pub(crate) struct Args {
    /// What the proxy calls the server on stderr and in its errors [default: the server's own
    /// name, from its answer to `initialize`]
    #[arg(long, value_name = "NAME")]
    name: Option<String>,
    /// The largest message in bytes taken from either side; a longer one is reported, and the
    /// request waiting on it gets an error
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_MAX_MESSAGE_BYTES)]
    max_message_bytes: usize,
    /// How long the server has to exit once its input closes, and again after SIGTERM
    #[arg(long, value_name = "MS", default_value_t = 2000)]
    grace_ms: u64,
    /// What to do with a tool result's `structuredContent`, which cannot be fenced: keep it
    /// with every string neutralised (it reaches a model unlabelled), or remove it and every
    /// tool's `outputSchema`, so clients read the fenced `content` instead
    #[arg(long, value_name = "WHAT", value_enum, default_value_t = Structured::Neutralise)]
    structured_content: Structured,
    /// Pin what the server says about itself — its tools, prompts and instructions — in FILE:
    /// recorded when FILE does not exist (trust on first use; review it), and compared by
    /// meaning with every list and `initialize` answer after that. A missing folder of FILE's
    /// is made (mode 0700) when it is under your home folder
    #[arg(long, value_name = "FILE")]
    pin: Option<PathBuf>,
    /// What a tool, prompt or instructions that changed since they were pinned, or are new,
    /// do: `enforce` leaves them out of what the client receives and refuses calls to them;
    /// `report` forwards them. Both report each change on stderr
    #[arg(long, value_name = "MODE", value_enum, default_value_t = Pin::Enforce, requires = "pin")]
    pin_mode: Pin,
    /// Record what the server says now into the pin FILE, forwarding everything, and say on
    /// stderr what changed in FILE: the way to approve a change
    #[arg(long, requires = "pin")]
    pin_update: bool,
    /// Proxy the MCP server at URL over Streamable HTTP, rather than one run as a child over
    /// stdio
    #[arg(long, value_name = "URL")]
    url: Option<String>,
    /// A header sent upstream on every HTTP request, as 'Name: value' (a static token: for
    /// example 'Authorization: Bearer …'); may be given several times
    #[arg(long, value_name = "HEADER", requires = "url")]
    header: Vec<String>,
    /// Serve the MCP endpoint over Streamable HTTP at http://ADDR/mcp rather than on stdin and
    /// stdout (ADDR as 127.0.0.1:8931; port 0 picks a free one, which stderr names)
    #[arg(long, value_name = "ADDR")]
    listen: Option<String>,
    /// Let --listen bind an address other machines can reach. The proxy authenticates no one:
    /// anyone who reaches it uses the server, with the credentials of --header
    #[arg(long, requires = "listen")]
    allow_network_clients_without_auth: bool,
    /// A Host name the HTTP endpoint answers to besides localhost, 127.0.0.1 and [::1] (all
    /// others are refused, against DNS rebinding); may be given several times
    #[arg(long, value_name = "HOST", requires = "listen")]
    allow_host: Vec<String>,
    /// An Origin the HTTP endpoint accepts besides loopback ones (a web client's, as
    /// https://app.example.com); may be given several times
    #[arg(long, value_name = "ORIGIN", requires = "listen")]
    allow_origin: Vec<String>,
    /// With --listen and a server's command: how many sessions, each a process of the
    /// server's, run at once; past them, a client's initialize is refused with 503 and
    /// Retry-After until one ends
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_SESSIONS as u64,
          value_parser = clap::value_parser!(u64).range(1..),
          requires = "listen", conflicts_with = "url")]
    max_sessions: u64,
    /// With --listen and a server's command: end a session, and its process, once no request
    /// has named it and no client has waited on it for SECONDS (a client that never deletes
    /// its session leaves nothing running for longer); a request naming it then gets 404
    #[arg(long, value_name = "SECONDS", default_value_t = DEFAULT_SESSION_IDLE.as_secs(),
          value_parser = clap::value_parser!(u64).range(1..),
          requires = "listen", conflicts_with = "url")]
    session_idle: u64,
    /// The MCP server's command and its arguments. Everything from the first argument that is
    /// not one of the proxy's options on is the server's; a `--` before it is optional
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "COMMAND"
    )]
    command: Vec<OsString>,
}

/// `--pin-mode`'s values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Pin {
    Enforce,
    Report,
}

/// `--structured-content`'s values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Structured {
    Neutralise,
    Remove,
}

impl From<Args> for Options {
    fn from(args: Args) -> Options {
        let upstream: Upstream = if let Some(url) = args.url {
            args.header
                .iter()
                .fold(RemoteServer::new(url), |server, header| {
                    let (name, value) = header.split_once(':').unwrap_or((header, ""));
                    server.with_header(name, value)
                })
                .into()
        } else {
            // The proxy is all this process runs, so every child it has is the server's: what
            // the server starts outside its process group is ended with it too (Linux).
            let mut command = args.command.into_iter();
            ChildServer::new(command.next().unwrap_or_default())
                .with_args(command)
                .with_subreaper(true)
                .into()
        };
        let mut options = Options::new(upstream)
            .with_max_message_bytes(args.max_message_bytes)
            .with_grace(Duration::from_millis(args.grace_ms))
            .with_structured_content(match args.structured_content {
                Structured::Neutralise => StructuredContent::Neutralise,
                Structured::Remove => StructuredContent::Remove,
            })
            .with_pin_update(args.pin_update);
        if let Some(addr) = args.listen {
            let front = HttpFront::new(addr)
                .with_network_clients(args.allow_network_clients_without_auth)
                .with_max_sessions(usize::try_from(args.max_sessions).unwrap_or(usize::MAX))
                .with_session_idle(Duration::from_secs(args.session_idle));
            let front = args
                .allow_host
                .into_iter()
                .fold(front, HttpFront::with_allowed_host);
            let front = args
                .allow_origin
                .into_iter()
                .fold(front, HttpFront::with_allowed_origin);
            options = options.with_front(front);
        }
        if let Some(file) = args.pin {
            let mode = match args.pin_mode {
                Pin::Enforce => PinMode::Enforce,
                Pin::Report => PinMode::Report,
            };
            options = options.with_pin(file, mode);
        }
        match args.name {
            Some(name) => options.with_name(name),
            None => options,
        }
    }
}

/// What `fence mcp` says when the command line names no server.
const USAGE_HINT: &str = "put the server's command after `--`, as in\n  \
    fence mcp -- npx -y @modelcontextprotocol/server-filesystem /tmp\n\
    or name a remote server's URL, as in\n  \
    fence mcp --url https://example.com/mcp --header 'Authorization: Bearer …'";

/// Runs the proxy until the client or the server ends; the exit status is the server's.
pub(crate) fn run(args: Args) -> ExitCode {
    if args.url.is_some() {
        if let Some(first) = args.command.first() {
            eprintln!(
                "error: fence mcp proxies either the server at --url or a command, not both \
                 (found the command `{}`)",
                first.to_string_lossy()
            );
            return ExitCode::from(2);
        }
        if let Some(header) = args.header.iter().find(|header| !header.contains(':')) {
            eprintln!("error: --header {header:?} has no `:`; write it as 'Name: value'");
            return ExitCode::from(2);
        }
        return fence_mcp::run(&args.into());
    }
    let Some(first) = args.command.first() else {
        eprintln!("error: fence mcp needs the MCP server to run: {USAGE_HINT}");
        return ExitCode::from(2);
    };
    // clap hands an option it does not know to the command, which no server's is: a typo, or
    // an option of the server's given before its command.
    if first.to_string_lossy().starts_with('-') {
        eprintln!(
            "error: fence mcp has no option `{}` (`fence mcp --help` lists its options); if it \
             is the server's, put it after the server's command, as in\n  \
             fence mcp -- node server.js {}",
            first.to_string_lossy(),
            first.to_string_lossy()
        );
        return ExitCode::from(2);
    }
    fence_mcp::run(&args.into())
}
