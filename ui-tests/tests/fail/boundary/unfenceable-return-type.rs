use fence_runtime::fence_boundary;

#[fence_boundary]
fn read_bytes(path: &str) -> Vec<u8> {
    path.as_bytes().to_vec()
}

fn main() {}
