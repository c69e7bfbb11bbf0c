//! The `mcp_session` oracle (`fence_checks::mcp_session`) on sessions made from random bytes:
//! the same generator and the same invariants as the fuzz target, as a property test that
//! shrinks a failure to a short session. The panic message shows the session as a
//! transcript; `fence_checks::mcp_session::transcript` writes one for the regression corpus.
#![cfg(feature = "std")]

use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 600,
        max_shrink_iters: 4096,
        ..ProptestConfig::default()
    })]

    #[test]
    fn every_generated_session_keeps_the_invariants(
        data in proptest::collection::vec(any::<u8>(), 0..1500),
    ) {
        fence_checks::mcp_session::check(&data);
    }
}
