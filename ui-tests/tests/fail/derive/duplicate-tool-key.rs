use fence_runtime::Fenced;

#[derive(serde::Serialize, Fenced)]
#[fence(tool = "web-fetch", tool = "web-get")]
struct Page {
    body: String,
}

fn main() {}
