use fence_runtime::Fenced;

#[derive(Fenced)]
#[fence(sorce = "web")]
struct Page {
    #[fence(content)]
    body: String,
}

fn main() {}
