use fence_runtime::{fence_boundary, Fenced};

#[derive(serde::Serialize, Fenced)]
struct Hit {
    url: String,
}

#[fence_boundary]
fn search(query: &str) -> Result<Vec<Hit>, std::io::Error> {
    Ok(vec![Hit { url: query.to_owned() }])
}

fn main() {}
