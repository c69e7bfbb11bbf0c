// The boundary rewrote `web_fetch` to return a `ToolOutput`: it is not a `Result` any more, so
// `?` does not apply (the error is inside, `is_error()`). What the compiler says about `?` is
// rustc's own; `ToolOutput`'s docs say what the boundary rewrote.
use fence_runtime::fence_boundary;

#[fence_boundary]
fn web_fetch(url: &str) -> Result<String, std::io::Error> {
    Ok(url.to_owned())
}

fn summarise(url: &str) -> Result<usize, std::io::Error> {
    let page = web_fetch(url)?;
    Ok(page.len())
}

fn main() {}
