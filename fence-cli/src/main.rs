//! `fence`: the Untrusted Fence from any language.
//!
//! Each subcommand is a module with its own clap `Args` and a `run` function; adding one is a
//! new module, a variant of [`Command`] and an arm of [`Command::run`].
//!
//! Exit status, the same for every subcommand but `mcp`: 0 when the job is done and the input is
//! sound; 1 when the input is at fault (a malformed block, an audit's findings); 2 when the job
//! could not be done (input that cannot be read, output that cannot be written, a bad argument).
//! `fence mcp` exits with the status of the server it runs (see `fence_mcp::run`).

mod audit;
mod demo;
mod exit;
mod input;
mod mcp;
mod neutralise;
mod parse;
mod style;
mod wrap;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Fence untrusted text before a model reads it, read a block back, and audit what an agent
/// runtime handed its model.
#[derive(Debug, Parser)]
#[command(
    name = "fence",
    version,
    propagate_version = true,
    max_term_width = 100
)]
#[command(
    after_help = "Exit status: 0 done and sound; 1 the input is at fault (a malformed \
    block, audit findings); 2 the job could not be done (unreadable input, a bad argument)."
)]
struct Cli {
    /// When to colour the output: `auto` colours a terminal, unless `NO_COLOR` is set.
    #[arg(long, global = true, value_enum, default_value_t = style::ColorWhen::Auto)]
    color: style::ColorWhen,

    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Fence stdin (or FILE) under a source, streaming, in constant memory.
    Wrap(wrap::Args),
    /// Neutralise every marker in stdin (or FILE), streaming: the rewrite alone, no fence.
    #[command(visible_alias = "neutralize")]
    Neutralise(neutralise::Args),
    /// Read one fenced block and print its source and content; say why a malformed one is not
    /// a block.
    Parse(parse::Args),
    /// Verify conversation records, traces and SSE captures: findings as `file:line: kind:
    /// detail`, then a summary.
    Audit(audit::Args),
    /// Run a scripted agent turn: tools, tasks and exemptions, fenced, written to the three
    /// surfaces, then audited.
    Demo(demo::Args),
    /// Run an MCP server behind a proxy that fences every tool result it hands the model.
    Mcp(mcp::Args),
}

impl Command {
    fn run(self) -> ExitCode {
        let result = match self {
            Command::Wrap(args) => wrap::run(&args),
            Command::Neutralise(args) => neutralise::run(&args),
            Command::Parse(args) => parse::run(&args),
            Command::Audit(args) => audit::run(&args),
            Command::Demo(args) => demo::run(&args),
            // The proxy exits with its server's status, not with an `exit::Status`.
            Command::Mcp(args) => return mcp::run(args),
        };
        result.unwrap_or_else(exit::Failure::report).into()
    }
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => {
            // clap's words are the fix: an option's value, an option another needs. Where the
            // server's command is missing, or an option may be the server's, `mcp::run` says so.
            let _ = err.print();
            return ExitCode::from(u8::try_from(err.exit_code()).unwrap_or(2));
        }
    };
    cli.color.apply();
    cli.command.run()
}
