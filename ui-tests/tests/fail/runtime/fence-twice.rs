use fence_runtime::{fence, fence_value, Source};

fn main() {
    let block = fence(&Source::tool("web-fetch"), "<p>hi</p>");
    let _twice = fence_value(&Source::tool("web-fetch"), &block);
}
