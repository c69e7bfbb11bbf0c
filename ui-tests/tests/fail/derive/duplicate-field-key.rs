use fence_runtime::Fenced;

#[derive(Fenced)]
struct Page {
    #[fence(content, content)]
    body: String,
}

fn main() {}
