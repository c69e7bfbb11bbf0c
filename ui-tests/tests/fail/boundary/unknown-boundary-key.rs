use fence_runtime::fence_boundary;

#[fence_boundary(sorce = "web")]
fn web_fetch(url: &str) -> String {
    url.to_owned()
}

fn main() {}
