use fence_runtime::Fenced;

#[derive(serde::Serialize, Fenced)]
#[fence(tool = "web\nfetch")]
struct Page {
    body: String,
}

fn main() {}
