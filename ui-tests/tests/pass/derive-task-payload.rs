use fence_runtime::{Fenced, ModelContent, TaskOrigin, TaskProvenance};

#[derive(Fenced)]
#[fence(task)]
struct InboundEmail {
    #[fence(provenance)]
    provenance: TaskProvenance,
    #[fence(content)]
    body: String,
}

#[derive(serde::Serialize, Fenced)]
#[fence(task)]
enum Inbound {
    Hook {
        #[serde(skip)]
        #[fence(provenance)]
        provenance: TaskProvenance,
        event: String,
    },
}

fn main() {
    let email = InboundEmail {
        provenance: TaskProvenance::derive(TaskOrigin::Event),
        body: "hi".into(),
    };
    assert_eq!(ModelContent::task_payload(&email).fence_source(), Some("task:event"));
    let hook = Inbound::Hook {
        provenance: TaskProvenance::derive(TaskOrigin::Peer),
        event: "push".into(),
    };
    assert_eq!(
        ModelContent::task_payload(&hook).as_str(),
        "<untrusted-content source=task:peer>\n{\"Hook\":{\"event\":\"push\"}}\n</untrusted-content>"
    );
}
