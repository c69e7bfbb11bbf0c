use fence_runtime::fence_boundary;

#[fence_boundary(tool = "web>fetch")]
fn web_fetch(url: &str) -> String {
    url.to_owned()
}

fn main() {}
