use fence_runtime::{Fenced, TaskProvenance};

#[derive(Fenced)]
#[fence(task)]
struct InboundEmail {
    #[fence(provenance, content)]
    provenance: TaskProvenance,
}

fn main() {}
