use fence_runtime::{fence_value, Fenced, ModelContent, Source, TaskProvenance};

#[derive(Fenced)]
#[fence(task, sauce = "email")]
struct InboundEmail {
    #[fence(provenance)]
    provenance: TaskProvenance,
    #[fence(content)]
    body: String,
}

fn deliver(email: InboundEmail) -> ModelContent {
    // Uses of the type compile: only the attribute error above is reported.
    let _ = fence_value(&Source::tool("mail"), &email);
    ModelContent::task_payload(&email)
}

fn main() {
    let _ = deliver;
}
