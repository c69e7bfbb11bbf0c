use fence_runtime::{fence, fence_boundary, Source, ToolOutput};

#[fence_boundary]
fn web_fetch(url: &str) -> ToolOutput {
    ToolOutput::ok(fence(&Source::tool("web-fetch"), url))
}

fn main() {}
