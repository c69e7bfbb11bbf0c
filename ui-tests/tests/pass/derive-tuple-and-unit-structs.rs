use fence_runtime::{Fenced, Source};

#[derive(serde::Serialize, Fenced)]
struct Pair(u8, u8);

#[derive(serde::Serialize, Fenced)]
struct Nothing;

#[derive(Fenced)]
struct Text(#[fence(content)] String);

fn main() {
    let source = Source::tool("t");
    assert_eq!(Pair(1, 2).fence(&source).unwrap().content(), "[1,2]");
    assert_eq!(Nothing.fence(&source).unwrap().content(), "null");
    assert_eq!(Text("x".into()).fence(&source).unwrap().content(), "x");
}
