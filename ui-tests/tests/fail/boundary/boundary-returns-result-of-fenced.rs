use fence_runtime::{fence, fence_boundary, FencedBlock, Source};

#[fence_boundary]
fn web_fetch(url: &str) -> Result<FencedBlock, std::io::Error> {
    Ok(fence(&Source::tool("web-fetch"), url))
}

fn main() {}
