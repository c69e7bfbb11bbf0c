use fence_runtime::{Fenced, TaskProvenance};

#[derive(Fenced)]
#[fence(task)]
struct InboundEmail {
    #[fence(provenance)]
    provenance: TaskProvenance,
    #[fence(provenance)]
    forwarded_from: TaskProvenance,
    #[fence(content)]
    body: String,
}

fn main() {}
