use fence_runtime::Fenced;

#[derive(serde::Serialize, Fenced)]
#[fence]
struct Page {
    body: String,
}

fn main() {}
