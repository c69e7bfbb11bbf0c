// A body that does not parse, as in an editor mid-edit: one error, at the body's own tokens.
// The signature is still rewritten, so callers that use the `ToolOutput` add none.
use fence_runtime::{fence_boundary, ToolOutput};

#[fence_boundary]
fn web_fetch(url: &str) -> String {
    let page = ;
    format!("{url}{page}")
}

fn main() {
    let output: ToolOutput = web_fetch("https://example.com");
    assert!(!output.is_error());
}
