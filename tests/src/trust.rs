//! The trust derivation table of `fence_reference::trust`, typed: shared by `tests/trust.rs`
//! (which checks `TaskProvenance::derive` against it) and `tests/derive_tasks.rs` (which fences a
//! derived task payload under every row).

use std::sync::LazyLock;

use fence_runtime::{TaskOrigin, TrustClass};

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
