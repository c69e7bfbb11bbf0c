use fence_runtime::fence_boundary;

#[fence_boundary]
struct WebFetch {
    url: String,
}

fn main() {}
