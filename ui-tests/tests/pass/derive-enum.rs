use fence_runtime::{fence_value, Fenced, Source};

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
    assert_eq!(fence_value(&source, &Status::Up).unwrap().content(), r#""Up""#);
    let down = Status::Down { reason: "x".into() };
    assert_eq!(fence_value(&source, &down).unwrap().content(), r#"{"Down":{"reason":"x"}}"#);
    assert_eq!(fence_value(&source, &Reply::Text("t".into())).unwrap().content(), "t");
    assert_eq!(fence_value(&source, &Reply::Rows { rows: vec![1] }).unwrap().content(), "[1]");
}
