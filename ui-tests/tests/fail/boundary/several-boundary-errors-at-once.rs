use fence_runtime::fence_boundary;

#[fence_boundary(tool = "", task, colour = "red", skill)]
const fn handler() -> u32 {
    1
}

fn main() {}
