use fence_runtime::fence_boundary;

#[fence_boundary]
const fn version() -> &'static str {
    "1.0"
}

fn main() {}
