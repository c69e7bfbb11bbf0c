use fence_runtime::fence_boundary;

struct Point {
    x: i32,
    y: i32,
}

#[fence_boundary]
fn patterns(Point { x, y }: Point, (a, _): (u8, u8), _: ()) -> String {
    format!("{x},{y},{a}")
}

#[fence_boundary]
fn impl_trait(items: impl IntoIterator<Item = impl ToString>) -> String {
    items.into_iter().map(|item| item.to_string()).collect()
}

#[fence_boundary]
fn mutable(mut count: u32) -> String {
    count += 1;
    count.to_string()
}

fn main() {
    assert!(patterns(Point { x: 1, y: 2 }, (3, 4), ()).content().as_str().contains("\n1,2,3\n"));
    assert!(impl_trait([1, 2]).content().as_str().contains("\n12\n"));
    assert!(mutable(1).content().as_str().contains("\n2\n"));
}
