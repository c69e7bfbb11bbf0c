use fence_runtime::fence_boundary;

#[fence_boundary(tool = "web-fetch", tool = "web-get")]
fn web_fetch(url: &str) -> String {
    url.to_owned()
}

fn main() {}
