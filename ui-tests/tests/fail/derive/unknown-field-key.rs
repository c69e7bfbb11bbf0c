use fence_runtime::Fenced;

#[derive(Fenced)]
struct Page {
    #[fence(contents)]
    body: String,
}

fn main() {}
