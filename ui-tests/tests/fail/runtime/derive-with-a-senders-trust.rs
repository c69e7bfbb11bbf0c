// A peer's trust read from a header it sent, handed to `derive`: before, this made the task
// trusted without any channel authenticating the sender. Only `from_authenticated_sender`
// takes a sender's trust; `derive` takes the origin alone.
use fence_runtime::{TaskOrigin, TaskProvenance, TrustClass};

fn main() {
    let trust_header = "trusted";
    let _peer = TaskProvenance::derive(TaskOrigin::Peer, trust_header.parse::<TrustClass>().ok());
    let _completion = TaskProvenance::derive(TaskOrigin::Completion, Some(TrustClass::Trusted));
}
