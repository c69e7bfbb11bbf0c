//! The binaries the benchmark runs, built by cargo.

use std::path::PathBuf;

/// The `fence` binary and the test server.
pub(crate) struct Binaries {
    pub(crate) fence: PathBuf,
    pub(crate) server: PathBuf,
}

/// Builds both as the tests do (`--workspace --all-features`), in the profile of this
/// build, whose units they share: `test` under `cargo test`, whose build has them already;
/// `bench` under `cargo bench` (optimised as `release` is, with debug info for a profiler).
pub(crate) fn build() -> Binaries {
    let profile = if cfg!(debug_assertions) {
        "test"
    } else {
        "bench"
    };
    let manifest = concat!(env!("CARGO_MANIFEST_DIR"), "/../Cargo.toml");
    let messages = escargot::CargoBuild::new()
        .manifest_path(manifest)
        .arg("--workspace")
        .all_features()
        .bin("fence")
        .bin("mcp_test_server")
        .arg("--profile")
        .arg(profile)
        .exec()
        .expect("cargo builds the binaries");
    let (mut fence, mut server) = (None, None);
    for message in messages {
        let message = message.expect("cargo reports the build");
        if let Ok(escargot::format::Message::CompilerArtifact(artifact)) = message.decode() {
            let path = artifact.executable.map(std::borrow::Cow::into_owned);
            match artifact.target.name.as_ref() {
                "fence" => fence = path.or(fence),
                "mcp_test_server" => server = path.or(server),
                _ => {}
            }
        }
    }
    Binaries {
        fence: fence.expect("cargo built the fence binary"),
        server: server.expect("cargo built the test server"),
    }
}
