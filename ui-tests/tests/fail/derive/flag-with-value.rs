use fence_runtime::Fenced;

#[derive(Fenced)]
#[fence(display = true)]
struct Count(u32);

impl std::fmt::Display for Count {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}

fn main() {}
