//! The `mcp_session` oracle (`fence_checks::mcp_session`) on sessions made from random bytes:
//! the same generator and the same invariants as the fuzz target, as a property test that
//! shrinks a failure to a shorter session. The failure's message shows the session as a
//! transcript; `fence_checks::mcp_session::transcript` writes one for the regression corpus.
//!
//! 2,000 cases take about 5 s in a debug build on two idle cores; every mutation of the proxy
//! tried against this target (fuzz/README.md) failed within its first 100 sessions.
#![cfg(feature = "std")]

use std::cell::Cell;
use std::sync::Once;

use proptest::prelude::*;

/// While shrinking, every failing case panics: say one line for each, not the whole session,
/// and all of proptest's report of the case it shrank to. Only on the threads that ask for it:
/// the other tests of the binary keep the default report.
fn quiet_panics() {
    thread_local! {
        static QUIET_HERE: Cell<bool> = const { Cell::new(false) };
    }
    static QUIET: Once = Once::new();
    QUIET_HERE.with(|quiet| quiet.set(true));
    QUIET.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !QUIET_HERE.with(Cell::get) {
                return default(info);
            }
            let payload = info
                .payload()
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| info.payload().downcast_ref::<&str>().copied())
                .unwrap_or("");
            let location = info.location().map(ToString::to_string).unwrap_or_default();
            if payload.starts_with("Test failed") {
                // proptest's own report of the shrunk case: the whole session, and the input.
                eprintln!("panicked at {location}: {payload}");
            } else {
                eprintln!(
                    "panicked at {location}: {}",
                    payload.lines().next().unwrap_or("")
                );
            }
        }));
    });
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 2000,
        max_shrink_iters: 4096,
        ..ProptestConfig::default()
    })]

    #[test]
    fn every_generated_session_keeps_the_invariants(
        data in proptest::collection::vec(any::<u8>(), 0..1500),
    ) {
        quiet_panics();
        fence_checks::mcp_session::check(&data);
    }
}
