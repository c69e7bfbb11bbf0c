use fence_runtime::Fenced;

#[derive(Fenced)]
union Bits {
    int: u32,
    float: f32,
}

fn main() {}
