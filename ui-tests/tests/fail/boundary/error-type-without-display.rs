use fence_runtime::fence_boundary;

#[derive(Debug)]
struct Failure;

#[fence_boundary]
fn read_file(path: &str) -> Result<String, Failure> {
    if path.is_empty() {
        return Err(Failure);
    }
    Ok(path.to_owned())
}

fn main() {}
