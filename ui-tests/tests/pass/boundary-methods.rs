use fence_runtime::fence_boundary;

struct Store(Vec<String>);

impl Store {
    #[fence_boundary]
    fn list(&self) -> String {
        self.0.join(",")
    }

    #[fence_boundary]
    fn push(&mut self, item: String) -> String {
        self.0.push(item);
        self.0.len().to_string()
    }

    #[fence_boundary]
    fn consume(self) -> String {
        self.0.concat()
    }

    #[fence_boundary]
    fn associated() -> &'static str {
        "no receiver"
    }
}

fn main() {
    let mut store = Store(vec![]);
    assert!(store.push("a".into()).content().as_str().contains("\n1\n"));
    assert!(store.list().content().as_str().contains("\na\n"));
    assert!(Store::associated().content().as_str().contains("no receiver"));
    assert!(store.consume().content().as_str().contains("\na\n"));
}
