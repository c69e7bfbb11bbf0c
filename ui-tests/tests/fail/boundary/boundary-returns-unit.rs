use fence_runtime::fence_boundary;

#[fence_boundary]
fn log_line(line: &str) -> () {
    println!("{line}");
}

fn main() {}
