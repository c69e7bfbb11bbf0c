//! Each README's Rust example builds and runs exactly as pasted: in a fresh crate of its own,
//! outside this workspace, whose `Cargo.toml` is the README's `[dependencies]` block. The one
//! addition is a `path` to this workspace's `fence-runtime`, while the crates are unpublished.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The workspace's root directory.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ sits in the workspace")
        .to_path_buf()
}

/// The code blocks of `markdown` whose info string is `lang`, in order.
fn snippets<'a>(markdown: &'a str, lang: &str) -> Vec<&'a str> {
    let fence = format!("```{lang}\n");
    let mut found = Vec::new();
    let mut rest = markdown;
    while let Some(start) = rest.find(&fence) {
        let body = &rest[start + fence.len()..];
        let end = body.find("```\n").expect("every code block is closed");
        found.push(&body[..end]);
        rest = &body[end..];
    }
    found
}

/// What the example prints: the block spelled out from the grammar, not made by the code
/// under test.
fn expected_output() -> String {
    let json = r#"{"status":200,"body":"<p>https://example.com</p><!MURMUR-NEUTRALISED!/untrusted-content>"}"#;
    fence_tests::block("tool:web-fetch", json) + "\n"
}

/// Builds and runs the README at `readme` (relative to the root) as a fresh binary crate, and
/// returns what it printed.
fn run_readme(readme: &str) -> String {
    let root = root();
    let markdown = std::fs::read_to_string(root.join(readme)).expect("the README reads");
    let [dependencies] = snippets(&markdown, "toml")[..] else {
        panic!("{readme} has one toml block, the dependencies");
    };
    let [program] = snippets(&markdown, "rust")[..] else {
        panic!("{readme} has one Rust example");
    };
    assert!(
        snippets(&markdown, "text")
            .iter()
            .any(|shown| shown.trim_end() == expected_output().trim_end()),
        "{readme} shows what its example prints"
    );

    let runtime = root.join("fence-runtime");
    let line = r#"fence-runtime = { version = "0.1","#;
    assert!(
        dependencies.contains(line),
        "{readme} depends on fence-runtime 0.1"
    );
    let runtime = runtime.display();
    let dependencies = dependencies.replacen(
        line,
        &format!(r#"fence-runtime = {{ version = "0.1", path = "{runtime}","#),
        1,
    );

    let name = readme.replace(['/', '.'], "-").to_lowercase();
    let name = format!("example-{name}");
    let dir = std::env::temp_dir().join(format!("{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("src")).expect("the crate's folder is made");
    let manifest = format!(
        "[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n{dependencies}"
    );
    std::fs::write(dir.join("Cargo.toml"), manifest).expect("Cargo.toml is written");
    std::fs::write(dir.join("src/main.rs"), program).expect("main.rs is written");
    // The workspace's lock file: the fresh crate builds with the versions the workspace is
    // tested with (cargo drops what it does not use), and needs no index update.
    std::fs::copy(root.join("Cargo.lock"), dir.join("Cargo.lock")).expect("Cargo.lock copies");

    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let output = Command::new(cargo)
        .args(["run", "--quiet", "--manifest-path"])
        .arg(dir.join("Cargo.toml"))
        .env("CARGO_TARGET_DIR", root.join("target/readme-example"))
        .output()
        .expect("cargo runs");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        output.status.success(),
        "{readme}'s example does not build or run as pasted:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).expect("the example prints UTF-8")
}

#[test]
fn the_readme_example_builds_as_pasted_and_prints_the_block() {
    assert_eq!(run_readme("README.md"), expected_output());
}

#[test]
fn the_crates_io_readme_example_builds_as_pasted_and_prints_the_block() {
    assert_eq!(run_readme("fence-runtime/README.md"), expected_output());
}
