use std::fmt::Display;

use fence_runtime::{fence_value, Fenced, Source};

#[derive(serde::Serialize, Fenced)]
struct Page<'a, T, const N: usize>
where
    T: Clone,
{
    title: &'a str,
    items: Vec<T>,
    #[serde(skip)]
    capacity: [(); N],
}

#[derive(Fenced)]
struct Content<T> {
    #[fence(content)]
    body: T,
}

#[derive(Fenced)]
#[fence(display)]
struct Shown<T: Display>(T);

impl<T: Display> Display for Shown<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

fn main() {
    let source = Source::tool("t");
    let page = Page { title: "a", items: vec![1, 2], capacity: [(); 2] };
    assert_eq!(fence_value(&source, &page).unwrap().content(), r#"{"title":"a","items":[1,2]}"#);
    assert_eq!(fence_value(&source, &Content { body: "b" }).unwrap().content(), "b");
    assert_eq!(fence_value(&source, &Shown(3)).unwrap().content(), "3");
}
