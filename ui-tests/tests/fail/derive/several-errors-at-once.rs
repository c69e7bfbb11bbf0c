use fence_runtime::{Fenced, TaskProvenance};

#[derive(Fenced)]
#[fence(task, tool = "in box", colour = "red")]
struct InboundEmail {
    #[fence(provenance)]
    provenance: String,
    #[fence(content)]
    subject: String,
    #[fence(content)]
    body: String,
    #[fence(provenance)]
    forwarded: TaskProvenance,
}

fn main() {}
