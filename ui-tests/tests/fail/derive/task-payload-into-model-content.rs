// A trusted task payload is the trusted-task exemption: unfenced. Through `From`, it reached
// the model as `request.into()`, which a grep for the exemptions' names missed. A task payload
// becomes model content through `ModelContent::task_payload(&payload)` (or a
// `#[fence_boundary(task)]` function), never through `From`.
use fence_runtime::{Fenced, ModelContent, TaskOrigin, TaskProvenance};

#[derive(Fenced)]
#[fence(task)]
struct OperatorRequest {
    #[fence(provenance)]
    provenance: TaskProvenance,
    #[fence(content)]
    request: String,
}

fn send_to_model(_: ModelContent) {}

fn main() {
    let request = OperatorRequest {
        provenance: TaskProvenance::derive(TaskOrigin::User),
        request: "Summarise my inbox.".into(),
    };
    send_to_model(request.into());
    let again = OperatorRequest {
        provenance: TaskProvenance::derive(TaskOrigin::User),
        request: "And reply to Bob.".into(),
    };
    send_to_model(ModelContent::from(again));
}
