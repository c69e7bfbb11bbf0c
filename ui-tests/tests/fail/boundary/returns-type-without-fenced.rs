use fence_runtime::fence_boundary;

#[derive(serde::Serialize)]
struct Forecast {
    sky: String,
}

#[fence_boundary]
fn weather(city: &str) -> Forecast {
    Forecast { sky: city.to_owned() }
}

fn main() {}
