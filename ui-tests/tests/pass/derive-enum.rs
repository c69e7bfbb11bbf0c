use fence_runtime::{Fenced, Source};

#[derive(serde::Serialize, Fenced)]
enum Status {
    Up,
    Down { reason: String },
}

#[derive(Fenced)]
enum Reply {
    Text(#[fence(content)] String),
    Rows {
        #[fence(content)]
        rows: Vec<u32>,
    },
}

fn main() {
    let source = Source::tool("t");
    assert_eq!(Status::Up.fence(&source).unwrap().content(), r#""Up""#);
    let down = Status::Down { reason: "x".into() };
    assert_eq!(down.fence(&source).unwrap().content(), r#"{"Down":{"reason":"x"}}"#);
    assert_eq!(Reply::Text("t".into()).fence(&source).unwrap().content(), "t");
    assert_eq!(Reply::Rows { rows: vec![1] }.fence(&source).unwrap().content(), "[1]");
}
