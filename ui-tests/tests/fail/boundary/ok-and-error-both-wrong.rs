// Each half of the `Result` is reported at its own type, with its own fix.
use fence_runtime::fence_boundary;

#[derive(serde::Serialize)]
struct Forecast {
    sky: String,
}

#[derive(Debug)]
struct Offline;

#[fence_boundary]
fn weather(city: &str) -> Result<Forecast, Offline> {
    if city.is_empty() {
        return Err(Offline);
    }
    Ok(Forecast { sky: city.to_owned() })
}

fn main() {}
