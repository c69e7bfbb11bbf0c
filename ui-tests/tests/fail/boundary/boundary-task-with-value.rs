use fence_runtime::fence_boundary;

#[fence_boundary(task = "email")]
fn next_email() -> String {
    String::new()
}

fn main() {}
