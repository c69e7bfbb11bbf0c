// `Serialize` is derived, `Fenced` is not: the error names `Fenced`, not `Serialize`.
use fence_runtime::fence_boundary;

#[derive(serde::Serialize)]
struct Forecast {
    sky: String,
}

#[fence_boundary]
fn weather(city: &str) -> Result<Forecast, std::io::Error> {
    Ok(Forecast { sky: city.to_owned() })
}

fn main() {}
