use fence_runtime::Fenced;

#[derive(Fenced)]
#[fence(task)]
struct InboundEmail {
    #[fence(provenance)]
    provenance: String,
    #[fence(content)]
    body: String,
}

fn main() {}
