// An alias hides the name from the macro; the types still refuse it.
use fence_runtime::{fence_boundary, ModelContent};

type Failure = ModelContent;

#[fence_boundary]
fn read_file(path: &str) -> Result<String, Failure> {
    Err(ModelContent::refusal(path))
}

fn main() {}
