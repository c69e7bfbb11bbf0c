#![deny(warnings)]

use fence_runtime::fence_boundary;

/// Fetches a page.
#[tracing::instrument]
#[fence_boundary]
#[allow(clippy::needless_pass_by_value)]
#[cfg(not(any()))]
pub fn documented(url: String) -> String {
    url
}

#[fence_boundary]
#[tracing::instrument(ret)]
fn below(n: u32) -> String {
    n.to_string()
}

fn main() {
    assert_eq!(documented("u".into()).content().fence_source(), Some("tool:documented"));
    assert_eq!(below(1).content().fence_source(), Some("tool:below"));
}
