use fence_runtime::Fenced;

#[derive(serde::Serialize, Fenced)]
struct Page {
    #[fence(display)]
    body: String,
}

fn main() {}
