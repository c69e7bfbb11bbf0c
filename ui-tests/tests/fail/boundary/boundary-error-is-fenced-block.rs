use fence_runtime::{fence, fence_boundary, FencedBlock, Source};

#[fence_boundary]
fn read_file(path: &str) -> Result<String, FencedBlock> {
    Err(fence(&Source::tool("read-file"), path))
}

fn main() {}
