use fence_runtime::Fenced;

#[derive(Fenced)]
#[fence(display)]
struct Page {
    body: String,
}

fn main() {}
