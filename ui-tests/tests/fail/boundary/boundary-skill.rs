use fence_runtime::fence_boundary;

#[fence_boundary(skill)]
fn triage_skill() -> String {
    String::from("# Triage\nRead the newest issue first.")
}

fn main() {}
