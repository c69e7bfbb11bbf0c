//! The four shapes of the proxy, each a front joined to an upstream, named by its two halves:
//!
//! | | child upstream (`-- COMMAND…`) | URL upstream (`--url URL`) |
//! |---|---|---|
//! | **stdio front** | [`stdio_child`] | [`stdio_url`] |
//! | **HTTP front** (`--listen ADDR`) | [`http_child`] | [`http_url`] |
//!
//! Every shape reads each message through the same engine ([`crate::engine`]), and each
//! upstream byte through the [gate](crate::gate).

use std::process::ExitCode;

use crate::options::{Front, Options, Upstream};

#[cfg(feature = "http")]
mod http_child;
#[cfg(feature = "http")]
pub(crate) mod http_url;
pub(crate) mod stdio_child;
#[cfg(feature = "http")]
mod stdio_url;

/// Runs the shape the options ask for until it ends, and the exit status it ends with.
pub(crate) fn run(options: &Options) -> ExitCode {
    match (options.front(), options.upstream()) {
        (Front::Stdio, Upstream::Child(server)) => {
            let (input, output) = crate::front::stdio::client();
            stdio_child::serve(options, server, input, output)
        }
        #[cfg(feature = "http")]
        (Front::Stdio, Upstream::Remote(server)) => {
            on_runtime(|| stdio_url::serve(options, server))
        }
        #[cfg(feature = "http")]
        (Front::Http(front), Upstream::Remote(server)) => {
            on_runtime(|| http_url::serve(options, front, server))
        }
        #[cfg(feature = "http")]
        (Front::Http(front), Upstream::Child(server)) => {
            on_runtime(|| http_child::serve(options, front, server))
        }
    }
}

/// Runs an async shape on a runtime of its own: one thread for the network, which no message
/// crosses to another (the stdio sides read and write on threads of their own, as the stdio
/// shape does). A small call through a multi-threaded runtime took 5–10% longer, its tasks
/// handing each message between threads.
#[cfg(feature = "http")]
fn on_runtime<F: Future<Output = ExitCode>>(shape: impl FnOnce() -> F) -> ExitCode {
    match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime.block_on(shape()),
        Err(err) => {
            eprintln!("fence mcp: cannot start the async runtime: {err}");
            ExitCode::from(2)
        }
    }
}
