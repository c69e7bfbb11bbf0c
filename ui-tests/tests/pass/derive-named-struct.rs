use fence_runtime::{Fenced, Source};

#[derive(serde::Serialize, Fenced)]
struct FetchResult {
    status: u16,
    body: String,
}

fn main() {
    let block = FetchResult { status: 200, body: "ok".into() }
        .fence(&Source::tool("web-fetch"))
        .unwrap();
    assert_eq!(block.content(), r#"{"status":200,"body":"ok"}"#);
}
