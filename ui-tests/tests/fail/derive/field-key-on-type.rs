use fence_runtime::Fenced;

#[derive(Fenced)]
#[fence(content)]
struct Page {
    body: String,
}

fn main() {}
