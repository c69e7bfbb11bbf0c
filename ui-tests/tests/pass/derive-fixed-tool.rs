use fence_runtime::{Fenced, ToolOutput};

#[derive(serde::Serialize, Fenced)]
#[fence(tool = "web-fetch")]
struct FetchResult {
    status: u16,
}

fn main() {
    let output = ToolOutput::from(FetchResult { status: 200 });
    assert_eq!(output.content().fence_source(), Some("tool:web-fetch"));
}
