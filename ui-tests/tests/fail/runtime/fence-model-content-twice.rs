use fence_runtime::{Fenced, ModelContent, Source};

fn fence_again<T: Fenced>(value: &T) {
    let _ = value.fence(&Source::tool("again"));
}

fn main() {
    fence_again(&ModelContent::model_text("hi"));
}
