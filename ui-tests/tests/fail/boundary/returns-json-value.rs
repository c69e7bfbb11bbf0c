use fence_runtime::fence_boundary;

#[fence_boundary]
fn weather(city: &str) -> serde_json::Value {
    serde_json::json!({ "city": city, "sky": "clear" })
}

fn main() {}
