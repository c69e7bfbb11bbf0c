use fence_runtime::fence_boundary;

#[fence_boundary(tool = "inbox", task)]
fn next_email() -> String {
    String::new()
}

fn main() {}
