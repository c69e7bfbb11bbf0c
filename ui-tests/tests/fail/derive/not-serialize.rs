use fence_runtime::Fenced;

#[derive(Fenced)]
struct Page {
    body: String,
}

fn main() {}
