use fence_runtime::Fenced;

#[derive(serde::Serialize, Fenced)]
#[fence(tool = "web fetch")]
struct Page {
    body: String,
}

fn main() {}
