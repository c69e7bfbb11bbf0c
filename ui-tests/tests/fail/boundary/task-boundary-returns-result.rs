use fence_runtime::{fence_boundary, Fenced, TaskOrigin, TaskProvenance};

#[derive(Fenced)]
#[fence(task)]
struct Email {
    #[fence(provenance)]
    provenance: TaskProvenance,
    #[fence(content)]
    body: String,
}

#[fence_boundary(task)]
fn next_email() -> Result<Email, std::io::Error> {
    Ok(Email {
        provenance: TaskProvenance::derive(TaskOrigin::Event),
        body: std::fs::read_to_string("inbox/next.eml")?,
    })
}

fn main() {}
