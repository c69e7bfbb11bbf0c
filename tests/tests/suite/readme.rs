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

/// The code blocks of `markdown`, in order: each block's info string and body.
fn blocks(markdown: &str) -> Vec<(&str, &str)> {
    let mut found = Vec::new();
    let mut rest = markdown;
    while let Some(start) = rest.find("\n```") {
        let opened = &rest[start + 4..];
        let Some(info_end) = opened.find('\n') else {
            break;
        };
        let body = &opened[info_end + 1..];
        let end = body.find("```\n").expect("every code block is closed");
        found.push((&opened[..info_end], &body[..end]));
        rest = &body[end + 3..];
    }
    found
}

/// `dependencies` with the `path` of each of this workspace's crates it names, while they are
/// unpublished; it must name them as `NAME = { version = "0.1",`.
fn with_paths(dependencies: &str) -> String {
    let root = root();
    let mut dependencies = dependencies.to_owned();
    for krate in ["fence-runtime", "fence-mcp"] {
        let line = format!(r#"{krate} = {{ version = "0.1","#);
        let path = root.join(krate);
        dependencies = dependencies.replacen(
            &line,
            &format!(
                r#"{krate} = {{ version = "0.1", path = "{}","#,
                path.display()
            ),
            1,
        );
    }
    dependencies
}

/// Every Rust example of docs/mcp.md compiles as pasted, each in a fresh crate outside this
/// workspace whose `[dependencies]` are the page's `toml` block above it (so a dependency the
/// page leaves out fails here), with the workspace's `Cargo.lock`; and every JSON block (the
/// clients' configurations, a result) is JSON. `cargo check`, not `build`: the examples are a
/// server and a client that run only against each other's kind, and checking costs a CI run
/// with a warm compiler cache 15 s where building cost 35 s.
#[test]
fn the_mcp_page_examples_compile_as_pasted() {
    let root = root();
    let markdown = std::fs::read_to_string(root.join("docs/mcp.md")).expect("docs/mcp.md reads");
    let mut crates: Vec<(&str, Vec<&str>)> = Vec::new();
    for (info, body) in blocks(&markdown) {
        match info {
            "toml" => crates.push((body, Vec::new())),
            "rust" => crates
                .last_mut()
                .expect("a Rust example comes after the dependencies it builds with")
                .1
                .push(body),
            "json" => {
                serde_json::from_str::<serde_json::Value>(body)
                    .unwrap_or_else(|err| panic!("a JSON block of docs/mcp.md: {err}\n{body}"));
            }
            "sh" | "text" => {}
            other => panic!("docs/mcp.md has a block of `{other}`, which this test does not build"),
        }
    }
    assert_eq!(
        crates
            .iter()
            .map(|(_, programs)| programs.len())
            .collect::<Vec<_>>(),
        [2, 1],
        "docs/mcp.md's examples: the server's two, then the client's"
    );
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    for (index, (dependencies, programs)) in crates.iter().enumerate() {
        let name = format!("example-docs-mcp-{index}");
        let dir = std::env::temp_dir().join(format!("{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("src/bin")).expect("the crate's folder is made");
        let manifest = format!(
            "[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n{}",
            with_paths(dependencies)
        );
        std::fs::write(dir.join("Cargo.toml"), manifest).expect("Cargo.toml is written");
        for (number, program) in programs.iter().enumerate() {
            std::fs::write(dir.join(format!("src/bin/example{number}.rs")), program)
                .expect("the example is written");
        }
        std::fs::copy(root.join("Cargo.lock"), dir.join("Cargo.lock")).expect("Cargo.lock copies");
        let output = Command::new(&cargo)
            .args(["check", "--quiet", "--bins", "--manifest-path"])
            .arg(dir.join("Cargo.toml"))
            .env("CARGO_TARGET_DIR", root.join("target/readme-example"))
            .output()
            .expect("cargo runs");
        let _ = std::fs::remove_dir_all(&dir);
        assert!(
            output.status.success(),
            "docs/mcp.md's examples under its dependencies block {index} do not compile as \
             pasted:\n{dependencies}\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
}

/// docs/mcp.md names the versions of async-openai and genai that `fence-runtime`'s features of
/// those names are built on, as its `Cargo.toml` says them.
#[test]
fn the_mcp_page_names_the_llm_clients_versions_the_features_use() {
    let root = root();
    let manifest = std::fs::read_to_string(root.join("fence-runtime/Cargo.toml"))
        .expect("fence-runtime's manifest reads");
    let page = std::fs::read_to_string(root.join("docs/mcp.md")).expect("docs/mcp.md reads");
    for krate in ["async-openai", "genai"] {
        let line = manifest
            .lines()
            .find(|line| line.starts_with(&format!("{krate} = {{ version = \"")))
            .unwrap_or_else(|| panic!("fence-runtime depends on {krate}"));
        let version = line.split('"').nth(1).expect("a version");
        assert!(
            page.contains(&format!("on {krate} {version})")),
            "docs/mcp.md names {krate} {version}"
        );
    }
}

/// Every `cargo install` the documentation shows builds with the repository's `Cargo.lock`
/// (`--locked`), the versions CI tests, rather than resolving its dependencies anew.
#[test]
fn every_cargo_install_shown_is_locked() {
    let root = root();
    let mut pages = vec![root.join("README.md"), root.join("fence-mcp/README.md")];
    for entry in std::fs::read_dir(root.join("docs")).expect("docs/ reads") {
        pages.push(entry.expect("an entry of docs/").path());
    }
    let mut shown = 0;
    for page in pages
        .iter()
        .filter(|page| page.extension().is_some_and(|ext| ext == "md"))
    {
        let text = std::fs::read_to_string(page).expect("the page reads");
        for line in text
            .lines()
            .filter(|line| line.contains("cargo install --"))
        {
            shown += 1;
            assert!(
                line.contains("cargo install --locked"),
                "{}: {line}",
                page.display()
            );
        }
    }
    assert!(shown >= 4, "the install lines are found: {shown}");
}
