use fence_runtime::fence_boundary;

trait Tool {
    #[fence_boundary]
    fn call(&self, input: &str) -> String;
}

fn main() {}
