//! `fence mcp`: the MCP proxy (crate `fence-mcp`) on the command line.

use std::ffi::OsString;
use std::process::ExitCode;
use std::time::Duration;

use fence_mcp::{DEFAULT_MAX_MESSAGE_BYTES, Options};

/// Runs an MCP server on stdio as a child and serves MCP on this process's stdin and stdout,
/// forwarding the whole protocol unchanged, except that every tool result is fenced under
/// `tool:<the tool's name>` and every resource read under `resource:<its uri>`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Example, as an MCP client's configuration runs it:\n  \
    fence mcp -- npx -y @modelcontextprotocol/server-filesystem /tmp\n\n\
    Exit status: the server's own (128 + N when signal N ended it); 1 when the server exited \
    with 0 but left requests unanswered; 127 when COMMAND cannot be found.")]
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
    /// The MCP server's command and its arguments, after `--`
    #[arg(last = true, required = true, value_name = "COMMAND")]
    command: Vec<OsString>,
}

impl From<Args> for Options {
    fn from(args: Args) -> Options {
        let mut command = args.command.into_iter();
        // The proxy is all this process runs, so every child it has is the server's: what the
        // server starts outside its process group is ended with it too (Linux).
        let options = Options::new(command.next().unwrap_or_default())
            .with_args(command)
            .with_max_message_bytes(args.max_message_bytes)
            .with_grace(Duration::from_millis(args.grace_ms))
            .with_subreaper(true);
        match args.name {
            Some(name) => options.with_name(name),
            None => options,
        }
    }
}

/// Runs the proxy until the client or the server ends; the exit status is the server's.
pub(crate) fn run(args: Args) -> ExitCode {
    fence_mcp::run(&args.into())
}
