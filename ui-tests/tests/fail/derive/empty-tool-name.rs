use fence_runtime::Fenced;

#[derive(serde::Serialize, Fenced)]
#[fence(tool = "")]
struct Page {
    body: String,
}

fn main() {}
