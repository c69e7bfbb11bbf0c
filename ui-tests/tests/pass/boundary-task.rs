use fence_runtime::{fence_boundary, Fenced, ModelContent, TaskProvenance};

#[derive(Fenced)]
#[fence(task)]
struct InboundEmail {
    #[fence(provenance)]
    provenance: TaskProvenance,
    #[fence(content)]
    body: String,
}

#[fence_boundary(task)]
fn next_email(origin: Option<&str>) -> InboundEmail {
    InboundEmail {
        provenance: TaskProvenance::from_wire(origin),
        body: "hello".into(),
    }
}

fn main() {
    let content: ModelContent = next_email(Some("peer"));
    assert_eq!(content.fence_source(), Some("task:peer"));
}
