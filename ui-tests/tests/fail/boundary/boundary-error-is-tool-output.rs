#[fence_runtime::fence_boundary]
fn read_file(path: &str) -> Result<String, fence_runtime::ToolOutput> {
    Err(fence_runtime::ToolOutput::refusal(path))
}

fn main() {}
