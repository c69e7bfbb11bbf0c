//! The examples docs/cli.md shows for Python and Node.js, run against the binary built here:
//! each asserts what it prints. A missing interpreter fails the test (CI has both), unless
//! `FENCE_SKIP_LANGUAGE_TESTS=1` says this machine has neither on purpose.

use std::path::{Path, PathBuf};
use std::process::Command;

fn example(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("examples")
        .join(name)
}

/// Runs `interpreter example` with the built `fence` first on `PATH`; `None` when the
/// interpreter is not there and the language tests are skipped.
fn run_example(interpreter: &str, name: &str) -> Option<std::process::Output> {
    let bin = Path::new(env!("CARGO_BIN_EXE_fence")).parent().unwrap();
    let path = std::env::join_paths(std::iter::once(bin.to_path_buf()).chain(
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
    ))
    .unwrap();
    match Command::new(interpreter)
        .arg(example(name))
        .env("PATH", path)
        .output()
    {
        Ok(output) => Some(output),
        Err(error)
            if error.kind() == std::io::ErrorKind::NotFound
                && std::env::var_os("FENCE_SKIP_LANGUAGE_TESTS")
                    .is_some_and(|skip| skip == "1") =>
        {
            eprintln!("skipped: no `{interpreter}` on this machine (FENCE_SKIP_LANGUAGE_TESTS=1)");
            None
        }
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => panic!(
            "no `{interpreter}` on this machine: install it to run docs/cli.md's example, or set \
             FENCE_SKIP_LANGUAGE_TESTS=1"
        ),
        Err(error) => panic!("{interpreter}: {error}"),
    }
}

fn check(interpreter: &str, name: &str) {
    if let Some(output) = run_example(interpreter, name) {
        assert!(
            output.status.success(),
            "{name}: {}\n{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        assert!(
            String::from_utf8_lossy(&output.stdout)
                .starts_with("<untrusted-content source=tool:web-fetch>\n")
        );
    }
}

#[test]
fn the_python_example_fences_through_the_binary() {
    check("python3", "fence_from_python.py");
}

#[test]
fn the_node_example_fences_through_the_binary() {
    check("node", "fence_from_node.mjs");
}
