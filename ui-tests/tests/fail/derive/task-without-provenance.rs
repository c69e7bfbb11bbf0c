use fence_runtime::Fenced;

#[derive(Fenced)]
#[fence(task)]
struct InboundEmail {
    #[fence(content)]
    body: String,
}

fn main() {}
