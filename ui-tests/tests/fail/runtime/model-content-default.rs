use fence_runtime::ModelContent;

fn main() {
    let _content = ModelContent::default();
}
