use fence_runtime::Fenced;

#[derive(serde::Serialize, Fenced)]
enum Reply {
    #[fence(content)]
    Text(String),
}

fn main() {}
