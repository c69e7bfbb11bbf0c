use fence_runtime::Fenced;

#[derive(Fenced)]
enum Reply {
    Text(#[fence(content)] String),
    Empty,
}

fn main() {}
