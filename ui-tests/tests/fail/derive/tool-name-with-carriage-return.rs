use fence_runtime::Fenced;

#[derive(serde::Serialize, Fenced)]
#[fence(tool = "web\rfetch")]
struct Page {
    body: String,
}

fn main() {}
