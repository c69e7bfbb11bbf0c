// A `ToolOutput` is not `Display`, so it cannot be fenced twice; its text is
// `.content().as_str()`. The message is rustc's own; `ToolOutput`'s docs say it.
use fence_runtime::fence_boundary;

#[fence_boundary]
fn web_fetch(url: &str) -> Result<String, std::io::Error> {
    Ok(url.to_owned())
}

fn main() {
    println!("{}", web_fetch("https://example.com"));
}
