use fence_runtime::fence_boundary;

#[fence_boundary]
async fn fetch(url: String) -> String {
    url
}

#[fence_boundary]
unsafe fn first_byte(ptr: *const u8) -> String {
    unsafe { *ptr }.to_string()
}

#[fence_boundary]
fn later(text: String) -> impl std::future::Future<Output = String> {
    async move { text }
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    assert_eq!(fetch("u".into()).await.content().fence_source(), Some("tool:fetch"));
    assert_eq!(later("l".into()).await.content().fence_source(), Some("tool:later"));
    let byte = 7_u8;
    let output = unsafe { first_byte(&raw const byte) };
    assert!(output.content().as_str().contains("\n7\n"));
}
