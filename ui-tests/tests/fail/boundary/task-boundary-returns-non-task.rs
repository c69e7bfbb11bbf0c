use fence_runtime::fence_boundary;

#[fence_boundary(task)]
fn next_email() -> String {
    String::from("hello")
}

fn main() {}
