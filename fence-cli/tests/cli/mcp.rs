//! `fence mcp`'s command line: the server's command with or without `--`, and what a usage
//! error says. (The proxy itself is tested in `fence-mcp`, against its own test server.)

use crate::common::{code, run, stderr};

#[test]
fn the_servers_command_may_follow_the_options_with_or_without_a_double_dash() {
    // A server that exits at once with its own status: the proxy exits with it, so the
    // command ran, arguments starting with `-` and all.
    for args in [
        &["mcp", "sh", "-c", "exit 3"][..],
        &["mcp", "--", "sh", "-c", "exit 3"],
        &["mcp", "--grace-ms", "100", "sh", "-c", "exit 3"],
        &["mcp", "--name", "x", "--", "sh", "-c", "exit 3"],
        // What the MCP Inspector runs after stripping the `--` a user typed.
        &[
            "mcp",
            "--max-message-bytes",
            "1000",
            "sh",
            "-c",
            "exit 3",
            "--name",
            "y",
        ],
    ] {
        let output = run(args, b"");
        assert_eq!(code(&output), 3, "{args:?}: {}", stderr(&output));
    }
}

#[test]
fn no_server_command_says_where_to_put_it() {
    let output = run(&["mcp"], b"");
    assert_eq!(code(&output), 2);
    assert!(
        stderr(&output).contains("put the server's command after `--`"),
        "{}",
        stderr(&output)
    );
    let output = run(&["mcp", "--name", "x"], b"");
    assert_eq!(code(&output), 2);
    assert!(
        stderr(&output).contains("after `--`"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn a_usage_error_says_where_to_put_the_servers_command() {
    for args in [
        &["mcp", "--bogus", "node", "server.js"][..],
        &["--color", "never", "mcp", "--grace-ms", "soon", "node"],
        &["mcp", "--structured-content", "fence", "node"],
    ] {
        let output = run(args, b"");
        assert_eq!(code(&output), 2, "{args:?}");
        assert!(
            stderr(&output).contains("put the server's command after `--`"),
            "{args:?}: {}",
            stderr(&output)
        );
    }
    // Other subcommands' errors do not mention it.
    let output = run(&["wrap", "--bogus"], b"");
    assert_eq!(code(&output), 2);
    assert!(!stderr(&output).contains("server's command"));
}
