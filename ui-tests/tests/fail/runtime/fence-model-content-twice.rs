use fence_runtime::{fence_value, Fenced, ModelContent, Source};

fn fence_again<T: Fenced>(value: &T) {
    let _ = fence_value(&Source::tool("again"), value);
}

fn main() {
    fence_again(&ModelContent::model_text("hi"));
}
