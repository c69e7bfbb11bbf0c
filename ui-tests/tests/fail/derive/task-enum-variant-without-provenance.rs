use fence_runtime::{Fenced, TaskProvenance};

#[derive(Fenced)]
#[fence(task)]
enum Inbound {
    Mail(#[fence(provenance)] TaskProvenance, #[fence(content)] String),
    Chat(#[fence(content)] String),
}

fn main() {}
