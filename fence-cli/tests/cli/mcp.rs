//! `fence mcp`'s command line: the server's command with or without `--`, and what a usage
//! error says. (The proxy itself is tested in `fence-mcp`, against its own test server.)

use crate::common::{code, run, stderr, stdout};

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

/// An option the proxy does not have may be the server's, given before its command: the error
/// says where it goes. Other usage errors are clap's own words, which name the fix, and say
/// nothing of the server's command.
#[test]
fn only_a_usage_error_about_the_servers_command_says_where_to_put_it() {
    let output = run(&["mcp", "--bogus", "node", "server.js"], b"");
    assert_eq!(code(&output), 2);
    assert!(
        stderr(&output).contains(
            "fence mcp has no option `--bogus` (`fence mcp --help` lists its options); if it is \
             the server's, put it after the server's command, as in\n  \
             fence mcp -- node server.js --bogus"
        ),
        "{}",
        stderr(&output)
    );
    for (args, said) in [
        (
            &["--color", "never", "mcp", "--grace-ms", "soon", "node"][..],
            "invalid value 'soon' for '--grace-ms <MS>'",
        ),
        (
            &["mcp", "--structured-content", "fence", "node"],
            "[possible values: neutralise, remove]",
        ),
        (
            &["mcp", "--pin", "p.json", "--pin-mode", "strict", "node"],
            "[possible values: enforce, report]",
        ),
        (&["mcp", "--pin-mode", "report", "node"], "--pin <FILE>"),
        (
            &[
                "mcp",
                "--url",
                "http://x",
                "--listen",
                "127.0.0.1:0",
                "--max-sessions",
                "3",
            ],
            "cannot be used with",
        ),
        (&["wrap", "--bogus"], "unexpected argument '--bogus'"),
    ] {
        let output = run(args, b"");
        assert_eq!(code(&output), 2, "{args:?}");
        let stderr = stderr(&output);
        assert!(stderr.contains(said), "{args:?}: {stderr}");
        assert!(!stderr.contains("server's command"), "{args:?}: {stderr}");
    }
}

/// `fence mcp --help` lists the exit statuses of the table in docs/mcp-proxy.md, in its order.
#[test]
fn the_exit_statuses_of_help_are_the_docs_table() {
    let docs = include_str!("../../../docs/mcp-proxy.md");
    let section = docs
        .split_once("\n## Exit status\n")
        .expect("docs/mcp-proxy.md has an `## Exit status` section")
        .1;
    let documented: Vec<&str> = section
        .lines()
        .skip_while(|line| !line.starts_with("| status |"))
        .skip(2)
        .take_while(|line| line.starts_with('|'))
        .map(|row| row.split('|').nth(1).unwrap_or_default().trim())
        .collect();
    let help = run(&["mcp", "--help"], b"");
    let help = stdout(&help);
    let listed: Vec<String> = help
        .split_once("Exit status")
        .expect("the help lists the exit statuses")
        .1
        .lines()
        .skip(1)
        .filter(|line| line.starts_with("  ") && !line.starts_with("   "))
        .map(|line| {
            line.trim_start()
                .split("  ")
                .next()
                .unwrap_or_default()
                .to_owned()
        })
        .collect();
    assert!(documented.len() >= 5, "{documented:?}");
    assert_eq!(listed, documented, "{help}");
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
