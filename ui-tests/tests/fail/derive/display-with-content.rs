use fence_runtime::Fenced;

#[derive(Fenced)]
#[fence(display)]
struct Page {
    #[fence(content)]
    body: String,
}

impl std::fmt::Display for Page {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.body)
    }
}

fn main() {}
