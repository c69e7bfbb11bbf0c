//! The trust derivation table of DESIGN §2, written out by hand, shared by `tests/trust.rs`
//! (which checks `TaskProvenance::derive` against it) and `tests/derive_tasks.rs` (which fences a
//! derived task payload under every row).

use fence_runtime::TaskOrigin::{Completion, Event, Peer, Schedule, System, User};
use fence_runtime::TrustClass::{Trusted, Untrusted};
use fence_runtime::{TaskOrigin, TrustClass};

/// (origin, the trust the sender inherited, the derived trust): 6 origins × 3 = 18 rows.
pub const DERIVE: [(TaskOrigin, Option<TrustClass>, TrustClass); 18] = [
    (User, None, Trusted),
    (User, Some(Trusted), Trusted),
    (User, Some(Untrusted), Trusted),
    (Peer, None, Untrusted),
    (Peer, Some(Trusted), Trusted),
    (Peer, Some(Untrusted), Untrusted),
    (Schedule, None, Trusted),
    (Schedule, Some(Trusted), Trusted),
    (Schedule, Some(Untrusted), Trusted),
    (Event, None, Untrusted),
    (Event, Some(Trusted), Untrusted),
    (Event, Some(Untrusted), Untrusted),
    (Completion, None, Untrusted),
    (Completion, Some(Trusted), Trusted),
    (Completion, Some(Untrusted), Untrusted),
    (System, None, Trusted),
    (System, Some(Trusted), Trusted),
    (System, Some(Untrusted), Trusted),
];
