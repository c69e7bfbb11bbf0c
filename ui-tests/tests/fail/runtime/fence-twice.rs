use fence_runtime::{fence, Fenced, Source};

fn main() {
    let block = fence(&Source::tool("web-fetch"), "<p>hi</p>");
    let _twice = block.fence(&Source::tool("web-fetch"));
}
