use fence_runtime::{fence_boundary, ToolOutput};

#[fence_boundary]
fn web_fetch(url: &str) -> String {
    url.to_owned()
}

#[fence_boundary(tool = "describe")]
pub(crate) fn describe<T: std::fmt::Debug>(value: T) -> String
where
    T: Clone,
{
    format!("{value:?}")
}

fn main() {
    let output: ToolOutput = web_fetch("u");
    assert_eq!(output.content().fence_source(), Some("tool:web-fetch"));
    assert_eq!(describe(1).content().fence_source(), Some("tool:describe"));
}
