use fence_runtime::{fence_boundary, ModelContent};

#[fence_boundary]
fn web_fetch(url: &str) -> ModelContent {
    ModelContent::model_text(url)
}

fn main() {}
