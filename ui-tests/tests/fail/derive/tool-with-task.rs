use fence_runtime::{Fenced, TaskProvenance};

#[derive(Fenced)]
#[fence(task, tool = "inbox")]
struct InboundEmail {
    #[fence(provenance)]
    provenance: TaskProvenance,
    #[fence(content)]
    body: String,
}

fn main() {}
