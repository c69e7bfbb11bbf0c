use fence_runtime::Fenced;

#[derive(Fenced)]
struct Page {
    #[fence(content)]
    title: String,
    #[fence(content)]
    body: String,
}

fn main() {}
