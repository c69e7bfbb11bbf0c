use fence_runtime::{TaskOrigin, TaskProvenance, TrustClass};

fn main() {
    let _provenance = TaskProvenance {
        origin: TaskOrigin::Event,
        trust: TrustClass::Trusted,
    };
}
