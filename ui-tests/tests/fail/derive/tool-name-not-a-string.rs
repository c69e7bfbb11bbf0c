use fence_runtime::Fenced;

#[derive(serde::Serialize, Fenced)]
#[fence(tool = web_fetch)]
struct Page {
    body: String,
}

fn main() {}
