//! The trust derivation table of `fence_reference::trust`, typed: shared by `tests/trust.rs`
//! (which checks `TaskProvenance::derive` and `from_authenticated_sender` against it) and
//! `tests/derive_tasks.rs` (which fences a task payload under every row).

use std::sync::LazyLock;

use fence_runtime::{TaskOrigin, TaskProvenance, TrustClass};

/// (origin, the trust the sender inherited, the derived trust): 6 origins × 3 = 18 rows, read
/// from the reference's wire words.
pub static DERIVE: LazyLock<[(TaskOrigin, Option<TrustClass>, TrustClass); 18]> =
    LazyLock::new(|| {
        fence_reference::trust::DERIVE.map(|(origin, inherited, trust)| {
            let class = |word: &str| word.parse::<TrustClass>().expect("a reference trust class");
            (
                origin.parse().expect("a reference origin"),
                inherited.map(class),
                class(trust),
            )
        })
    });

/// The provenance a row of [`DERIVE`] describes, made through the public API: a sender's trust
/// reaches a `peer` or `completion` task only through `from_authenticated_sender`; every other
/// row is the origin's own trust, `derive`, whatever the sender said.
#[must_use]
pub fn provenance(origin: TaskOrigin, inherited: Option<TrustClass>) -> TaskProvenance {
    match (origin, inherited) {
        (TaskOrigin::Peer | TaskOrigin::Completion, Some(_)) => {
            TaskProvenance::from_authenticated_sender(origin, inherited)
        }
        _ => TaskProvenance::derive(origin),
    }
}
