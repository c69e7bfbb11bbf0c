use fence_runtime::Fenced;

struct Opaque;

#[derive(Fenced)]
struct Page {
    #[fence(content)]
    body: Opaque,
}

fn main() {}
