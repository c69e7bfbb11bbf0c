use fence_runtime::{fence_value, Fenced, Source};

#[derive(serde::Serialize, Fenced)]
struct FetchResult {
    status: u16,
    body: String,
}

fn main() {
    let block = fence_value(
        &Source::tool("web-fetch"),
        &FetchResult { status: 200, body: "ok".into() },
    )
        .unwrap();
    assert_eq!(block.content(), r#"{"status":200,"body":"ok"}"#);
}
