use fence_runtime::{Fenced, TaskProvenance};

#[derive(Fenced)]
struct InboundEmail {
    #[fence(provenance)]
    provenance: TaskProvenance,
    #[fence(content)]
    body: String,
}

fn main() {}
