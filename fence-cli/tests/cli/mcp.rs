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

#[test]
fn the_pin_options_need_a_pin_file_and_a_known_mode() {
    for args in [
        &["mcp", "--pin-mode", "report", "sh", "-c", "exit 3"][..],
        &["mcp", "--pin-update", "sh", "-c", "exit 3"],
        &["mcp", "--pin", "p.json", "--pin-mode", "warn", "sh"],
    ] {
        let output = run(args, b"");
        assert_eq!(code(&output), 2, "{args:?}: {}", stderr(&output));
    }
    let dir = tempfile::tempdir().unwrap();
    let pin = dir.path().join("pin.json");
    let pin = pin.to_str().unwrap();
    for args in [
        &["mcp", "--pin", pin, "sh", "-c", "exit 3"][..],
        &[
            "mcp",
            "--pin",
            pin,
            "--pin-mode",
            "report",
            "--",
            "sh",
            "-c",
            "exit 3",
        ],
        &["mcp", "--pin", pin, "--pin-update", "sh", "-c", "exit 3"],
    ] {
        let output = run(args, b"");
        assert_eq!(code(&output), 3, "{args:?}: {}", stderr(&output));
        assert!(
            stderr(&output).contains("no such file; pinning"),
            "{args:?}: {}",
            stderr(&output)
        );
    }
}

#[test]
fn a_pin_file_that_cannot_be_read_stops_the_proxy_before_the_server_starts() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("pin.json");
    std::fs::write(&path, "not json").unwrap();
    let pin = path.to_str().unwrap();
    let output = run(&["mcp", "--pin", pin, "sh", "-c", "exit 3"], b"");
    assert_eq!(code(&output), 2, "{}", stderr(&output));
    assert!(
        stderr(&output).contains(&format!("cannot use the pin file {pin}: it is not JSON")),
        "{}",
        stderr(&output)
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "not json");
    let output = run(
        &[
            "mcp",
            "--pin",
            dir.path().to_str().unwrap(),
            "sh",
            "-c",
            "exit 3",
        ],
        b"",
    );
    assert_eq!(code(&output), 2, "a directory: {}", stderr(&output));
    let nowhere = dir.path().join("missing/pin.json");
    let output = run(
        &[
            "mcp",
            "--pin",
            nowhere.to_str().unwrap(),
            "sh",
            "-c",
            "exit 3",
        ],
        b"",
    );
    assert_eq!(code(&output), 2, "{}", stderr(&output));
    assert!(
        stderr(&output).contains("create it (`mkdir -p "),
        "{}",
        stderr(&output)
    );
}
