use fence_runtime::{fence_value, Fenced, Source};

#[derive(serde::Serialize, Fenced)]
struct Pair(u8, u8);

#[derive(serde::Serialize, Fenced)]
struct Nothing;

#[derive(Fenced)]
struct Text(#[fence(content)] String);

fn main() {
    let source = Source::tool("t");
    assert_eq!(fence_value(&source, &Pair(1, 2)).unwrap().content(), "[1,2]");
    assert_eq!(fence_value(&source, &Nothing).unwrap().content(), "null");
    assert_eq!(fence_value(&source, &Text("x".into())).unwrap().content(), "x");
}
