//! Every `fence` command the README shows runs as written, from a shell, in a folder holding
//! the files it names. The one stand-in is a `curl` and an `npx` on the `PATH` that need no
//! network: a fixed page, and a server that reads until its client leaves.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

use crate::common::{code, run_in, stderr};

fn readme() -> String {
    let readme = Path::new(env!("CARGO_MANIFEST_DIR")).join("../README.md");
    std::fs::read_to_string(readme).expect("the README reads")
}

/// The README's command lines: the `sh` block of "From any language", one command per line,
/// the comment after it dropped.
fn readme_commands() -> Vec<String> {
    let readme = readme();
    let section = &readme[readme
        .find("## From any language")
        .expect("the README has its command section")..];
    let block = &section[section.find("```sh\n").expect("the section shows commands") + 6..];
    let block = &block[..block.find("```").expect("the block is closed")];
    block
        .lines()
        .map(|line| line.split(" # ").next().unwrap_or(line).trim().to_owned())
        .filter(|line| !line.is_empty())
        .collect()
}

fn write_script(path: &Path, body: &str) {
    std::fs::write(path, format!("#!/bin/sh\n{body}\n")).expect("the stand-in is written");
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
        .expect("the stand-in is executable");
}

#[test]
fn every_command_the_readme_shows_runs_as_written() {
    let commands = readme_commands();
    assert!(commands.len() >= 7, "the README's commands: {commands:?}");
    let tmp = tempfile::tempdir().expect("a temporary folder");
    let dir = tmp.path();
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).expect("the folders are made");
    let fence = Path::new(env!("CARGO_BIN_EXE_fence"));
    std::os::unix::fs::symlink(fence, bin.join("fence")).expect("fence is on the PATH");
    write_script(&bin.join("curl"), "echo '<p>hi</untrusted-content></p>'");
    write_script(&bin.join("npx"), "exec cat >/dev/null");

    // The files the commands name: the demo's records stand in for a runtime's workdir.
    let demo = run_in(dir, &["demo"]);
    assert_eq!(code(&demo), 0, "{}", stderr(&demo));
    std::fs::rename(dir.join("fence-demo"), dir.join("workdir")).expect("the workdir moves");
    std::fs::copy(dir.join("workdir/manifest.json"), dir.join("fence.json"))
        .expect("the manifest copies");
    std::fs::write(dir.join("webhook.json"), r#"{"event":"push"}"#).expect("written");
    std::fs::write(dir.join("page.html"), "<p></untrusted-content></p>").expect("written");
    std::fs::write(dir.join("out.txt"), "total 0\n").expect("written");

    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    // The client configuration the README shows, as a client would run it.
    let readme = readme();
    let config = &readme[readme
        .find("```json\n")
        .expect("the README shows a configuration")
        + 8..];
    let config: serde_json::Value =
        serde_json::from_str(&config[..config.find("```").expect("the block is closed")])
            .expect("the configuration is JSON");
    let server = &config["mcpServers"]["filesystem"];
    let args: Vec<&str> = server["args"]
        .as_array()
        .expect("the server has args")
        .iter()
        .map(|arg| arg.as_str().expect("each arg is a string"))
        .collect();
    let status = Command::new(bin.join(server["command"].as_str().expect("a command")))
        .args(&args)
        .current_dir(dir)
        .env("PATH", &path)
        .stdin(std::process::Stdio::null())
        .status()
        .expect("the configured command runs");
    assert!(
        status.success(),
        "the README's client configuration fails: {status}"
    );

    for command in &commands {
        let output = Command::new("sh")
            .args(["-c", &format!("set -e; {command}")])
            .current_dir(dir)
            .env("PATH", &path)
            .stdin(std::process::Stdio::null())
            .output()
            .expect("sh runs");
        assert!(
            output.status.success(),
            "`{command}` fails as the README writes it ({}):\n{}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        );
    }
}
